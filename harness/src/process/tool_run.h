// Running an outside tool (redis-benchmark, pgbench) to its end, its output in a file: never a
// pipe, which never reaches EOF while a grandchild holds its write end (see process/child_process.h).
// The child is always reaped: on a timeout or Ctrl-C, ChildProcess::terminate() kills then waits.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "process/child_process.h"

namespace relab {

struct ToolExit {
    bool timed_out = false;
    std::optional<int> code;  // nullopt: ended by a signal or the timeout
};

// Runs the tool with stdout and stderr both in `out_path`. Ctrl-C stops it (Interrupted thrown
// once it is reaped).
ToolExit run_tool(ChildOptions o, const std::string& out_path, std::chrono::milliseconds timeout);

// A file's whole text ("" when it cannot be read).
std::string slurp_file(const std::string& path);

// "exited with status 1", "did not finish within 120 s", "was killed by a signal".
std::string tool_exit_text(const ToolExit& e, std::chrono::milliseconds timeout);

}  // namespace relab
