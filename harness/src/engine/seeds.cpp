#include "engine/seeds.h"

#include <random>

#include <fmt/format.h>

#include "ports/seeded_rng.h"

namespace relab {

std::string new_run_id() {
    std::random_device rd;
    return fmt::format("{:08x}", rd());
}

uint64_t lab_seed(const Scenario& s, const std::optional<uint64_t>& override_seed) {
    return override_seed ? derive_seed(*override_seed, s.id) : s.seed;
}

uint64_t trial_seed(uint64_t lab_seed_value, int trial) {
    return derive_seed(lab_seed_value, static_cast<uint64_t>(trial));
}

}  // namespace relab
