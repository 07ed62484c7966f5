// The environment an exec role's program starts with: the lab's settings as RELAB_* variables
// (docs/your-code.md is their reference), then the scenario's own "env". Built from the same
// resolved settings relab's own roles receive, so a program and a built-in role of one lab run on
// the same stream, group, keys, table and costs.
#pragma once

#include <map>
#include <string>

#include "process/role_process.h"
#include "scenario/scenario.h"

namespace relab {

// The descriptor a program writes its optional JSON-lines trace to (RELAB_TRACE_FD).
inline constexpr int k_trace_fd = 3;

// The program's environment: `c` is the config relab's own role would get in its place.
std::map<std::string, std::string> program_env(const Scenario& s, const RoleConfig& c, const ExecSpec& e);

// The application_name a program's PostgreSQL connections carry (in RELAB_PG_URL and
// RELAB_PG_APPLICATION_NAME): how the write log's trigger tells whose write it saw.
std::string program_application_name(const std::string& actor);

// Every variable name program_env() sets for a role of this kind, sorted (the reference's check).
std::vector<std::string> program_env_names(const std::string& role);

}  // namespace relab
