// `relab bench --json FILE`: the figures in google/benchmark's JSON shape, so its tools and
// habits apply ({"context": {...}, "benchmarks": [{"name", "iterations", "real_time",
// "time_unit", ...}]}), with relab's fields beside theirs: ratio, ratio_of, target, target_kind,
// target_of, met, measured and the raw figures.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/figure.h"

namespace relab {

struct BenchContext {
    std::string date;       // ISO 8601 with the UTC offset: "2026-05-02T14:03:11+00:00"
    std::string host_name;
    int num_cpus = 0;       // std::thread::hardware_concurrency()
    int jobs = 0;           // threads the simulator used (--jobs)
    std::string relab_commit;
    std::optional<std::string> redis_version;            // when a redis-server was started
    std::optional<std::string> redis_benchmark_version;  // when redis-benchmark ran
    std::string command;    // the bench command line, for whoever reads the file later
};

nlohmann::json bench_json(const BenchContext& context, const std::vector<BenchFigure>& figures);
nlohmann::json figure_json(const BenchFigure& f);

// The figures of a file written by bench_json (or by google/benchmark: name, iterations,
// real_time and time_unit are all it needs). Throws std::runtime_error naming what is missing.
std::vector<BenchFigure> figures_from_json(const nlohmann::json& doc);

}  // namespace relab
