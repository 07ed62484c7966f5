// One figure of `relab bench`, in google/benchmark's vocabulary: a name, its iterations and a time
// per iteration (real_time in time_unit), plus what relab adds: a ratio against a reference tool,
// the target that ratio (or the throughput) must reach, whether it did, and the raw figures it
// came from. Pure data and arithmetic: the measuring is in run/bench_*.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace relab {

// Which way a target points: a ratio must stay at or below it (relab no slower than the tool
// by more than 20%), or a figure must reach at least it (trials/s, a share of the tool's rate).
enum class TargetKind { at_most, at_least };

struct BenchFigure {
    std::string name;        // "redis/XADD", "receipt/p50", "sim/08a-baseline/jobs:2"
    int64_t iterations = 0;  // operations, samples or trials timed
    double real_time = 0;    // per iteration, in time_unit: always lower is better
    std::string time_unit = "us";
    std::string label;     // the raw figures for the text table: "relab 41.2 µs/op, redis-benchmark 38.0 µs/op"
    std::string measured;  // what exactly was timed, one sentence for the reader
    std::optional<double> ratio;  // relab ÷ reference (what it divides: ratio_of)
    std::string ratio_of;         // "relab_us / redis_benchmark_us"
    std::optional<double> items_per_second;
    std::optional<double> target;
    TargetKind target_kind = TargetKind::at_most;
    std::string target_of = "ratio";  // the field the target applies to: "ratio" or "items_per_second"
    nlohmann::json raw = nlohmann::json::object();  // every figure the ratio came from, by name

    // The value the target is checked against (ratio or items_per_second), if measured.
    std::optional<double> target_value() const;
    // nullopt when there is no target or nothing to check it against.
    std::optional<bool> met() const;
};

// Nearest-rank percentile (p in (0, 100]) of unsorted samples: the smallest sample with at least
// p% of the samples at or below it, so p99 of 2000 samples is the 1980th smallest. Throws
// std::invalid_argument for no samples or p outside (0, 100].
double percentile(std::vector<double> samples, double p);

// a ÷ b when both are finite and b > 0, else nullopt (a figure that was not measured).
std::optional<double> safe_ratio(double a, double b);

}  // namespace relab
