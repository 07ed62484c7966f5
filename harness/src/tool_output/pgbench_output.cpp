#include "tool_output/pgbench_output.h"

#include <regex>

namespace relab {

std::optional<double> parse_pgbench_tps(const std::string& out) {
    static const std::regex tps{R"(tps = ([0-9.]+))"};
    std::smatch m;
    if (std::regex_search(out, m, tps)) return std::stod(m[1].str());
    return std::nullopt;
}

}  // namespace relab
