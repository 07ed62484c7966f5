// The real backend's side of exec roles (scenario/exec_spec.h): whether this machine can run a
// lab's programs, starting one in its role's place, the start barrier they must meet, and what they
// printed. RealControl calls these; the environment is program_env.h's, what the servers show of
// them program_observer.h's.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clients/redis_client.h"
#include "ports/ports.h"
#include "process/role_process.h"
#include "scenario/scenario.h"

namespace relab {

// Why this machine cannot run the lab's programs (the interpreter is not on PATH, or the lab's
// check of its modules fails), with what to install; nullopt: it can. Each check runs once per run.
std::optional<std::string> program_skip_reason(const Scenario& s);

// The folder a program runs in: its "dir" (relative to the scenario file), or the folder holding
// the scenario's top "scenarios" folder.
std::string program_dir(const Scenario& s, const ExecSpec& e);

// Starts the program in the role's place (`c`: the config relab's own role would get): its
// environment, its output in `dir`/<actor>.out and stderr_path, its trace in trace_path (empty:
// none). Throws EnvironmentError saying what to do when it cannot start or names a missing file.
std::unique_ptr<RoleProcess> start_program_role(const Scenario& s, const RoleConfig& c, const ExecSpec& e,
                                                const std::string& dir, const std::string& stderr_path,
                                                const std::string& trace_path);

// Waits until every consumer of the lab is blocked in XREADGROUP on a connection named
// <prefix><actor> (what relab's producer waits for). Throws HarnessError naming the consumers not
// seen, with `why_not(actor)`: what is known of that one (it exited, and its last words). Returns
// early once `passed()` says the barrier was met already (relab's own producer published).
void wait_for_readers(RedisClient& admin, const Scenario& s, const std::string& prefix,
                      const std::function<std::string(const std::string&)>& why_not,
                      const std::function<bool()>& passed);

// What each program printed, as `observe` records of its actor at time `at_ns` (the last
// k_output_bytes of its stdout and of its stderr, when not empty).
inline constexpr size_t k_output_bytes = 2000;
std::vector<HistoryRecord> program_output_records(const std::string& actor, const std::string& stdout_path,
                                                  const std::string& stderr_path, int64_t at_ns);

}  // namespace relab
