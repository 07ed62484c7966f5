// The scenario's "sim" block: the simulator's latency ranges, with defaults and validation.
#include <gtest/gtest.h>

#include "scenario/loader/loader.h"
#include "scenario/scenario.h"

namespace relab {

namespace sim_scenario_test {

nlohmann::json doc_with_sim(const nlohmann::json& sim) {
    auto doc = nlohmann::json::parse(R"({
        "id": "t-1", "title": "T", "kind": "workload",
        "orders": [ { "id": 42 } ],
        "events": [ { "order": 42, "type": "created", "version": 1 } ],
        "expect": { "wrong": "none" }
    })");
    if (!sim.is_null()) doc["sim"] = sim;
    return doc;
}

std::string error_path(const nlohmann::json& doc, std::string* reason = nullptr) {
    try {
        parse_scenario(doc.dump(), "f.json");
    } catch (const ScenarioError& e) {
        if (reason) *reason = e.reason();
        return e.json_path();
    }
    return "(accepted)";
}

TEST(SimScenarioTest, without_a_sim_block_the_defaults_apply) {
    const Scenario s = parse_scenario(doc_with_sim(nullptr).dump(), "f.json");
    const SimSpec d;
    EXPECT_EQ(s.sim.rtt_us.min, d.rtt_us.min);
    EXPECT_EQ(s.sim.rtt_us.max, d.rtt_us.max);
    EXPECT_EQ(s.sim.wakeup_us.min, d.wakeup_us.min);
    EXPECT_EQ(s.sim.wakeup_us.max, d.wakeup_us.max);
    EXPECT_LT(d.rtt_us.min, d.rtt_us.max);
    EXPECT_LT(d.wakeup_us.min, d.wakeup_us.max);
}

TEST(SimScenarioTest, ranges_are_read_in_microseconds) {
    const Scenario s = parse_scenario(
        doc_with_sim({{"rtt_us", {80, 300}}, {"wakeup_us", {0, 0}}, {"start_us", {10, 20}}}).dump(), "f.json");
    EXPECT_EQ(s.sim.rtt_us.min, 80);
    EXPECT_EQ(s.sim.rtt_us.max, 300);
    EXPECT_EQ(s.sim.wakeup_us.min, 0);
    EXPECT_EQ(s.sim.wakeup_us.max, 0);
    EXPECT_EQ(s.sim.start_us.min, 10);
    EXPECT_EQ(s.sim.start_us.max, 20);
    // Only the given range changes.
    const Scenario partial = parse_scenario(doc_with_sim({{"rtt_us", {1, 2}}}).dump(), "f.json");
    EXPECT_EQ(partial.sim.wakeup_us.max, SimSpec{}.wakeup_us.max);
}

TEST(SimScenarioTest, bad_ranges_name_the_json_path) {
    std::string reason;
    EXPECT_EQ(error_path(doc_with_sim({{"rtt_us", {300, 80}}}), &reason), "/sim/rtt_us");
    EXPECT_NE(reason.find("min <= max"), std::string::npos) << reason;
    EXPECT_EQ(error_path(doc_with_sim({{"wakeup_us", {-1, 5}}})), "/sim/wakeup_us/0");
    EXPECT_EQ(error_path(doc_with_sim({{"rtt_us", 100}})), "/sim/rtt_us");
    EXPECT_EQ(error_path(doc_with_sim({{"rtt_us", {1, 2, 3}}})), "/sim/rtt_us");
    EXPECT_EQ(error_path(doc_with_sim({{"jitter_us", {1, 2}}}), &reason), "/sim/jitter_us");
    EXPECT_NE(reason.find("unknown field"), std::string::npos) << reason;
    EXPECT_EQ(error_path(doc_with_sim("fast")), "/sim");
}

}  // namespace sim_scenario_test
}  // namespace relab
