// Helpers for tests that run the article's own scenario files on the simulator.
#pragma once

#include <string>

#include "run/sim_backend.h"
#include "scenario/scenario.h"

namespace relab::test {

inline Scenario scenario(const std::string& file) {
    return load_scenario(std::string(RELAB_SOURCE_DIR) + "/scenarios/" + file);
}

inline LabResult run_sim(const Scenario& s, int trials) {
    SimOptions o;
    o.trials = trials;
    return SimBackend(o).run(s);
}

}  // namespace relab::test
