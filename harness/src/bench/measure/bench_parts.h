// The two parts `relab bench` measures: the simulator's trials/s (no server) and the Redis figures
// (on a throwaway redis-server of its own, stopped and removed before the function returns,
// whether it returns or throws).
#pragma once

#include <vector>

#include "bench/bench_json.h"
#include "bench/figure.h"
#include "cli/commands.h"

namespace relab {

// The labs' trials/s with one thread and with o.jobs (default every core). Throws for an unknown lab.
std::vector<BenchFigure> measure_sim_part(const BenchOptions& o, int jobs);
// Round trips, receipt and load figures against redis-benchmark; fills the context's versions.
// Throws EnvironmentError (missing redis-server or redis-benchmark, no free port) before any
// measuring, with what to do.
std::vector<BenchFigure> measure_redis_part(const BenchOptions& o, BenchContext& context);
// The machine's own speed (bench/measure/bench_machine.h): a random memory read and a JSON record, no target.
std::vector<BenchFigure> measure_machine_part();
// S2 and S3 at 1, 2 and 4 consumers on servers of its own (bench/measure/bench_scale.cpp).
std::vector<BenchFigure> measure_scale_part(const BenchOptions& o);
// Looks up redis-server and redis-benchmark; throws EnvironmentError naming what to install.
void check_redis_tools();

}  // namespace relab
