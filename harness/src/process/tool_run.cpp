#include "process/tool_run.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "util/interrupt.h"

namespace relab {

ToolExit run_tool(ChildOptions o, const std::string& out_path, std::chrono::milliseconds timeout) {
    using std::chrono::milliseconds;
    o.stdout_path = out_path;
    o.stderr_path = out_path;
    ChildProcess child(o);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!child.wait_for(milliseconds(20))) {
        throw_if_interrupted();  // the ChildProcess destructor kills and reaps it
        if (std::chrono::steady_clock::now() > deadline) {
            child.terminate();
            return {true, std::nullopt};
        }
    }
    return {false, child.exit_code()};
}

std::string slurp_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string tool_exit_text(const ToolExit& e, std::chrono::milliseconds timeout) {
    if (e.timed_out) return fmt::format("did not finish within {} s", timeout.count() / 1000);
    if (e.code) return fmt::format("exited with status {}", *e.code);
    return "was killed by a signal";
}

}  // namespace relab
