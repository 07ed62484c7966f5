// The scenarios folders. The only file of the cli layer that names the source tree (RELAB_SOURCE_DIR,
// set on it alone): the others, compiled as one unity batch, do not depend on where the checkout
// lives, so a compiler cache can share them between checkouts. Kept free of CLI11, so compiling it
// apart from the batch is cheap.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace relab {

std::string default_scenarios_dir() {
    if (const char* env = std::getenv("RELAB_SCENARIOS"); env && *env) return env;
    if (std::filesystem::is_directory("scenarios")) return "scenarios";
    return std::string(RELAB_SOURCE_DIR) + "/scenarios";
}

std::vector<std::string> named_only_scenario_dirs(const std::string& dir) {
    std::vector<std::string> out;
    for (const char* sub : {"load", "soak", "examples"})
        if (std::filesystem::is_directory(dir + "/" + sub)) out.push_back(dir + "/" + sub);
    return out;
}

}  // namespace relab
