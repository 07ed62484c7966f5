#include "bench/bench_compare.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

namespace relab {

namespace {

double unit_in_ns(const std::string& unit) {
    if (unit == "ns") return 1;
    if (unit == "us") return 1e3;
    if (unit == "ms") return 1e6;
    if (unit == "s") return 1e9;
    throw std::runtime_error("unknown time unit \"" + unit + "\" (expected ns, us, ms or s)");
}

std::optional<double> change_pct(double old_time, double new_time) {
    if (old_time == 0) return std::nullopt;
    return (new_time - old_time) / old_time * 100.0;
}

}  // namespace

double to_unit(double value, const std::string& from, const std::string& to) {
    return value * unit_in_ns(from) / unit_in_ns(to);
}

BenchComparison compare_benchmarks(const std::vector<BenchFigure>& old_run, const std::vector<BenchFigure>& new_run) {
    // A name repeated in one file (google/benchmark's repetitions) compares its first entry.
    std::map<std::string, const BenchFigure*> old_by_name;
    for (const auto& f : old_run) old_by_name.emplace(f.name, &f);
    BenchComparison c;
    std::set<std::string> seen;
    for (const auto& f : new_run) {
        if (!seen.insert(f.name).second) continue;
        auto it = old_by_name.find(f.name);
        if (it == old_by_name.end()) {
            c.only_new.push_back(f.name);
            continue;
        }
        const BenchFigure& o = *it->second;
        const double old_time = to_unit(o.real_time, o.time_unit, f.time_unit);
        c.both.push_back(BenchChange{f.name, f.time_unit, old_time, f.real_time, change_pct(old_time, f.real_time),
                                     o.ratio, f.ratio});
    }
    for (const auto& f : old_run)
        if (!seen.count(f.name) && std::find(c.only_old.begin(), c.only_old.end(), f.name) == c.only_old.end())
            c.only_old.push_back(f.name);
    return c;
}

}  // namespace relab
