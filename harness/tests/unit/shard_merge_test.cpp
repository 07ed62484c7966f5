// `relab run --shard K/N` and `relab merge` (report/compare/shard_merge.h): N shards of a simulated
// run, merged, give the run one runner makes, byte for byte but for the clock's fields, including a
// racy lab whose until_wrong rule stops at a trial no shard could know in advance.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "check/run_shard.h"
#include "report/compare/shard_merge.h"
#include "report/reporter.h"
#include "scenario/loader/loader.h"
#include "sim_fixture.h"

namespace relab {
namespace shard_merge_test {

using nlohmann::json;

// The labs this test runs: a racy lab at 400 trials, and the same lab asked to go on until 3 trials
// went wrong (it stops after a handful).
std::vector<Scenario> labs() {
    Scenario racy = test::scenario("08c-s4a-lock.json");
    json doc = test::scenario_json("08c-s4a-lock.json");
    doc["id"] = "08c-s4a-until-3";
    doc["runs"] = 5;
    doc["expect"]["wrong"]["at_least"] = 3;
    return {racy, parse_scenario(doc.dump(), "until-3.json")};
}

RunReport run(const RunShard& shard, int trials) {
    SimOptions o;
    o.trials = trials;
    o.shard = shard;
    o.self_check = false;
    SimBackend backend(o);
    RunReport r;
    r.shard = shard;
    for (const auto& s : labs()) {
        // The until_wrong lab keeps its own runs.
        SimOptions own = o;
        if (s.id == "08c-s4a-until-3") own.trials.reset();
        r.labs.push_back(SimBackend(own).run(s));
    }
    return r;
}

// As a report file would carry it, read back: what `relab merge` reads.
RunReport through_json(const RunReport& r) { return run_from_json(run_to_json(r)); }

// The report without what the clock decides.
json canonical(const RunReport& r) {
    json j = run_to_json(r);
    std::function<void(json&)> strip = [&](json& x) {
        if (x.is_object()) {
            for (const char* k : {"started_at", "started_at_us", "wall_s", "inherent_s", "elapsed_s", "finished_at_us",
                                  "jobs", "shard"})
                x.erase(k);
            for (auto& [k, v] : x.items()) strip(v);
        } else if (x.is_array()) {
            for (auto& v : x) strip(v);
        }
    };
    strip(j);
    return j;
}

TEST(ShardMerge, four_shards_merged_are_the_one_runner_run) {
    const RunReport one = merge_shards({through_json(run({}, 400))});
    std::vector<RunReport> shards;
    for (int k = 4; k >= 1; --k) shards.push_back(through_json(run({k, 4}, 400)));  // any order
    EXPECT_LT(shards.back().labs.at(0).trials.size(), 400u);  // a shard runs its share only
    const RunReport merged = merge_shards(std::move(shards));
    EXPECT_EQ(canonical(merged).dump(), canonical(one).dump());
    ASSERT_EQ(merged.labs.size(), 2u);
    EXPECT_EQ(merged.labs[0].total, 400);
    EXPECT_GT(merged.labs[0].wrong, 0);
    EXPECT_EQ(merged.labs[0].failing_seeds, one.labs[0].failing_seeds);
    // The sequential rule cut the merged trials where one runner stopped: at its third wrong trial.
    const LabResult& until = merged.labs[1];
    EXPECT_EQ(until.wrong, 3);
    EXPECT_TRUE(until.trials.back().wrong);
    EXPECT_EQ(until.total, one.labs[1].total);
}

TEST(ShardMerge, a_missing_or_repeated_shard_is_refused_naming_it) {
    const RunReport a = through_json(run({1, 2}, 20));
    try {
        merge_shards({a});
        FAIL() << "a missing shard was accepted";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("shard 2/2 is missing"), std::string::npos) << e.what();
    }
    EXPECT_THROW(merge_shards({a, a}), std::runtime_error);
}

TEST(ShardMerge, shards_deal_trials_round_robin) {
    const RunShard s{2, 3};
    EXPECT_FALSE(s.has(1));
    EXPECT_TRUE(s.has(2));
    EXPECT_TRUE(s.has(5));
    EXPECT_EQ(parse_run_shard("3/4"), (RunShard{3, 4}));
    EXPECT_FALSE(parse_run_shard("0/4"));
    EXPECT_FALSE(parse_run_shard("5/4"));
    EXPECT_FALSE(parse_run_shard("1/"));
}

}  // namespace shard_merge_test
}  // namespace relab
