// An exec role: the user's own program started as one of the lab's roles (scenario/exec_spec.h).
// It runs as relab's roles do, one process per role, but exec'd rather than forked from the role
// spawner: in a process group of its own that relab signals (kill, pause, resume) and the reaper
// kills, dying with relab (PR_SET_PDEATHSIG), its stdout and stderr in files the report quotes, and
// its optional trace on descriptor 3.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "process/role_spawner.h"

namespace relab {

struct ProgramStart {
    std::vector<std::string> argv;  // the program (looked up on PATH) and its arguments
    std::string dir;                // its working directory
    std::map<std::string, std::string> env;  // added to relab's environment
    std::string stdout_path;
    std::string stderr_path;
    std::string trace_path;  // appended to through descriptor 3; empty: no trace descriptor
};

// Starts the program. Throws EnvironmentError naming the program when it cannot be started (not
// on PATH, not executable, its directory missing).
std::unique_ptr<RoleProcess> spawn_program_role(const ProgramStart& start);

// The program as a shell would print it: "php examples/php/consumer.php".
std::string program_text(const std::vector<std::string>& argv);

}  // namespace relab
