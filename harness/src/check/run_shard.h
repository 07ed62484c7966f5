// One runner's share of a run's trials (`relab run --shard K/N`), and which trials keep their
// history: both decided by a trial's number alone, so N runners together run exactly the trials one
// would, and `relab merge` can keep exactly the histories one run would have kept.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "scenario/scenario.h"

namespace relab {

struct RunShard {
    int index = 1;  // 1..count
    int count = 1;
    bool whole() const { return count == 1; }
    // Trial numbers are dealt round-robin, so every shard gets a share of a lab's early and late trials.
    bool has(int trial) const { return (trial - 1) % count == index - 1; }
    bool operator==(const RunShard&) const = default;
};

// "K/N" with 1 <= K <= N; nullopt for anything else.
std::optional<RunShard> parse_run_shard(const std::string& text);
std::string to_string(const RunShard& s);

// Which trials keep their history and stream (for timelines): every trial of a small lab; of a long
// one, the first `keep_first` trials and the first `kept_wrong` wrong ones.
struct KeepRule {
    int keep_all_trials = 1000;     // a lab of at most this many trials...
    size_t keep_all_events = 20000;  // ...and at most this many events in all keeps every history
    int keep_first = 50;
    size_t kept_wrong = 10;
    size_t max_records = 20000;  // a trial with more records (a load trial) never keeps its history
};

class KeepPolicy {
public:
    KeepPolicy(const Scenario& s, int planned_trials, const KeepRule& rule);
    // Whether trial number `trial` keeps its history; called once per trial, in trial order.
    bool keeps(int trial, bool wrong, size_t records);

private:
    KeepRule m_rule;
    bool m_keep_all;
    size_t m_wrong_kept = 0;
};

}  // namespace relab
