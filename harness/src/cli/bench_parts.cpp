#include "cli/bench_parts.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "real/redis_client.h"
#include "real/servers.h"
#include "real/temp_dir.h"
#include "run/bench_redis.h"
#include "run/bench_sim.h"
#include "run/redis_benchmark_tool.h"
#include "run/sim_backend.h"
#include "run/tool_run.h"
#include "scenario/scenario.h"

namespace relab {

namespace {

std::string self_exe_path() {
    std::error_code ec;
    auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) throw std::runtime_error("cannot find the relab executable: " + ec.message());
    return p.string();
}

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

std::optional<BenchFigure> bench_noop_load_lab(const BenchOptions& o, RedisBenchmarkTool& tool, const std::string& work);

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
    if (auto f = bench_noop_load_lab(o, tool, work.path())) out.push_back(std::move(*f));
    return out;
}

// load/noop_jobs: the S1 load lab (scenarios/load, one producer, one consumer) with every job free
// and every order sent at once, run by `relab run` as a user runs it (its own redis-server and
// PostgreSQL), its events applied per second against redis-benchmark XADD with the same one client
// and no pipelining on the bench's server: what a consumer's round trips (XREADGROUP, UPDATE,
// XACK) and relab's history cost next to a bare XADD.
std::optional<BenchFigure> bench_noop_load_lab(const BenchOptions& o, RedisBenchmarkTool& tool, const std::string& work) {
    RunOptions ro;
    ro.scenarios_dir = o.scenarios_dir;
    ro.labs = {"load-s1"};
    std::vector<Scenario> labs;
    try {
        labs = select_labs(ro);
    } catch (const std::exception& e) {
        std::cerr << "  load/noop_jobs skipped: " << e.what() << "\n";
        return std::nullopt;
    }
    nlohmann::json doc = labs.front().source;
    const int orders = std::max(1, o.requests / 6);  // 3 events per order: half the requests in events
    doc["id"] = "bench-noop-load";
    doc["generate"]["orders"] = orders;
    doc["generate"]["arrival"] = "burst";
    doc["generate"]["job_cost"] = {{"dist", "fixed"}, {"ms", 0}};
    doc["generate"].erase("slow_jobs");
    doc["expect"] = {{"wrong", "none"}, {"lost", 0}};
    const std::string file = work + "/noop-load.json", report = work + "/noop-load.out.json";
    {
        std::ofstream out(file);
        out << doc.dump(2);
    }
    ChildOptions c;
    c.exe = self_exe_path();
    c.args = {"run", file, "--quiet", "--timelines", "none", "--json", report};
    const auto timeout = std::chrono::milliseconds(600000);
    const ToolExit e = run_tool(c, work + "/noop-load.log", timeout);
    if (!e.code || *e.code != 0)
        throw std::runtime_error("load/noop_jobs: relab run " + tool_exit_text(e, timeout) + ": " + slurp_file(work + "/noop-load.log"));
    const nlohmann::json run = nlohmann::json::parse(slurp_file(report));
    const nlohmann::json& load = run.at("labs").at(0).at("trials").at(0).at("load");
    const double relab = load.at("events_per_s").get<double>();
    const double rb = tool.run({"XADD", "bench:noop:rb", "*", "order", "1", "type", "paid", "v", "1"}, o.requests, 1, 1).rps;
    BenchFigure f;
    f.name = "load/noop_jobs";
    f.iterations = load.at("events").get<int64_t>();
    f.real_time = relab > 0 ? 1e6 / relab : 0;
    f.items_per_second = relab;
    f.ratio = safe_ratio(relab, rb);
    f.ratio_of = "load_lab_events_per_s / redis_benchmark_xadd_per_s";
    f.target = kLoadTarget;
    f.target_kind = TargetKind::at_least;
    f.label = fmt::format("load-s1, no-op jobs: {:.0f} events/s applied; redis-benchmark {:.0f} XADD/s", relab, rb);
    f.measured = fmt::format(
        "`relab run` of load-s1 with {} orders × 3 events sent at once and every job free (0 ms): events applied per "
        "second (first XADD to last write; 1 producer, 1 consumer, each event XREADGROUP + UPDATE + XACK, every step "
        "recorded), against `redis-benchmark -c 1 -P 1 -n {} XADD <key> * order 1 type paid v 1` on the bench's server.",
        orders, o.requests);
    f.raw = {{"load_lab_events_per_s", relab},
             {"redis_benchmark_xadd_per_s", rb},
             {"events", load.at("events")},
             {"latency_p50_us", load.at("latency_p50_us")},
             {"clients", 1},
             {"pipeline", 1}};
    return f;
}

}  // namespace relab
