#include "cli/bench_parts.h"

#include <iostream>

#include <fmt/format.h>

#include "real/redis_client.h"
#include "real/servers.h"
#include "real/temp_dir.h"
#include "run/bench_redis.h"
#include "run/bench_sim.h"
#include "run/redis_benchmark_tool.h"
#include "run/sim_backend.h"
#include "scenario/scenario.h"

namespace relab {

namespace {

// Throughput the simulator must reach with every core (issue 13).
constexpr double kSimTarget = 100000;

BenchFigure sim_figure(const Scenario& s, const SimBenchResult& r, const SimBenchResult* one_job, int all_jobs) {
    BenchFigure f;
    f.name = fmt::format("sim/{}/jobs:{}", s.id, r.jobs);
    f.iterations = r.simulated;
    f.real_time = r.simulated > 0 ? r.seconds * 1e6 / static_cast<double>(r.simulated) : 0;
    f.items_per_second = r.trials_per_second();
    f.raw["cpu_time"] = r.simulated > 0 ? r.cpu_seconds * 1e6 / static_cast<double>(r.simulated) : 0;
    if (one_job) {
        f.ratio = safe_ratio(r.trials_per_second(), one_job->trials_per_second());
        f.ratio_of = fmt::format("trials_per_s_jobs_{} / trials_per_s_jobs_1", r.jobs);
    }
    if (r.jobs == all_jobs) {  // the target is for the run with every thread asked for
        f.target = kSimTarget;
        f.target_kind = TargetKind::at_least;
        f.target_of = "items_per_second";
    }
    f.label = fmt::format("{:.0f} trials/s ({} trials in {:.3f} s, CPU {:.3f} s, wrong {}/{})", r.trials_per_second(),
                          r.simulated, r.seconds, r.cpu_seconds, r.wrong, r.total);
    f.measured = fmt::format(
        "Simulated trials of {} (checker included, reporters excluded) on {} thread{}, each with its own SimBackend "
        "and a range of the lab's trial seeds; trial 1 runs twice (the determinism self-check) and counts twice. "
        "cpu_time is the process's CPU time per trial: with N threads near N × real_time when each had a core.",
        s.id, r.jobs, r.jobs == 1 ? "" : "s");
    f.raw.update({{"jobs", r.jobs}, {"seconds", r.seconds}, {"cpu_seconds", r.cpu_seconds}, {"wrong", r.wrong},
                  {"total", r.total}});
    return f;
}

}  // namespace

std::vector<BenchFigure> measure_sim_part(const BenchOptions& o, int jobs) {
    RunOptions ro;
    ro.scenarios_dir = o.scenarios_dir;
    ro.labs = o.labs.empty() ? std::vector<std::string>{"08a-baseline", "08c-s4a"} : o.labs;
    const std::vector<Scenario> labs = select_labs(ro);
    std::vector<BenchFigure> out;
    std::cerr << fmt::format("relab bench sim: {} trials per lab, 1 thread{}\n", o.trials,
                             jobs > 1 ? fmt::format(" and {} threads", jobs) : "");
    for (const auto& s : labs) {
        if (auto reason = sim_skip_reason(s)) {
            std::cerr << fmt::format("  {:<16} skipped: {}\n", s.id, *reason);
            continue;
        }
        const SimBenchResult one = bench_sim_lab(s, o.trials, 1);
        out.push_back(sim_figure(s, one, nullptr, jobs));
        std::cerr << fmt::format("  {:<16} 1 thread:  {:>9.0f} trials/s  (wrong {}/{} = {:.1f}%)\n", s.id,
                                 one.trials_per_second(), one.wrong, one.total,
                                 one.total ? 100.0 * one.wrong / one.total : 0.0);
        if (jobs <= 1) continue;
        const SimBenchResult many = bench_sim_lab(s, o.trials, jobs);
        out.push_back(sim_figure(s, many, &one, jobs));
        std::cerr << fmt::format("  {:<16} {} threads: {:>9.0f} trials/s  (wrong {}/{})\n", s.id, many.jobs,
                                 many.trials_per_second(), many.wrong, many.total);
        // The same seeds on any number of threads give the same outcomes; a difference would mean
        // shared state between simulations (or a racy lab's until_wrong rule extending a range).
        if (many.wrong != one.wrong || many.total != one.total)
            std::cerr << fmt::format("  {:<16} WARNING: {} threads gave wrong {}/{}, 1 thread {}/{}\n", s.id, many.jobs,
                                     many.wrong, many.total, one.wrong, one.total);
    }
    return out;
}

void check_redis_tools() {
    find_binary("redis-server");
    find_redis_benchmark();
}

std::vector<BenchFigure> measure_redis_part(const BenchOptions& o, BenchContext& context) {
    check_redis_tools();  // before any server starts: nothing to clean up when one is missing
    TempDir work("relab-bench-");
    EmbeddedRedis server;  // its own loopback port; stopped and its folder removed on the way out
    RedisBenchmarkTool tool(find_redis_benchmark(), server.endpoint(), work.path());
    {
        RedisClient c(server.endpoint());
        context.redis_version = detect_redis_features(c).version;
    }
    context.redis_benchmark_version = tool.version();
    RedisBenchOptions ro;
    ro.requests = o.requests;
    ro.samples = o.samples;
    ro.repetitions = o.repetitions;
    ro.pipeline = o.pipeline;
    std::cerr << fmt::format("relab bench redis: redis-server {} on {}, {} requests × {} repetitions per figure\n",
                             context.redis_version.value_or("?"), server.endpoint().display(), o.requests,
                             o.repetitions);
    std::vector<BenchFigure> out = bench_round_trips(server.endpoint(), tool, ro);
    std::cerr << "  round trips done\n";
    for (auto& f : bench_receipt(server.endpoint(), tool, ro)) out.push_back(std::move(f));
    std::cerr << "  PING and receipt done\n";
    for (auto& f : bench_load(server.endpoint(), tool, ro)) out.push_back(std::move(f));
    std::cerr << "  load done\n";
    return out;
}

}  // namespace relab
