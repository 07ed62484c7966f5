// A soak trial's figures, from its history: how often the nemesis killed and restarted roles, what
// the consumer group gave back after the kills, and what the group held at the end (relab's own
// reading of the server, recorded as the trial's last record). Pure functions of recorded data,
// like the accounting and the load figures; with them they account for every published entry:
// processed (once or more), still pending in the group, never delivered, or lost.
#pragma once

#include <vector>

#include "ports/ports.h"
#include "scenario/trial_figures.h"

namespace relab {

// The trial's SoakStats (scenario/trial_figures.h: each field's doc says what it counts); its
// history in time order (the checker sorts it), times from the origin.
SoakStats soak_stats(const std::vector<HistoryRecord>& history);

}  // namespace relab
