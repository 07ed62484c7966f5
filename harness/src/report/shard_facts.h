// S2's sharded labs, as every report shows them: where the router put each order's events, the
// reshard, the orders that ended wrong and the stale overwrites that made them, and the
// throughput. Pure functions of a trial's recorded history and final rows.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "check/outcome.h"

namespace relab {

struct ShardTrialFacts {
    std::map<std::string, int> entries_per_stream;  // ok publishes per stream
    std::optional<nlohmann::json> reshard;          // the router's reshard record's data
    std::vector<int64_t> wrong_orders;              // orders whose final status is not the expected one
    std::vector<std::string> shard_map;             // "orders:{0} → slot 13907 on 127.0.0.1:7003" (real)
    // Jobs written and the last write's time from the origin (the pace every stream lab reports,
    // check/outcome.h); nullopt without a write.
    std::optional<std::pair<int64_t, int64_t>> pace;
};
ShardTrialFacts shard_facts(const Scenario& s, const TrialOutcome& t);

// "routed orders:{0} 201 · orders:{1} 199 · …; reshard 3 → 4 before event 301 (drained first: waited
// 812 ms), 150 of 200 orders moved; 12 orders wrong (#4, #17, …); 600 events in 812 ms = 739 events/s"
std::string shard_facts_text(const ShardTrialFacts& f, size_t orders);

// S2 under a shard's failover: for each shard, one `observe` record of what it went through from
// the kill of shard k's master (the shard_failover fault's invoke) to the promotion (+switch_ms):
// "killed" (this is shard k), "published" (ok publishes), "failed_publishes", "applied_in_outage"
// (writes of its events within that window), "max_wait_ms" (over its events, the first write's
// time after the first publish attempt's), "max_gap_ms" (the longest stretch of the window with no
// write of its events, the window's edges included), "lost" (published ok, never written) and "redelivered"
// (receives beyond one per entry). Empty when the history has no shard_failover that succeeded.
std::vector<HistoryRecord> shard_outage_records(const Scenario& s, const std::vector<HistoryRecord>& history);

// The trial with its history cut to what explains it: the router's and relab's own records, and
// every record of the first few orders that ended wrong (or of the first order when none did).
TrialOutcome shard_focus(const Scenario& s, const TrialOutcome& t, size_t orders_shown = 2);

}  // namespace relab
