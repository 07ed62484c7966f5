// The checker of the idempotency labs: counts from the orders table and the answers the clients
// got. Never asserts a count; a trial is "wrong" when it has a duplicate order or a leak, and the
// scenario's expectation says how many wrong trials the lab should have.
#pragma once

#include "check/outcome.h"

namespace relab {

// Orders beyond the first per idem_key; answers by source; leaks: a 2xx answer naming an order
// that belongs to another user than the one who asked.
IdemTrial count_idem_trial(const std::vector<HistoryRecord>& history, std::vector<PlacedOrder> orders);

// check_trial (history sorted, every_trial_has) plus the counts; wrong = duplicates or leaks.
TrialOutcome check_idem_trial(const Scenario& s, int trial, uint64_t seed, std::vector<HistoryRecord> history,
                              std::vector<PlacedOrder> orders);

// The figures each fault of the trial left, beside what the article documented for it (the fault's
// "documented", "note"): keys lost by a restart, kept by a failover, evicted by a flood, and how
// long a killed client's key kept answering 409. Read from the nemesis's records (times relative
// to the origin), so both backends measure the same way.
std::vector<Measurement> idem_fault_measurements(const Scenario& s, const std::vector<HistoryRecord>& history);

}  // namespace relab
