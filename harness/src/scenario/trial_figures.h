// A trial's figures under load and in a soak, as plain structs described once (describe/describe.h):
// each field's key in the JSON report, its unit, what it means and, for those an expectation may
// bound ("load": {"hol_ms": {...}}, "soak": {"kills": {...}}), the figure's name, and for those
// the load and soak tables set side by side, tabled(). The report's writer and reader, the tables'
// JSON, the figure names the loader accepts and the figure each band is checked against are all
// walked from these descriptions. They sit here, below the checker that computes them
// (check/load_stats.h, check/soak_stats.h), because the expectation names their figures.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "describe/describe.h"

namespace relab {

// A stream trial's figures under load, per trial. Every time is measured from the records, never
// from the scenario's plan.
struct LoadStats {
    int64_t events = 0;
    double events_per_s = 0;
    int64_t latency_p50_us = 0;
    int64_t latency_p99_us = 0;
    int64_t latency_max_us = 0;
    int slots = 0;
    double utilisation_pct = 0;
    int64_t hol_ms = -1;
    int64_t hol_events = 0;
    int64_t hol_blocked = 0;
    int64_t wrong_orders = 0;
    int64_t span_us = 0;
    bool operator==(const LoadStats&) const = default;
};

// hol_blocked over hol_events, in percent, rounded (0 without a slow job or an event behind it).
int64_t hol_blocked_pct(const LoadStats& l);

// The first few entries of a soak trial's classes: the report's "examples" object.
struct SoakExamples {
    std::vector<std::string> recovered;  // entry ids given back after a kill
    bool operator==(const SoakExamples&) const = default;
};

// A soak trial's figures, per trial.
struct SoakStats {
    // The history has relab's reading of the group (a soak lab's trial); a report carries the soak
    // object only then.
    bool measured = false;
    int64_t kills = 0;
    int64_t restarts = 0;
    int64_t fault_failures = 0;
    int64_t recovered = 0;
    int64_t pending = -1;
    int64_t undelivered = -1;
    bool deadline_passed = false;
    int64_t deadline_ms = 0;
    int64_t end_ms = 0;
    SoakExamples examples;
    bool operator==(const SoakStats&) const = default;
};

// The figure a "load" band names (load_figure_names(), scenario.h), as an integer: percent and
// per-second figures rounded, latencies in milliseconds; nullopt for another name.
std::optional<int64_t> load_figure(const LoadStats& l, std::string_view name);
// The figure a "soak" band names (soak_figure_names()), deadline_passed as 0 or 1; nullopt for
// another name, or for pending/undelivered when the group was not read.
std::optional<int64_t> soak_figure(const SoakStats& s, std::string_view name);

namespace desc {

template <>
struct Described<LoadStats> {
    static constexpr std::string_view doc = "A stream trial's figures under load, from its history.";
    static constexpr auto fields = std::tuple{
        field("events", &LoadStats::events, "Published entries that some job wrote (the latency samples).")
            .bound()
            .tabled(),
        field("events_per_s", &LoadStats::events_per_s,
              "Written entries over the span from the first publish to the last write.")
            .of(Unit::per_s)
            .bound()
            .tabled(),
        field("latency_p50_us", &LoadStats::latency_p50_us,
              "Per entry, its first write minus its ok publish (XADD to applied): the median.")
            .of(Unit::us)
            .bound_as("latency_p50_ms", Unit::ms)
            .tabled(),
        field("latency_p99_us", &LoadStats::latency_p99_us, "The same latency's 99th percentile.")
            .of(Unit::us)
            .bound_as("latency_p99_ms", Unit::ms)
            .tabled(),
        field("latency_max_us", &LoadStats::latency_max_us, "The same latency's maximum.")
            .of(Unit::us)
            .bound_as("latency_max_ms", Unit::ms)
            .tabled(),
        field("slots", &LoadStats::slots,
              "Actors that wrote: consumers, or S3's workers (the parallelism the strategy had).")
            .tabled(),
        field("utilisation_pct", &LoadStats::utilisation_pct,
              "The entries' job times (first write minus the job's start: its receive, or S3's take) over slots "
              "times the span: how much of the run the slots were busy.")
            .of(Unit::percent)
            .bound()
            .tabled(),
        field("hol_ms", &LoadStats::hol_ms,
              "The lab's slow jobs: the longest an event of another order, published while a slow job ran, waited "
              "from its publish to its own job's start (head-of-line blocking); -1 without a slow job.")
            .of(Unit::ms)
            .bound()
            .tabled(),
        field("hol_events", &LoadStats::hol_events, "Events of other orders published while a slow job ran.").bound(),
        field("hol_blocked", &LoadStats::hol_blocked,
              "Of hol_events, those that started only after the slow job ended: what one long job holds up. S1 "
              "holds them all, S2 the events of its own shard (about 1/N), S3 none. Bounded as their share.")
            .bound_as("hol_blocked_pct", Unit::percent, &hol_blocked_pct),
        field("wrong_orders", &LoadStats::wrong_orders, "Orders in a wrong final state.").bound().tabled(),
        field("span_us", &LoadStats::span_us, "From the first publish to the last write.").of(Unit::us),
    };
};

template <>
struct Described<SoakExamples> {
    static constexpr std::string_view doc = "The first few entries of each class.";
    static constexpr auto fields = std::tuple{
        field("recovered", &SoakExamples::recovered, "Entry ids received again while no ack of them had come."),
    };
};

template <>
struct Described<SoakStats> {
    static constexpr std::string_view doc =
        "A soak trial's figures, from its history: what the nemesis did, what the consumer group gave back after "
        "the kills, and what it held at the end (relab's own reading of the server, the trial's last record).";
    static constexpr auto fields = std::tuple{
        field("kills", &SoakStats::kills,
              "Scheduled faults (the lab's own, not relab's stop at a deadline) that SIGKILLed a running role: kill "
              "ok, or restart ok that found it running (killed: true).")
            .bound()
            .tabled(),
        field("restarts", &SoakStats::restarts, "Scheduled restarts of a role done: a new process under the same name.")
            .bound()
            .tabled(),
        field("fault_failures", &SoakStats::fault_failures,
              "Scheduled faults that failed (phase fail: the target was not running, ...).")
            .bound()
            .tabled(),
        field("recovered", &SoakStats::recovered,
              "Entries received again while no ack of them had come: the group giving back what a dead (or stalled) "
              "consumer held; an entry counts once however often it came back.")
            .bound()
            .tabled(),
        field("pending", &SoakStats::pending, "The group's PEL at the trial's end (XINFO GROUPS); -1 when not read.")
            .bound()
            .unmeasured_below_zero()
            .tabled(),
        field("undelivered", &SoakStats::undelivered,
              "Entries after the group's last-delivered-id at the end; -1 when not read.")
            .bound()
            .unmeasured_below_zero()
            .tabled(),
        field("deadline_passed", &SoakStats::deadline_passed, "The soak's deadline came before the group drained.")
            .bound()
            .tabled(),
        field("deadline_ms", &SoakStats::deadline_ms, "The soak's deadline, from the trial's origin.")
            .of(Unit::ms)
            .tabled(),
        field("end_ms", &SoakStats::end_ms, "When relab read the group, from the trial's origin.").of(Unit::ms).tabled(),
        field("examples", &SoakStats::examples, "The first few entries of each class."),
    };
};

}  // namespace desc

}  // namespace relab
