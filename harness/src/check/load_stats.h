// A stream trial's figures under load, from its history: what a user choosing between strategies
// compares side by side (throughput, latency, how busy the consumers were, and how long other
// orders queued behind one slow job). Pure functions of recorded data, like the accounting.
#pragma once

#include <cstdint>
#include <vector>

#include "ports/ports.h"
#include "scenario/scenario.h"
#include "scenario/trial_figures.h"

namespace relab {

// The trial's LoadStats (scenario/trial_figures.h: each field's doc says how it is taken), from its
// records: every time is measured from them, never from the scenario's plan.
LoadStats load_stats(const Scenario& s, const std::vector<HistoryRecord>& history, int64_t wrong_orders);
// Whether a trial of `s` gets its load figures: a generated workload with an arrival, job costs or
// slow jobs, or an expectation that bounds one. Not the other labs: the simulator checks thousands
// of their trials a second, and no report reads the figures of theirs.
bool wants_load_stats(const Scenario& s);

}  // namespace relab
