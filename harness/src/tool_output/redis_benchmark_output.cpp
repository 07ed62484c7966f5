#include "tool_output/redis_benchmark_output.h"

#include <algorithm>
#include <regex>
#include <sstream>

namespace relab {

std::optional<RedisBenchmarkRow> parse_redis_benchmark_row(const std::string& out) {
    // "name", then quoted numbers to the end of the line. The name is the shortest prefix after
    // which only numeric fields follow, so a command with quotes or commas in it stays whole.
    static const std::regex row{R"re(^"(.*?)",("[0-9.]+"(?:,"[0-9.]+")*)\s*$)re"};
    static const std::regex number{R"re("([0-9.]+)")re"};
    // Progress lines end in a bare \r (each overwrites the last on a terminal): a line break too.
    std::string text = out;
    std::replace(text.begin(), text.end(), '\r', '\n');
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        std::smatch m;
        if (!std::regex_match(line, m, row)) continue;
        std::vector<double> v;
        const std::string fields = m[2].str();
        for (std::sregex_iterator it(fields.begin(), fields.end(), number), end; it != end; ++it) {
            try {
                v.push_back(std::stod((*it)[1].str()));
            } catch (const std::exception&) {
                v.clear();
                break;
            }
        }
        // The header row has no numbers; a row with neither 2 nor 8 fields is not redis-benchmark's.
        if (v.size() != 1 && v.size() != 7) continue;
        if (!(v[0] > 0)) return std::nullopt;
        RedisBenchmarkRow r;
        r.test = m[1].str();
        r.rps = v[0];
        if (v.size() == 7) {
            r.avg_ms = v[1];
            r.min_ms = v[2];
            r.p50_ms = v[3];
            r.p95_ms = v[4];
            r.p99_ms = v[5];
            r.max_ms = v[6];
        }
        return r;
    }
    return std::nullopt;
}

std::optional<std::string> parse_redis_benchmark_version(const std::string& out) {
    static const std::regex version{R"(redis-benchmark\s+v?=?([0-9]+\.[0-9]+(\.[0-9]+)?))"};
    std::smatch m;
    if (std::regex_search(out, m, version)) return m[1].str();
    return std::nullopt;
}

}  // namespace relab
