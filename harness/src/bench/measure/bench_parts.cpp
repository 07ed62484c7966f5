#include "bench/measure/bench_parts.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "clients/redis_client.h"
#include "servers/servers.h"
#include "process/temp_dir.h"
#include "bench/measure/bench_machine.h"
#include "bench/measure/bench_redis.h"
#include "bench/measure/bench_sim.h"
#include "process/redis_benchmark_tool.h"
#include "backend_sim/sim_backend.h"
#include "process/tool_run.h"
#include "process/child_process.h"
#include "scenario/scenario.h"

namespace relab {

namespace {

// What redis-benchmark's errors call the caller.
constexpr const char* kBenchWho = "relab bench";

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

std::vector<BenchFigure> measure_sim_part(const BenchOptions& o, int jobs, const LabPicker& pick) {
    const std::vector<Scenario> labs = pick(o.labs.empty() ? std::vector<std::string>{"08a-baseline", "08c-s4a"} : o.labs);
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

std::vector<BenchFigure> measure_machine_part() {
    constexpr size_t kBytes = size_t{64} << 20;  // beyond any last-level cache of a small machine
    const MachineProbe p = probe_machine(kBytes, 1'000'000, 50'000);
    std::cerr << fmt::format("relab bench machine: a random memory read {:.1f} ns, a JSON record {:.0f} ns\n", p.read_ns,
                             p.record_ns);
    const char* why =
        " Not relab's speed but the machine's: compare these two between bench files first, since every CPU-bound "
        "figure (the simulator's trials/s above all) moves with them.";
    BenchFigure read;
    read.name = "machine/memory_read";
    read.iterations = p.reads;
    read.real_time = p.read_ns;
    read.time_unit = "ns";
    read.label = fmt::format("{:.1f} ns per dependent random read over {} MB", p.read_ns, p.memory_bytes >> 20);
    read.measured = fmt::format("{} reads, each at the index the last one returned, through a seeded one-cycle "
                                "permutation of {} MB of 32-bit indices.{}",
                                p.reads, p.memory_bytes >> 20, why);
    read.raw = {{"memory_bytes", p.memory_bytes}, {"read_ns", p.read_ns}};
    BenchFigure record;
    record.name = "machine/json_record";
    record.iterations = p.records;
    record.real_time = p.record_ns;
    record.time_unit = "ns";
    record.label = fmt::format("{:.0f} ns per history-shaped JSON record built, dumped and parsed", p.record_ns);
    record.measured = fmt::format("{} records of 6 fields (one a nested event) built with nlohmann::json, written as "
                                  "text and parsed back: the kind of work a simulated trial is made of.{}",
                                  p.records, why);
    record.raw = {{"record_ns", p.record_ns}};
    return {read, record};
}

void check_redis_tools() {
    find_binary("redis-server");
    find_redis_benchmark(kBenchWho, "run `relab bench sim` alone");
}

std::vector<BenchFigure> bench_noop_load_lab(const BenchOptions& o, RedisBenchmarkTool& tool, const std::string& work,
                                            const LabPicker& pick);

std::vector<BenchFigure> measure_redis_part(const BenchOptions& o, BenchContext& context, const LabPicker& pick) {
    check_redis_tools();  // before any server starts: nothing to clean up when one is missing
    TempDir work("relab-bench-");
    EmbeddedRedis server;  // its own loopback port; stopped and its folder removed on the way out
    RedisBenchmarkTool tool(kBenchWho, find_redis_benchmark(kBenchWho), server.endpoint(), work.path());
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
    for (auto& f : bench_noop_load_lab(o, tool, work.path(), pick)) out.push_back(std::move(f));
    return out;
}

// load/noop_jobs: the S1 load lab (scenarios/load, one producer, one consumer) with every job free
// and every order sent at once, run by `relab run` as a user runs it (its own redis-server and
// PostgreSQL), its events applied per second against redis-benchmark XADD with the same one client
// and no pipelining on the bench's server: what a consumer's round trips and relab's history cost
// next to a bare XADD. Three times: with a consumer built for throughput (XREADGROUP COUNT 100, the
// read's UPDATEs in one transaction: write.commit "batch", one XACK per read: stream.ack
// "batch"), which the target is set for; the same with an autocommit UPDATE per event
// (write.commit "each"); and as the load labs ship (COUNT 1, an XACK per event), which shows what
// the three round trips per event cost.
namespace {

struct NoopRun {
    double events_per_s = 0;
    int64_t events = 0;
    double latency_p50_us = 0;
};

NoopRun run_noop_load_lab(nlohmann::json doc, int read_count, const std::string& ack, const std::string& commit,
                          const std::string& work) {
    doc["stream"]["read_count"] = read_count;
    doc["stream"]["ack"] = ack;
    doc["write"]["commit"] = commit;
    const std::string file = work + "/noop-load.json", report = work + "/noop-load.out.json";
    {
        std::ofstream out(file);
        out << doc.dump(2);
    }
    ChildOptions c;
    c.exe = self_executable();
    c.args = {"run", file, "--quiet", "--timelines", "none", "--json", report};
    const auto timeout = std::chrono::milliseconds(600000);
    const ToolExit e = run_tool(c, work + "/noop-load.log", timeout);
    if (!e.code || *e.code != 0)
        throw std::runtime_error("load/noop_jobs: relab run " + tool_exit_text(e, timeout) + ": " + slurp_file(work + "/noop-load.log"));
    const nlohmann::json run = nlohmann::json::parse(slurp_file(report));
    const nlohmann::json& load = run.at("labs").at(0).at("trials").at(0).at("load");
    return NoopRun{load.at("events_per_s").get<double>(), load.at("events").get<int64_t>(),
                   load.at("latency_p50_us").get<double>()};
}

// The median run of `runs` (by events/s).
NoopRun median_run(std::vector<NoopRun> runs) {
    std::sort(runs.begin(), runs.end(), [](const NoopRun& a, const NoopRun& b) { return a.events_per_s < b.events_per_s; });
    return runs[runs.size() / 2];
}

constexpr int kBatch = 100;  // the throughput consumer's XREADGROUP COUNT

// How a run's consumer reads, acknowledges and commits.
struct NoopConsumer {
    int read_count = 1;
    std::string ack;     // "batch" or "each"
    std::string commit;  // "batch" or "each"
};

// The scenario of load-s1; nullopt, said on stderr, when it cannot be read.
std::optional<Scenario> load_s1(const LabPicker& pick) {
    try {
        return std::move(pick({"load-s1"}).front());
    } catch (const std::exception& e) {
        std::cerr << "  load/noop_jobs skipped: " << e.what() << "\n";
        return std::nullopt;
    }
}

// load-s1's document with `orders` orders sent at once and every job free.
nlohmann::json noop_doc(const Scenario& lab, int orders) {
    nlohmann::json doc = lab.source;
    doc["id"] = "bench-noop-load";
    doc["generate"]["orders"] = orders;
    doc["generate"]["arrival"] = "burst";
    doc["generate"]["job_cost"] = {{"dist", "fixed"}, {"ms", 0}};
    doc["generate"].erase("slow_jobs");
    doc["expect"] = {{"wrong", "none"}, {"lost", 0}, {"duplicated", 0}};
    return doc;
}

// The consumer as the load labs ship it.
NoopConsumer shipped_consumer(const Scenario& lab) {
    return {lab.flow().stream.read_count, lab.flow().stream.ack == StreamSpec::Ack::batch ? "batch" : "each",
            to_string(lab.flow().write.commit)};
}

// The median of each run's repetitions, and redis-benchmark's XADD rate beside them.
struct NoopRuns {
    NoopRun batched, autocommit, shipped;
    std::vector<double> rb_rate;  // XADD/s, one a repetition
    double rb = 0;                // their median
};

// The three runs and redis-benchmark's XADD, alternating, o.repetitions times.
NoopRuns run_noop_repetitions(const nlohmann::json& doc, const NoopConsumer (&consumers)[3], const BenchOptions& o,
                              RedisBenchmarkTool& tool, const std::string& work) {
    std::vector<NoopRun> runs[3];
    NoopRuns out;
    for (int rep = 0; rep < o.repetitions; ++rep) {
        for (int i = 0; i < 3; ++i)
            runs[i].push_back(
                run_noop_load_lab(doc, consumers[i].read_count, consumers[i].ack, consumers[i].commit, work));
        out.rb_rate.push_back(
            tool.run({"XADD", "bench:noop:rb", "*", "order", "1", "type", "paid", "v", "1"}, o.requests, 1, 1).rps);
    }
    out.batched = median_run(runs[0]);
    out.autocommit = median_run(runs[1]);
    out.shipped = median_run(runs[2]);
    out.rb = percentile(out.rb_rate, 50);
    return out;
}

// What the three figures share: the run's events/s against redis-benchmark's XADD/s, and the
// consumer's settings in the raw figures.
BenchFigure noop_figure(std::string name, const NoopRun& r, const NoopConsumer& c, double rb) {
    BenchFigure x;
    x.name = std::move(name);
    x.iterations = r.events;
    x.real_time = r.events_per_s > 0 ? 1e6 / r.events_per_s : 0;
    x.items_per_second = r.events_per_s;
    x.ratio = safe_ratio(r.events_per_s, rb);
    x.ratio_of = "load_lab_events_per_s / redis_benchmark_xadd_per_s";
    x.raw = {{"load_lab_events_per_s", r.events_per_s},
             {"redis_benchmark_xadd_per_s", rb},
             {"events", r.events},
             {"latency_p50_us", r.latency_p50_us},
             {"read_count", c.read_count},
             {"ack", c.ack},
             {"commit", c.commit},
             {"clients", 1},
             {"pipeline", 1}};
    return x;
}

}  // namespace

std::vector<BenchFigure> bench_noop_load_lab(const BenchOptions& o, RedisBenchmarkTool& tool, const std::string& work,
                                            const LabPicker& pick) {
    const std::optional<Scenario> lab = load_s1(pick);
    if (!lab) return {};
    const int orders = std::max(1, o.requests / 6);  // 3 events per order: half the requests in events
    const NoopConsumer consumers[3] = {{kBatch, "batch", "batch"}, {kBatch, "batch", "each"}, shipped_consumer(*lab)};
    const NoopConsumer& shipped = consumers[2];
    const NoopRuns runs = run_noop_repetitions(noop_doc(*lab, orders), consumers, o, tool, work);
    const std::string compared = fmt::format(
        "against `redis-benchmark -c 1 -P 1 -n {} XADD <key> * order 1 type paid v 1` on the bench's server (the lab's "
        "one producer sends one XADD per event); median of {} alternating repetitions",
        o.requests, o.repetitions);

    BenchFigure f = noop_figure("load/noop_jobs", runs.batched, consumers[0], runs.rb);
    f.target = kLoadTarget;
    f.target_kind = TargetKind::at_least;
    f.label = fmt::format("load-s1, no-op jobs, COUNT {}, one transaction and one XACK per read: {:.0f} events/s applied; "
                          "redis-benchmark {:.0f} XADD/s",
                          kBatch, runs.batched.events_per_s, runs.rb);
    f.measured = fmt::format(
        "`relab run` of load-s1 with {} orders × 3 events sent at once and every job free (0 ms), its consumer reading "
        "XREADGROUP COUNT {}, sending the read's UPDATEs as one transaction in one round trip (\"write\": "
        "{{\"commit\": \"batch\"}}) and acknowledging the read with one XACK (\"stream\": {{\"ack\": \"batch\"}}): "
        "events applied per second (first XADD to last write; 1 producer, 1 consumer, every step recorded), {}.",
        orders, kBatch, compared);
    f.raw["redis_benchmark_rate_repetitions"] = runs.rb_rate;

    BenchFigure e = noop_figure("load/noop_jobs/commit:each", runs.autocommit, consumers[1], runs.rb);
    e.label = fmt::format("load-s1, no-op jobs, COUNT {}, an autocommit UPDATE per event, one XACK per read: {:.0f} "
                          "events/s applied; no target",
                          kBatch, runs.autocommit.events_per_s);
    e.measured = fmt::format(
        "the same run with each event's UPDATE its own autocommit statement and round trip (\"write\": {{\"commit\": "
        "\"each\"}}, as every other lab), {}. No target: beside load/noop_jobs it shows what a round trip and a "
        "commit per event cost.",
        compared);

    BenchFigure g = noop_figure(fmt::format("load/noop_jobs/count:{}", shipped.read_count), runs.shipped, shipped, runs.rb);
    g.label = fmt::format("load-s1 as shipped (COUNT {}, XACK {}), no-op jobs: {:.0f} events/s applied; no target",
                          shipped.read_count, shipped.ack, runs.shipped.events_per_s);
    g.measured = fmt::format(
        "the same run with the consumer as the load labs ship it: XREADGROUP COUNT {}, XACK {} (three round trips "
        "per event at COUNT 1), {}. No target: it shows what the round trips per event cost.",
        shipped.read_count, shipped.ack == "each" ? "after each event" : "once per read", compared);
    return {f, e, g};
}

}  // namespace relab
