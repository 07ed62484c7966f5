// `relab bench scale`: how S2 and S3 scale with consumers on this machine. The load labs load-s2 and
// load-s3 are the templates; each runs here with 1, 2 and 4 consumers (S2: shards, one consumer
// each; S3: workers behind the one reader) under a backlog of fixed-cost jobs, so the consumers,
// not the arrival rate, set the pace. One run of each, on the servers relab starts itself (the
// command line opens the real backend and passes its run in).
#include <iostream>

#include <fmt/format.h>

#include "bench/measure/bench_parts.h"
#include "ports/ports.h"  // HarnessError
#include "scenario/loader/loader.h"
#include "util/interrupt.h"

namespace relab {

namespace {

constexpr int kConsumers[] = {1, 2, 4};
// A backlog: every event is due at once, and each job costs kJobMs, so one consumer caps near
// 1000 / kJobMs events/s and N consumers near N times that, until the machine's cores run out.
constexpr int kJobMs = 2;
constexpr int kOrdersPerSecond = 100000;

// The template with `consumers`, `orders` and the backlog: "s2" or "s3".
Scenario variant(const Scenario& base, const std::string& strategy, int consumers, int orders) {
    nlohmann::json doc = base.source;
    doc["id"] = fmt::format("scale-{}-{}", strategy, consumers);
    doc["generate"]["orders"] = orders;
    doc["generate"]["arrival"] = {{"orders_per_s", kOrdersPerSecond}};
    doc["generate"]["job_cost"] = {{"dist", "fixed"}, {"ms", kJobMs}};
    doc["generate"].erase("slow_jobs");
    if (strategy == "s2")
        doc["shard"]["streams"] = consumers;
    else
        doc["fanout"]["workers"] = consumers;
    doc["expect"] = {{"wrong", "none"}, {"lost", 0}, {"duplicated", 0}};
    doc.erase("mutants");
    return parse_scenario(doc.dump(), fmt::format("{} (relab bench scale, {} consumers)", base.file, consumers));
}

BenchFigure scale_figure(const std::string& strategy, int consumers, const LabResult& lab, double one_consumer) {
    const TrialOutcome& t = lab.trials.at(0);
    BenchFigure f;
    f.name = fmt::format("scale/{}/consumers:{}", strategy, consumers);
    f.iterations = t.load.events;
    f.items_per_second = t.load.events_per_s;
    f.real_time = t.load.events_per_s > 0 ? 1e6 / t.load.events_per_s : 0;
    f.label = fmt::format("{:.0f} events/s, {:.2f}× one consumer, p99 {:.1f} ms, {}", t.load.events_per_s,
                          one_consumer > 0 ? t.load.events_per_s / one_consumer : 0.0, t.load.latency_p99_us / 1000.0,
                          lab.held ? "held" : "BROKEN");
    f.measured = fmt::format(
        "{} with {} consumer{}: {} events, every one due at once, each job {} ms, on relab's own redis-server and "
        "PostgreSQL; events/s from the first XADD to the last write",
        strategy == "s2" ? "S2 (one stream and one consumer per shard, on a Redis Cluster)"
                         : "S3 (one reader, a FIFO per order, workers behind it)",
        consumers, consumers == 1 ? "" : "s", t.load.events, kJobMs);
    f.raw = {{"events_per_s", t.load.events_per_s}, {"latency_p99_us", t.load.latency_p99_us},
             {"utilisation_pct", t.load.utilisation_pct}, {"held", lab.held}};
    return f;
}

}  // namespace

std::vector<BenchFigure> measure_scale_part(const std::vector<Scenario>& templates, const BenchOptions& o,
                                            const LabRunner& run) {
    std::vector<BenchFigure> out;
    for (const auto& base : templates) {
        const std::string strategy = base.id == "load-s2" ? "s2" : "s3";
        double one = 0;
        for (int consumers : kConsumers) {
            throw_if_interrupted();
            const LabResult lab = run(variant(base, strategy, consumers, o.scale_orders));
            if (lab.trials.empty()) throw HarnessError(fmt::format("scale-{}-{}: no trial ran", strategy, consumers));
            if (consumers == 1) one = lab.trials[0].load.events_per_s;
            out.push_back(scale_figure(strategy, consumers, lab, one));
            std::cerr << fmt::format("  {:<24} {}\n", out.back().name, out.back().label);
        }
    }
    return out;
}

}  // namespace relab
