// The Redis Cluster lab's pure parts: loading its "cluster" object (bad input names the JSON path),
// the figures it reads from INFO, and who runs it (the real backend, never the simulator).
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "ports/seeded_rng.h"
#include "families/idem_cluster.h"
#include "families/skip_reasons.h"
#include "backend_sim/sim_backend.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"

namespace relab {
namespace idem_cluster_test {

using nlohmann::json;

json cluster_doc() {
    return json::parse(R"({
      "id": "idem-c", "group": "idem", "title": "t", "kind": "workload", "runs": 1,
      "idem": { "cluster": {
        "masters": 3, "node_timeout_ms": 2000,
        "pairs": [ { "name": "tagged", "keys": ["idem:v1:{user:7}:8f3a", "lock:v1:{user:7}:place-order"],
                     "documented": "same slot", "note": "why" },
                   { "name": "untagged", "keys": ["idem:v1:7:8f3a", "lock:v1:7:place-order"] } ],
        "script": "return 1", "script_args": ["a", "b"],
        "hot_user": { "claims": 10, "loads": [ { "name": "tagged", "key_format": "idem:v1:{user:7}:{client_key}",
                                                 "documented": "one node" },
                                               { "name": "untagged", "key_format": "idem:v1:7:{client_key}" } ] } } },
      "expect": { "wrong": "none",
                  "every_trial_has": [ { "op": "observe", "fields": { "load": "tagged", "nodes_used": 1 } } ] } })");
}

std::string error_of(const json& doc) {
    try {
        parse_scenario(doc.dump(), "c.json");
    } catch (const ScenarioError& e) {
        return e.what();
    }
    return "";
}

TEST(IdemClusterLoaderTest, a_cluster_lab_loads_its_pairs_script_and_loads) {
    const Scenario s = parse_scenario(cluster_doc().dump(), "c.json");
    ASSERT_EQ(s.kind, LabKind::idem_cluster);
    ASSERT_TRUE(s.idem().cluster.has_value());
    const IdemCluster& c = *s.idem().cluster;
    EXPECT_EQ(c.masters, 3);
    EXPECT_EQ(c.node_timeout_ms, 2000);
    ASSERT_EQ(c.pairs.size(), 2u);
    EXPECT_EQ(c.pairs[0].keys, (std::vector<std::string>{"idem:v1:{user:7}:8f3a", "lock:v1:{user:7}:place-order"}));
    EXPECT_EQ(c.pairs[0].documented, "same slot");
    EXPECT_EQ(c.pairs[0].note_vi, "why");  // falls back to the English note
    EXPECT_EQ(c.script, "return 1");
    EXPECT_EQ(c.script_args, (std::vector<std::string>{"a", "b"}));
    ASSERT_TRUE(c.hot_user.has_value());
    EXPECT_EQ(c.hot_user->claims, 10);
    ASSERT_EQ(c.hot_user->loads.size(), 2u);
    EXPECT_EQ(c.hot_user->loads[1].key_format, "idem:v1:7:{client_key}");
    EXPECT_TRUE(s.idem().clients.empty());
    ASSERT_EQ(s.expect.every_trial.has.size(), 1u);
}

TEST(IdemClusterLoaderTest, the_shipped_lab_loads_in_the_idem_group) {
    const Scenario s = load_scenario(std::string(RELAB_SOURCE_DIR) + "/scenarios/idem-y2-cluster.json");
    EXPECT_EQ(s.id, "idem-cluster");
    EXPECT_EQ(s.part, "idem-cluster");
    EXPECT_EQ(s.group, "idem");
    ASSERT_EQ(s.kind, LabKind::idem_cluster);
    EXPECT_EQ(s.idem().cluster.value().masters, 3);
    EXPECT_FALSE(s.expect.every_trial.has.empty());
}

TEST(IdemClusterLoaderTest, bad_cluster_input_names_the_json_path) {
    struct Case {
        std::function<void(json&)> edit;
        std::string expected;
    };
    const std::vector<Case> cases = {
        {[](json& d) { d["idem"]["cluster"]["masters"] = 0; },
         "c.json: at /idem/cluster/masters: expected an integer in 1..16, got 0"},
        {[](json& d) { d["idem"]["cluster"]["masters"] = "3"; }, "/idem/cluster/masters"},
        {[](json& d) { d["idem"]["cluster"]["node_timeout_ms"] = 5; }, "/idem/cluster/node_timeout_ms"},
        {[](json& d) { d["idem"]["cluster"]["pairs"][1]["keys"] = json::array({"only-one"}); },
         "/idem/cluster/pairs/1/keys: expected at least two key names"},
        {[](json& d) { d["idem"]["cluster"]["pairs"][0]["keys"][1] = ""; }, "/idem/cluster/pairs/0/keys/1"},
        {[](json& d) { d["idem"]["cluster"]["pairs"][1]["name"] = "tagged"; },
         "/idem/cluster/pairs/1/name: duplicate pair name \"tagged\""},
        {[](json& d) { d["idem"]["cluster"]["pairs"][0]["slot"] = 1; }, "/idem/cluster/pairs/0/slot: unknown field"},
        {[](json& d) { d["idem"]["cluster"]["hot_user"]["claims"] = 0; }, "/idem/cluster/hot_user/claims"},
        {[](json& d) { d["idem"]["cluster"]["hot_user"]["loads"][0]["key_format"] = "idem:v1:{user:7}"; },
         "/idem/cluster/hot_user/loads/0/key_format: expected a key format containing {client_key}"},
        {[](json& d) { d["idem"]["cluster"]["hot_user"]["loads"][1].erase("key_format"); },
         "/idem/cluster/hot_user/loads/1/key_format: required field is missing"},
        {[](json& d) { d["idem"]["cluster"]["hot_user"]["loads"][1]["name"] = "tagged"; },
         "/idem/cluster/hot_user/loads/1/name: duplicate load name"},
        {[](json& d) { d["idem"]["cluster"]["hot_user"]["loads"] = json::array(); }, "/idem/cluster/hot_user/loads"},
        {[](json& d) { d["idem"]["cluster"].erase("pairs"); },
         "/idem/cluster/script: the script runs over the keys of each pair"},
        {[](json& d) { d["idem"]["cluster"].erase("script"); },
         "/idem/cluster/script_args: arguments without a \"script\""},
        {[](json& d) {
             d["idem"]["cluster"].erase("pairs");
             d["idem"]["cluster"].erase("script");
             d["idem"]["cluster"].erase("script_args");
             d["idem"]["cluster"].erase("hot_user");
         },
         "/idem/cluster: a cluster lab needs \"pairs\" or \"hot_user\""},
        {[](json& d) {
             d["idem"]["clients"] = json::array({{{"name", "A"}, {"requests", json::array({{{"client_key", "k"}}})}}});
         },
         "/idem/clients: does not apply to a cluster lab"},
        {[](json& d) { d["idem"]["servers"] = {{"redis", {{"maxmemory", "3mb"}}}}; },
         "/idem/servers: does not apply to a cluster lab"},
        {[](json& d) { d["idem"]["cluster"]["replicas"] = 1; }, "/idem/cluster/replicas: unknown field"},
    };
    for (const auto& c : cases) {
        json doc = cluster_doc();
        c.edit(doc);
        const std::string error = error_of(doc);
        EXPECT_NE(error.find(c.expected), std::string::npos) << "expected: " << c.expected << "\ngot: " << error;
    }
}

TEST(IdemClusterTest, set_calls_are_read_from_info_commandstats) {
    const std::string info =
        "# Commandstats\r\n"
        "cmdstat_setex:calls=7,usec=10,usec_per_call=1.43,rejected_calls=0,failed_calls=0\r\n"
        "cmdstat_set:calls=3000,usec=4112,usec_per_call=1.37,rejected_calls=0,failed_calls=0\r\n"
        "cmdstat_info:calls=2,usec=50,usec_per_call=25.00,rejected_calls=0,failed_calls=0\r\n";
    EXPECT_EQ(command_calls(info, "set"), 3000);  // not setex's line
    EXPECT_EQ(command_calls(info, "setex"), 7);
    EXPECT_EQ(command_calls(info, "eval"), 0);
    EXPECT_EQ(command_calls("", "set"), 0);
}

TEST(IdemClusterTest, figures_per_node_print_in_node_order) {
    EXPECT_EQ(per_node_text({3000, 0, 0}), "3000 / 0 / 0");
    EXPECT_EQ(per_node_text({988, 1037, 975}), "988 / 1037 / 975");
}

TEST(IdemClusterTest, client_keys_look_like_the_articles_uuids_and_follow_the_seed) {
    const std::regex v4{"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"};
    SeededRng rng(7);
    std::set<std::string> seen;
    for (int i = 0; i < 100; ++i) {
        const uint64_t high = rng.next();
        const std::string id = uuid_v4(high, rng.next());
        EXPECT_TRUE(std::regex_match(id, v4)) << id;
        seen.insert(id);
    }
    EXPECT_EQ(seen.size(), 100u);
    EXPECT_EQ(uuid_v4(0, 0), "00000000-0000-4000-8000-000000000000");
    EXPECT_EQ(uuid_v4(~0ULL, ~0ULL), "ffffffff-ffff-4fff-bfff-ffffffffffff");
}

TEST(IdemClusterTest, the_simulator_skips_it_and_the_real_backend_does_not_judge_its_version) {
    const Scenario s = parse_scenario(cluster_doc().dump(), "c.json");
    const auto reason = sim_skip_reason(s);
    ASSERT_TRUE(reason.has_value());
    EXPECT_NE(reason->find("Redis Cluster"), std::string::npos) << *reason;
    EXPECT_NE(reason->find("real backend"), std::string::npos) << *reason;
    // It forms its own cluster of the machine's redis-server, whatever the run's Redis is.
    EXPECT_FALSE(nx_get_skip_reason(s, "6.2.14").has_value());
}

}  // namespace idem_cluster_test
}  // namespace relab
