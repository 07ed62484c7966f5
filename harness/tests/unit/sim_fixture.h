// Helpers for tests that run the article's own scenario files on the simulator.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "run/sim_backend.h"
#include "scenario/scenario.h"

namespace relab::test {

inline Scenario scenario(const std::string& file) {
    return load_scenario(std::string(RELAB_SOURCE_DIR) + "/scenarios/" + file);
}

inline const std::string k_scenarios = std::string(RELAB_SOURCE_DIR) + "/scenarios/";

// A scenario file's JSON as written (comments allowed), for tests that edit it before loading.
inline nlohmann::json scenario_json(const std::string& file) {
    std::ifstream in(k_scenarios + file);
    std::stringstream text;
    text << in.rdbuf();
    return nlohmann::json::parse(text.str(), nullptr, true, /*ignore_comments=*/true);
}

inline LabResult run_sim(const Scenario& s, int trials) {
    SimOptions o;
    o.trials = trials;
    return SimBackend(o).run(s);
}

}  // namespace relab::test
