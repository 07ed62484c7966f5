// A generated workload expanded: the orders and events a "generate" block stands for, with each
// event's job cost drawn from the lab's seed, and the shape the reports print (LoadSpec).
#pragma once

#include <cstdint>
#include <vector>

#include "scenario/stream_spec.h"
#include "scenario/workload_spec.h"

namespace relab {

struct GeneratedWorkload {
    std::vector<OrderSpec> orders;
    std::vector<EventSpec> events;
    LoadSpec load;
};

// Orders first_id..first_id+orders-1, each given every template event, listed order by order (so
// events due at the same time go out in that order); order k publishes them k arrival intervals
// after the template's at_ms. The same spec and seed give the same workload, costs included.
// The spec is one the loader checked (Described<GenerateSpec>::check).
GeneratedWorkload expand_generate(const GenerateSpec& g, uint64_t seed);

// The arrival interval in µs: every_ms, or 1 s / orders_per_s; 0 for a burst.
int64_t arrival_interval_us(const GenerateSpec& g);

}  // namespace relab
