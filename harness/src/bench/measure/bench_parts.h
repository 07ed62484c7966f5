// The two parts `relab bench` measures: the simulator's trials/s (no server) and the Redis figures
// (on a throwaway redis-server of its own, stopped and removed before the function returns,
// whether it returns or throws).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bench/bench_json.h"
#include "bench/bench_options.h"
#include "bench/figure.h"
#include "check/outcome.h"
#include "scenario/scenario.h"

namespace relab {

// The labs of `labs` (ids, part names or files) under o.scenarios_dir, every file validated, as
// `relab run` picks them; throws for an unknown lab. The command line passes its own selection in.
using LabPicker = std::function<std::vector<Scenario>(const std::vector<std::string>& labs)>;
// A lab run to its end on real servers (a real backend the command line opened).
using LabRunner = std::function<LabResult(const Scenario& lab)>;

// The labs' trials/s with one thread and with o.jobs (default every core). Throws for an unknown lab.
std::vector<BenchFigure> measure_sim_part(const BenchOptions& o, int jobs, const LabPicker& pick);
// Round trips, receipt and load figures against redis-benchmark; fills the context's versions.
// Throws EnvironmentError (missing redis-server or redis-benchmark, no free port) before any
// measuring, with what to do.
std::vector<BenchFigure> measure_redis_part(const BenchOptions& o, BenchContext& context, const LabPicker& pick);
// The machine's own speed (bench/measure/bench_machine.h): a random memory read and a JSON record, no target.
std::vector<BenchFigure> measure_machine_part();
// S2 and S3 at 1, 2 and 4 consumers (bench/measure/bench_scale.cpp): each of `templates` (load-s2,
// load-s3) varied and run by `run`.
std::vector<BenchFigure> measure_scale_part(const std::vector<Scenario>& templates, const BenchOptions& o,
                                            const LabRunner& run);
// Looks up redis-server and redis-benchmark; throws EnvironmentError naming what to install.
void check_redis_tools();

}  // namespace relab
