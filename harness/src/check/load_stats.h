// A stream trial's figures under load, from its history: what a user choosing between strategies
// compares side by side (throughput, latency, how busy the consumers were, and how long other
// orders queued behind one slow job). Pure functions of recorded data, like the accounting.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ports/ports.h"
#include "scenario/scenario.h"

namespace relab {

// Per trial. Every time is measured from the records, never from the scenario's plan.
//   events          published entries that some job wrote (the latency samples)
//   events_per_s    written entries / (last write - first publish)
//   latency_*_us    per entry: its first write - its ok publish (XADD to applied), p50 / p99 / max
//   slots           actors that wrote: consumers, or S3's workers (the parallelism the strategy had)
//   utilisation_pct sum over entries of (first write - the job's start: its receive, or S3's take),
//                   over slots × (last write - first publish): how much of the run the slots were busy
//   hol_ms          the lab's slow jobs (LoadSpec::slow_jobs): the longest an event of another order,
//                   published while a slow job ran, waited from its publish to its own job's start;
//                   the head-of-line blocking one long job causes. -1 without a slow job.
//   hol_events      how many events of other orders were published while a slow job ran
//   hol_blocked_pct of those, the share (percent, 0..100) that started only after the slow job
//                   ended: what one long job holds up. S1 holds them all, S2 the events of its own
//                   shard (about 1/N), S3 none.
//   wrong_orders    orders in a wrong final state
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
    int64_t hol_blocked = 0;  // of hol_events, those that started after the slow job's write
    int64_t wrong_orders = 0;
    int64_t span_us = 0;  // first publish to last write
    bool operator==(const LoadStats&) const = default;
};

LoadStats load_stats(const Scenario& s, const std::vector<HistoryRecord>& history, int64_t wrong_orders);
// Whether a trial of `s` gets its load figures: a generated workload with an arrival, job costs or
// slow jobs, or an expectation that bounds one. Not the other labs: the simulator checks thousands
// of their trials a second, and no report reads the figures of theirs.
bool wants_load_stats(const Scenario& s);

// The figure a "load" band names, as an integer (percent and per-second figures rounded), or
// nullopt for a name that is not one of load_figure_names() (scenario.h: the names a lab may bound).
std::optional<int64_t> load_figure(const LoadStats& l, const std::string& name);
// hol_blocked over hol_events, in percent (0 without a slow job or an event behind it).
int64_t hol_blocked_pct(const LoadStats& l);

}  // namespace relab
