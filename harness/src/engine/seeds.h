// Where every seed of a run comes from: the run's root seed (--seed) or the scenario's, then one
// seed per trial, the same on both backends so a trial found on the simulator names its real twin.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "scenario/scenario.h"

namespace relab {

// A random run id: 8 lowercase hex characters; it names the run's key prefix and schema.
std::string new_run_id();
// The seed a lab runs with: the --seed override or the scenario's own.
uint64_t lab_seed(const Scenario& s, const std::optional<uint64_t>& override_seed);
uint64_t trial_seed(uint64_t lab_seed, int trial);

}  // namespace relab
