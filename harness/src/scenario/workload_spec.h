// A stream lab's workload when it is generated rather than listed, its soak and the simulator's
// timing, as plain data with each struct's description (describe/describe.h). "generate" is kept as
// the file gave it, so that a lab written back to JSON stays a few lines; the loader expands it into
// the orders and events every role reads (scenario/generate.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "describe/describe.h"
#include "util/enum_names.h"

namespace relab {

// One event every generated order gets, at_ms after the order's own start.
struct GeneratedEvent {
    std::string type;
    int64_t version = 0;
    int64_t at_ms = 0;
    bool operator==(const GeneratedEvent&) const = default;
};

// How generated orders arrive: all at once ("burst": orders_per_s 0), or at a steady rate.
struct ArrivalSpec {
    // steady: order k arrives k / orders_per_s after the first; poisson: the gaps are exponential
    // with that mean, drawn from the lab's seed (a Poisson process: bursts and lulls at the same rate).
    enum class Process { steady, poisson };
    int64_t orders_per_s = 0;
    Process process = Process::steady;
    bool operator==(const ArrivalSpec&) const = default;
};
inline constexpr EnumName<ArrivalSpec::Process> k_arrival_processes[] = {{ArrivalSpec::Process::steady, "steady"},
                                                                         {ArrivalSpec::Process::poisson, "poisson"}};
constexpr const auto& enum_names(ArrivalSpec::Process) { return k_arrival_processes; }

// Each generated event's job cost, drawn from the lab's seed: fixed, uniform in [min, max], or
// log-normal through its p50 and p99. Milliseconds, fractions kept to the microsecond.
struct JobCostSpec {
    enum class Dist { fixed, uniform, lognormal };
    Dist dist = Dist::fixed;
    std::optional<double> ms, min_ms, max_ms, p50_ms, p99_ms;
    bool operator==(const JobCostSpec&) const = default;
};
inline constexpr EnumName<JobCostSpec::Dist> k_cost_dists[] = {{JobCostSpec::Dist::fixed, "fixed"},
                                                               {JobCostSpec::Dist::uniform, "uniform"},
                                                               {JobCostSpec::Dist::lognormal, "lognormal"}};
constexpr const auto& enum_names(JobCostSpec::Dist) { return k_cost_dists; }

// A long job in the stream (S1's head-of-line blocking): the generated event `type` of `order`.
struct SlowJob {
    int64_t order = 0;
    std::string type;
    int64_t ms = 0;
    bool operator==(const SlowJob&) const = default;
};

// "generate": orders first_id.., each given every template event; order k publishes them k arrival
// intervals after the template's at_ms.
struct GenerateSpec {
    int64_t orders = 1;
    int64_t first_id = 1;
    int64_t every_ms = 0;
    std::optional<ArrivalSpec> arrival;
    std::string expected_final = "paid";
    std::vector<GeneratedEvent> events;
    std::optional<JobCostSpec> job_cost;
    std::vector<SlowJob> slow_jobs;
    bool operator==(const GenerateSpec&) const = default;
};

// A generated workload's shape (the load labs) as the reports print it: how events arrive and
// what jobs cost; the events themselves carry their times and costs.
struct LoadSpec {
    bool enabled = false;
    std::string arrival;    // "burst" or "400 orders/s"
    std::string job_cost;   // "log-normal p50 0.2 ms, p99 2 ms", "fixed 0.5 ms", "uniform 0.1–1 ms"
    std::vector<SlowJob> slow_jobs;
    bool operator==(const LoadSpec&) const = default;
};

// A soak lab ("soak": {"drain_ms": N}): a long generated workload under a repeated fault, judged
// on its accounting. Its trial ends drained or, at the latest, drain_ms after its last event is
// due (counted from the trial's origin, the producer's start): what is left then is reported (the
// group's pending entries, those never delivered, the entries never processed) as the trial's
// result, not as a timeout. At the end relab reads the consumer group (XINFO GROUPS) into the
// history, and the run ends with the soak's accounting.
struct SoakSpec {
    bool enabled = false;
    int64_t drain_ms = 30000;
    bool operator==(const SoakSpec&) const = default;
};

// The timing the simulator draws where real servers and the OS would give it: uniform ranges in
// microseconds, drawn from the trial's seeded generator. Only the sim backend reads them. The
// defaults put S4a near the rate the real backend measures on one machine (about 1 in 4) and the
// article reports (3-8 of 20).
struct SimSpec {
    desc::Range rtt_us{50, 200};    // every port call: one network round trip (request half, reply half)
    desc::Range wakeup_us{20, 400};  // a process blocked in a read or a sleep running again
    desc::Range start_us{0, 2000};   // each role process starting, from the trial's beginning
    bool operator==(const SimSpec&) const = default;
};

namespace desc {

template <>
struct Described<GeneratedEvent> {
    static constexpr std::string_view doc = "A template event.";
    static constexpr auto fields = std::tuple{
        field("type", &GeneratedEvent::type, "The event's type (required).").must(),
        field("version", &GeneratedEvent::version, "Its business version (required).").at_least(0).must(),
        field("at_ms", &GeneratedEvent::at_ms, "Its time within the order, in milliseconds.")
            .in(0, 3'600'000)
            .of(Unit::ms),
    };
};

template <>
struct Described<ArrivalSpec> {
    static constexpr std::string_view doc = "A rate, steady or as a Poisson process.";
    static constexpr auto fields = std::tuple{
        field("orders_per_s", &ArrivalSpec::orders_per_s,
              "Orders per second (required); it must divide 1,000,000 µs evenly (e.g. 250, 400, 500, 1000).")
            .in(1, 1'000'000)
            .of(Unit::per_s)
            .must(),
        field("process", &ArrivalSpec::process,
              "steady: an order every 1/orders_per_s; poisson: exponential gaps with that mean, drawn from the "
              "lab's seed, so orders come in bursts and lulls at the same rate."),
    };
    static void check(const Object& o, ArrivalSpec& a);
};

// "burst", or {"orders_per_s": N}.
template <>
struct Codec<ArrivalSpec> {
    static ArrivalSpec read(const Reader& r, const json& v, const std::string& path, const Limits&, Read m) {
        if (v.is_string() && v.get<std::string>() == "burst") return ArrivalSpec{};
        return read_struct<ArrivalSpec>(r, v, path, m);
    }
    static json write(const ArrivalSpec& a, Write m) {
        return a.orders_per_s == 0 ? json("burst") : write_struct(a, m);
    }
    static void schema(ordered_json& p, const Limits&) {
        p["oneOf"] = ordered_json::array({ordered_json{{"const", "burst"}}, schema_object<ArrivalSpec>()});
    }
    static constexpr bool has_default = false;
};

template <>
struct Described<JobCostSpec> {
    static constexpr std::string_view def = "costDraw";
    static constexpr std::string_view doc =
        "Each generated event's job cost, drawn from the lab's seed: fixed (ms), uniform (min_ms..max_ms) or "
        "log-normal through its p50 and p99. Milliseconds may be fractional (kept to the microsecond), at most 60000.";
    static constexpr auto fields = std::tuple{
        field("dist", &JobCostSpec::dist, "fixed (the default), uniform or lognormal."),
        field("ms", &JobCostSpec::ms, "fixed: the cost, in milliseconds (0..60000, fractions allowed).")
            .in(0, 60000)
            .of(Unit::ms),
        field("min_ms", &JobCostSpec::min_ms, "uniform: the lower bound, in milliseconds (0..60000).")
            .in(0, 60000)
            .of(Unit::ms),
        field("max_ms", &JobCostSpec::max_ms, "uniform: the upper bound, in milliseconds (min_ms..60000).")
            .in(0, 60000)
            .of(Unit::ms),
        field("p50_ms", &JobCostSpec::p50_ms, "lognormal: the median, in milliseconds (> 0, at most 60000).")
            .in(0, 60000)
            .of(Unit::ms),
        field("p99_ms", &JobCostSpec::p99_ms, "lognormal: the 99th percentile, in milliseconds (p50_ms..60000).")
            .in(0, 60000)
            .of(Unit::ms),
    };
    static void check(const Object& o, JobCostSpec& c);
};

template <>
struct Described<SlowJob> {
    static constexpr std::string_view doc = "One slow job.";
    static constexpr auto fields = std::tuple{
        field("order", &SlowJob::order, "The generated order (first_id..first_id + orders - 1) (required).")
            .at_least(0)
            .must(),
        field("type", &SlowJob::type, "The type of one of its events (required).").must(),
        field("ms", &SlowJob::ms, "Its job cost, in milliseconds (required).").in(1, 600'000).of(Unit::ms).must(),
    };
};

template <>
struct Described<GenerateSpec> {
    static constexpr std::string_view def = "generate";
    static constexpr std::string_view doc =
        "A generated workload (the load labs) instead of \"orders\" and \"events\": orders first_id.., each given "
        "every template event, order k publishing them at k × the arrival interval after the template's at_ms.";
    static constexpr auto fields = std::tuple{
        field("orders", &GenerateSpec::orders, "How many orders (required). relab run --orders N overrides it.")
            .in(1, 100'000)
            .must()
            .example("[10000]"),
        field("first_id", &GenerateSpec::first_id,
              "The first generated order's id: the orders are first_id, first_id + 1, … first_id + orders - 1.")
            .at_least(0),
        field("every_ms", &GenerateSpec::every_ms,
              "An order every this many milliseconds; 0: all at once. Not with \"arrival\".").in(0, 60'000).of(Unit::ms),
        field("arrival", &GenerateSpec::arrival,
              "How orders arrive: \"burst\" (all at once) or {\"orders_per_s\": N}. Not with \"every_ms\".")
            .example(R"(["burst", {"orders_per_s": 400}])"),
        field("expected_final", &GenerateSpec::expected_final, "Every order's expected final status."),
        field("events", &GenerateSpec::events, "The events each order gets (required, at least one).")
            .must()
            .at_least_items(1)
            .example(R"([[{"type": "created", "version": 1}, {"type": "paid", "version": 2, "at_ms": 5}]])"),
        field("job_cost", &GenerateSpec::job_cost,
              "Each generated event's job cost, drawn from the lab's seed (the same costs on every run and in the "
              "simulator). Default: each event type's job_cost_ms, else 0.")
            .example(R"([{"dist": "lognormal", "p50_ms": 0.2, "p99_ms": 2}])"),
        field("slow_jobs", &GenerateSpec::slow_jobs, "Named events that get a long job (S1's head-of-line blocking).")
            .at_least_items(1)
            .example(R"([[{"order": 1, "type": "created", "ms": 500}]])"),
    };
    static void check(const Object& o, GenerateSpec& g);
};

template <>
struct Described<SoakSpec> {
    static constexpr std::string_view doc =
        "A soak lab (workload labs only): a long generated workload under a repeated fault, judged on every entry's "
        "fate. The trial ends drained, or at its deadline, drain_ms after the last event is due; past it faults stop, "
        "the producer is killed, and what the consumer group still holds is reported pending, never delivered and "
        "lost (the verdict breaks). Allows the \"soak\" bands of \"expect\".";
    static constexpr auto presence = &SoakSpec::enabled;
    static constexpr auto fields = std::tuple{
        field("drain_ms", &SoakSpec::drain_ms,
              "How long the trial may take to drain after its last event is due, in milliseconds; past it the trial "
              "ends and what is left is reported.")
            .in(1, 3'600'000)
            .of(Unit::ms),
    };
};

template <>
struct Described<SimSpec> {
    static constexpr std::string_view def = "sim";
    static constexpr std::string_view doc =
        "The timing the simulator (--backend sim) draws where real servers and the OS would give it: uniform ranges "
        "in microseconds. Only the simulator reads them.";
    static constexpr auto fields = std::tuple{
        field("rtt_us", &SimSpec::rtt_us, "[min, max] of one network round trip per port call, in microseconds.")
            .at_least(0)
            .of(Unit::us),
        field("wakeup_us", &SimSpec::wakeup_us, "[min, max] of a blocked process running again, in microseconds.")
            .at_least(0)
            .of(Unit::us),
        field("start_us", &SimSpec::start_us,
              "[min, max] of each role process starting, from the trial's beginning, in microseconds.")
            .at_least(0)
            .of(Unit::us),
    };
};

}  // namespace desc

}  // namespace relab
