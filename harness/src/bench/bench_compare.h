// `relab bench --compare OLD.json`: each benchmark present in both runs, old against new. Every
// real_time is a time per iteration, so a negative change is faster and a positive one slower,
// whatever the figure (round trip, receipt latency, simulated trial).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/figure.h"

namespace relab {

struct BenchChange {
    std::string name;
    std::string time_unit;  // the new run's; the old time is converted to it
    double old_time = 0, new_time = 0;
    std::optional<double> change_pct;  // (new - old) / old × 100; nullopt when old is 0
    std::optional<double> old_ratio, new_ratio;
};

struct BenchComparison {
    std::vector<BenchChange> both;       // in the new run's order
    std::vector<std::string> only_old;   // names the new run lacks
    std::vector<std::string> only_new;   // names the old run lacks
};

// Times converted between google/benchmark's units (ns, us, ms, s). Throws std::runtime_error for
// another unit.
double to_unit(double value, const std::string& from, const std::string& to);

BenchComparison compare_benchmarks(const std::vector<BenchFigure>& old_run, const std::vector<BenchFigure>& new_run);

}  // namespace relab
