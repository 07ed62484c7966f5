// Helpers for tests that run the article's own scenario files on the simulator.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "backend_sim/sim_backend.h"
#include "scenario/loader/loader.h"
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

// The error the loader raises for `doc` (as file "f.json"); fails the test when it is accepted.
inline ScenarioError load_error(const nlohmann::json& doc) {
    try {
        parse_scenario(doc.dump(), "f.json");
    } catch (const ScenarioError& e) {
        return e;
    }
    ADD_FAILURE() << "accepted: " << doc.dump();
    return ScenarioError("", "", "");
}

// The loader refuses `doc` at exactly `path`, with a reason that contains `reason_part`.
inline void expect_load_error(const nlohmann::json& doc, const std::string& path, const std::string& reason_part) {
    const ScenarioError e = load_error(doc);
    EXPECT_EQ(e.json_path(), path) << e.what();
    EXPECT_NE(e.reason().find(reason_part), std::string::npos) << e.what();
}

}  // namespace relab::test
