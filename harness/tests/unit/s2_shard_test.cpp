// Issue 12, S2: the router's hash and shard choice, the loader's "generate" and "shard", the
// accounting with several streams, and the three S2 labs on the simulator.
#include <algorithm>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "check/accounting.h"
#include "check/outcome.h"
#include "report/shard_facts.h"
#include "roles/role_settings.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"
#include "sim_fixture.h"

namespace relab {
namespace s2_shard_test {

using nlohmann::json;

json doc() {
    return json::parse(R"({
        "id": "t-s2", "title": "T", "kind": "workload",
        "generate": { "orders": 4, "first_id": 10, "every_ms": 5, "expected_final": "paid",
                      "events": [ { "type": "created", "version": 1 }, { "type": "paid", "version": 2, "at_ms": 100 } ] },
        "shard": { "streams": 2, "key_format": "o:{{{i}}}" },
        "expect": { "wrong": "none" }
    })");
}

HistoryRecord rec(int64_t t_ns, const std::string& actor, Op op, json data) {
    HistoryRecord r;
    r.t_ns = t_ns;
    r.actor = actor;
    r.op = op;
    r.data = std::move(data);
    return r;
}

TEST(S2RouterTest, the_hash_is_fnv1a_of_the_order_id_and_the_shard_is_hash_mod_n) {
    // FNV-1a 32 of "7": (2166136261 ^ '7') * 16777619 mod 2^32, computed by hand once.
    uint32_t h = 2166136261u;
    h ^= static_cast<unsigned char>('7');
    h *= 16777619u;
    EXPECT_EQ(shard_hash(7), h);
    ShardSpec s;
    s.enabled = true;
    for (int64_t order = 1; order <= 50; ++order) {
        EXPECT_EQ(shard_of(s, order, 999, 3), static_cast<int>(shard_hash(order) % 3));
        EXPECT_EQ(shard_of(s, order, 0, 1), 0);
    }
    s.by = ShardSpec::By::round_robin;
    EXPECT_EQ(shard_of(s, 7, 0, 3), 0);
    EXPECT_EQ(shard_of(s, 7, 4, 3), 1);
    EXPECT_EQ(shard_stream_key(ShardSpec{}, 2), "orders:{2}");
    // Going from % 3 to % 4 moves most keys: 145 of orders 1..200 (the s2-reshard labs' moved_orders).
    s.by = ShardSpec::By::order;
    int moved = 0;
    for (int64_t order = 1; order <= 200; ++order) moved += shard_of(s, order, 0, 3) != shard_of(s, order, 0, 4);
    EXPECT_EQ(moved, 145);
}

TEST(S2LoaderTest, generate_expands_orders_and_events_order_by_order_and_shard_sets_one_consumer_per_shard) {
    const Scenario s = parse_scenario(doc().dump(), "f.json");
    ASSERT_EQ(s.flow().orders.size(), 4u);
    EXPECT_EQ(s.flow().orders[0].id, 10);
    EXPECT_EQ(s.flow().orders[3].id, 13);
    EXPECT_EQ(s.flow().orders[2].expected_final.status, "paid");
    ASSERT_EQ(s.flow().events.size(), 8u);
    EXPECT_EQ(s.flow().events[0].order, 10);
    EXPECT_EQ(s.flow().events[0].type, "created");
    EXPECT_EQ(s.flow().events[1].type, "paid");
    EXPECT_EQ(s.flow().events[1].at_ms, 100);
    EXPECT_EQ(s.flow().events[2].order, 11);
    EXPECT_EQ(s.flow().events[2].at_ms, 5);
    EXPECT_EQ(s.flow().events[7].at_ms, 115);
    EXPECT_TRUE(s.flow().shard.enabled);
    EXPECT_EQ(s.flow().consumers, 2);
    EXPECT_EQ(lab_stream_keys(s.flow().stream, s.flow().shard), (std::vector<std::string>{"o:{0}", "o:{1}"}));
    json d = doc();
    d["shard"]["reshard"] = {{"to", 3}, {"after_events", 4}, {"drain", true}};
    const Scenario r = parse_scenario(d.dump(), "f.json");
    EXPECT_EQ(r.flow().consumers, 3);
    ASSERT_TRUE(r.flow().shard.reshard.has_value());
    EXPECT_EQ(r.flow().shard.reshard->to, 3);
    EXPECT_TRUE(r.flow().shard.reshard->drain);
    // The role processes get it whole.
    EXPECT_EQ(role_settings_from_json(role_settings_to_json(role_settings(r))), role_settings(r));
}

TEST(S2LoaderTest, malformed_shard_and_generate_fields_are_refused_with_their_path) {
    using test::expect_load_error;
    json d = doc();
    d["shard"]["key_format"] = "orders";
    expect_load_error(d, "/shard/key_format", "every shard needs its own stream");
    d = doc();
    d["shard"]["key_format"] = "orders:{j}";
    expect_load_error(d, "/shard/key_format", "expected a format with {i}");
    d = doc();
    d["consumers"] = 5;
    expect_load_error(d, "/consumers", "one consumer per shard (2)");
    d = doc();
    d["orders"] = json::array({{{"id", 1}}});
    expect_load_error(d, "/orders", "\"generate\" makes the lab's orders and events");
    d = doc();
    d["shard"]["reshard"] = {{"to", 2}, {"after_events", 3}};
    expect_load_error(d, "/shard/reshard/to", "already 2");
    d = doc();
    d["shard"]["reshard"] = {{"to", 3}, {"after_events", 8}};
    expect_load_error(d, "/shard/reshard/after_events", "an integer in 1..7");
    d = doc();
    d["shard"]["by"] = "random";
    expect_load_error(d, "/shard/by", "random");
    d = doc();
    d["shard"]["streams"] = 0;
    expect_load_error(d, "/shard/streams", "1..16");
    d = doc();
    // A reaper reads no shard: only the consumers may claim, each in its own.
    d["recovery"] = {{"autoclaim", json::object()}};
    expect_load_error(d, "/recovery", "not supported with it");
    d = doc();
    d["generate"]["orders"] = 0;
    expect_load_error(d, "/generate/orders", "1..100000");
    d = doc();
    d["generate"]["surprise"] = 1;
    expect_load_error(d, "/generate/surprise", "");
}

TEST(S2AccountingTest, the_same_entry_id_in_two_streams_is_two_entries) {
    const json ev1 = {{"order", 1}, {"type", "created"}, {"v", 1}};
    const json ev2 = {{"order", 2}, {"type", "created"}, {"v", 1}};
    std::vector<HistoryRecord> h = {
        rec(1, "producer", Op::publish, {{"event", ev1}, {"result", "ok"}, {"entry", "5-0"}, {"stream", "o:{0}"}}),
        rec(2, "producer", Op::publish, {{"event", ev2}, {"result", "ok"}, {"entry", "5-0"}, {"stream", "o:{1}"}}),
        rec(3, "C1", Op::receive, {{"event", ev1}, {"entry", "5-0"}, {"stream", "o:{0}"}}),
        rec(4, "C1", Op::write, {{"event", ev1}, {"entry", "5-0"}, {"stream", "o:{0}"}, {"affected", 1}}),
        rec(5, "C1", Op::ack, {{"entry", "5-0"}, {"stream", "o:{0}"}}),
        rec(6, "C2", Op::receive, {{"event", ev2}, {"entry", "5-0"}, {"stream", "o:{1}"}}),
        rec(7, "C2", Op::write, {{"event", ev2}, {"entry", "5-0"}, {"stream", "o:{1}"}, {"affected", 1}}),
        rec(8, "C2", Op::ack, {{"entry", "5-0"}, {"stream", "o:{1}"}}),
    };
    const Accounting a = account(h);
    EXPECT_EQ(a.published, 2);
    EXPECT_EQ(a.processed_once, 2);
    EXPECT_EQ(a.duplicated, 0);
    EXPECT_EQ(a.redelivered, 0);
    EXPECT_EQ(a.unexpected, 0);
}

// The labs themselves, on the simulator (the real backend: harness/tests/real).
TEST(S2SimTest, s2_shard_keeps_every_order_in_order_and_beats_s1_on_the_same_workload) {
    const LabResult lab = test::run_sim(test::scenario("beyond-s2-shard.json"), 5);
    EXPECT_TRUE(lab.held) << (lab.failures.empty() ? "" : lab.failures.front());
    EXPECT_EQ(lab.wrong, 0);
    // s2-s1-same-workload runs S1 beside S2 in the same run and holds S2 to 1.5 x its pace.
    const LabResult pair = test::run_sim(test::scenario("beyond-s2-s1-same-workload.json"), 5);
    EXPECT_TRUE(pair.held) << (pair.failures.empty() ? "" : pair.failures.front());
    ASSERT_TRUE(pair.beside_throughput.has_value());
    EXPECT_EQ(pair.beside_name, "s1");
    ASSERT_EQ(pair.beside_throughput->trials, 5);
    ASSERT_GT(pair.throughput.trials, 0);
    const double shard_eps = pair.throughput.per_s, s1_eps = pair.beside_throughput->per_s;
    // Three consumers in parallel: more than S1's one, less than three times it.
    EXPECT_GT(shard_eps, 1.5 * s1_eps);
    EXPECT_LT(shard_eps, 3.0 * s1_eps);
    // S2 collapsed to one stream is S1 again: the floor breaks.
    const Scenario& s = pair.scenario;
    const auto one = std::find_if(s.mutants.begin(), s.mutants.end(), [](const Mutant& m) { return m.name == "one-stream"; });
    ASSERT_NE(one, s.mutants.end());
    const LabResult collapsed = test::run_sim(apply_mutant(s, *one), 5);
    EXPECT_FALSE(collapsed.held);
    ASSERT_FALSE(collapsed.failures.empty());
    EXPECT_NE(collapsed.failures.back().find("throughput >= 1.5 x s1's"), std::string::npos) << collapsed.failures.back();
    const ShardTrialFacts f = shard_facts(lab.scenario, lab.trials.front());
    EXPECT_EQ(f.entries_per_stream.size(), 3u);
    int total = 0;
    for (const auto& [stream, n] : f.entries_per_stream) total += n;
    EXPECT_EQ(total, 600);
    EXPECT_TRUE(f.wrong_orders.empty());
}

TEST(S2SimTest, resharding_without_draining_ends_orders_wrong_by_stale_overwrites_and_draining_ends_none) {
    const LabResult lab = test::run_sim(test::scenario("beyond-s2-reshard.json"), 5);
    EXPECT_TRUE(lab.held) << (lab.failures.empty() ? "" : lab.failures.front());
    for (const auto& t : lab.trials) {
        EXPECT_FALSE(t.wrong_orders.empty());
        EXPECT_GE(t.accounting.stale_overwrites, static_cast<int>(t.wrong_orders.size()));
        // Every order that ended wrong moved shard at the reshard.
        const ShardTrialFacts f = shard_facts(lab.scenario, t);
        ASSERT_TRUE(f.reshard.has_value());
        for (int64_t order : f.wrong_orders)
            EXPECT_NE(shard_of(lab.scenario.flow().shard, order, 0, 3), shard_of(lab.scenario.flow().shard, order, 0, 4)) << order;
    }
    const LabResult drained = test::run_sim(test::scenario("beyond-s2-reshard-drain.json"), 5);
    EXPECT_TRUE(drained.held) << (drained.failures.empty() ? "" : drained.failures.front());
    EXPECT_EQ(drained.wrong, 0);
}

// "beside" and "throughput_ratio": the arrangement beside is the lab's file patched, with no beside
// or ratio of its own; the ratio holds at or above its floor and breaks below it, naming both paces.
TEST(S2ThroughputRatioTest, the_arrangement_beside_is_the_patched_lab_and_the_ratio_is_judged_against_a_floor) {
    json d = doc();
    d["beside"] = {{"name", "s1"}, {"change", "one stream"},
                   {"patch", json::array({{{"op", "replace"}, {"path", "/shard/streams"}, {"value", 1}}})}};
    d["expect"]["throughput_ratio"] = {{"at_least", 1.5}};
    const Scenario s = parse_scenario(d.dump(), "t-s2.json");
    ASSERT_TRUE(s.flow().beside.has_value());
    ASSERT_TRUE(s.expect.throughput_ratio_at_least.has_value());
    EXPECT_EQ(s.flow().shard.streams, 2);
    const Scenario b = beside_scenario(s);
    EXPECT_EQ(b.flow().shard.streams, 1);
    EXPECT_FALSE(b.flow().beside.has_value());
    EXPECT_FALSE(b.expect.throughput_ratio_at_least.has_value());

    auto judged = [&](double own_per_s, std::optional<double> beside_per_s) {
        LabResult lab;
        lab.scenario = s;
        TrialOutcome t;
        t.trial = 1;
        // 8 jobs written, the last at 8 / own_per_s seconds.
        for (int k = 1; k <= 8; ++k)
            t.history.push_back(rec(static_cast<int64_t>(k * 1e9 / own_per_s), "C1", Op::write, json::object()));
        lab.trials.push_back(t);
        if (beside_per_s) {
            lab.beside_name = "s1";
            lab.beside_throughput = ThroughputStats{1, 8, 0, *beside_per_s, *beside_per_s, *beside_per_s};
        }
        summarize(lab);
        return lab;
    };
    EXPECT_TRUE(judged(300, 100).held);
    EXPECT_TRUE(judged(150, 100).held);
    const LabResult slow = judged(120, 100);
    EXPECT_FALSE(slow.held);
    ASSERT_EQ(slow.failures.size(), 1u);
    EXPECT_NE(slow.failures[0].find("throughput >= 1.5 x s1's (measured 120.00 jobs/s over 100.00 = 1.20)"),
              std::string::npos)
        << slow.failures[0];
    const LabResult alone = judged(300, std::nullopt);
    EXPECT_FALSE(alone.held);
    EXPECT_NE(alone.failures.at(0).find("no throughput of the arrangement beside it measured"), std::string::npos);
}

TEST(S2ThroughputRatioTest, a_ratio_without_an_arrangement_beside_is_refused_when_the_file_loads) {
    json d = doc();
    d["expect"]["throughput_ratio"] = {{"at_least", 1.5}};
    try {
        (void)parse_scenario(d.dump(), "t-s2.json");
        FAIL() << "loaded";
    } catch (const ScenarioError& e) {
        EXPECT_NE(std::string(e.what()).find("needs \"beside\""), std::string::npos) << e.what();
    }
}

// A shard_failover on shard 0 from 1000 ms to 3000 ms: its event waits across the outage, shard 1's
// are written meanwhile; one entry of shard 0 received twice, one event published and never written.
TEST(S2ShardFailoverTest, outage_records_count_each_shards_waits_writes_losses_and_redeliveries) {
    json d = doc();
    d["shard"]["cluster"] = {{"replicas", 1}, {"node_timeout_ms", 1000}, {"require_full_coverage", false}};
    d["recovery"] = {{"autoclaim", {{"in", "consumers"}}}};
    d["faults"] = json::array({{{"action", "shard_failover"}, {"target", "redis-cluster-master"}, {"shard", 0}, {"at_ms", 1000}}});
    const Scenario s = parse_scenario(d.dump(), "f.json");
    ASSERT_EQ(s.faults.size(), 1u);
    EXPECT_EQ(s.faults[0].target.kind, FaultTarget::redis_cluster_master);
    EXPECT_EQ(s.faults[0].target.shard, 0);
    EXPECT_EQ(s.flow().shard.cluster.node_timeout_ms, 1000);
    EXPECT_EQ(role_settings_from_json(role_settings_to_json(role_settings(s))), role_settings(s));
    const json ev1 = {{"order", 10}, {"type", "created"}, {"v", 1}};
    const json ev2 = {{"order", 11}, {"type", "created"}, {"v", 1}};
    const json ev3 = {{"order", 12}, {"type", "created"}, {"v", 1}};
    const std::vector<HistoryRecord> h = {
        rec(900'000'000, "producer", Op::publish, {{"event", ev1}, {"stream", "o:{0}"}, {"result", "ok"}, {"entry", "1-0"}}),
        rec(950'000'000, "producer", Op::publish, {{"event", ev3}, {"stream", "o:{0}"}, {"result", "ok"}, {"entry", "1-1"}}),
        rec(1'000'000'000, "nemesis", Op::fault, {{"action", "shard_failover"}, {"phase", "invoke"}, {"fault", 1}}),
        rec(1'200'000'000, "producer", Op::publish, {{"event", ev2}, {"stream", "o:{1}"}, {"result", "ok"}, {"entry", "2-0"}}),
        rec(1'250'000'000, "C2", Op::write, {{"event", ev2}, {"stream", "o:{1}"}, {"entry", "2-0"}}),
        rec(3'000'000'000, "nemesis", Op::fault,
            {{"action", "shard_failover"}, {"phase", "ok"}, {"fault", 1}, {"shard", 0}, {"switch_ms", 2000}}),
        rec(3'100'000'000, "C1", Op::receive, {{"event", ev1}, {"stream", "o:{0}"}, {"entry", "1-0"}}),
        rec(3'200'000'000, "C1", Op::receive, {{"event", ev1}, {"stream", "o:{0}"}, {"entry", "1-0"}}),
        rec(3'300'000'000, "C1", Op::write, {{"event", ev1}, {"stream", "o:{0}"}, {"entry", "1-0"}}),
    };
    const std::vector<HistoryRecord> out = shard_outage_records(s, h);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].data.at("killed"), true);
    EXPECT_EQ(out[0].data.at("outage_ms"), 2000);
    EXPECT_EQ(out[0].data.at("max_wait_ms"), 2400);
    EXPECT_EQ(out[0].data.at("applied_in_outage"), 0);
    EXPECT_EQ(out[0].data.at("lost"), 1);
    EXPECT_EQ(out[0].data.at("redelivered"), 1);
    EXPECT_EQ(out[0].data.at("max_gap_ms"), 2000);  // no write of its own in the whole window
    EXPECT_EQ(out[1].data.at("killed"), false);
    EXPECT_EQ(out[1].data.at("applied_in_outage"), 1);
    EXPECT_EQ(out[1].data.at("max_wait_ms"), 50);
    EXPECT_EQ(out[1].data.at("max_gap_ms"), 1750);  // from its write at 1250 ms to the promotion
    EXPECT_EQ(out[1].data.at("lost"), 0);
    // Without the fault's ok record, nothing to say.
    EXPECT_TRUE(shard_outage_records(s, std::vector<HistoryRecord>(h.begin(), h.begin() + 5)).empty());
}

TEST(S2ShardFailoverTest, a_cluster_master_fault_needs_a_replica_and_a_shard_the_lab_has) {
    using test::expect_load_error;
    json d = doc();
    d["faults"] = json::array({{{"action", "shard_failover"}, {"target", "redis-cluster-master"}, {"shard", 0}, {"at_ms", 10}}});
    expect_load_error(d, "/faults/0/target", "replicas");
    d["shard"]["cluster"] = {{"replicas", 1}};
    d["faults"][0]["shard"] = 2;
    expect_load_error(d, "/faults/0/shard", "shards 0..1");
    d["faults"][0]["shard"] = 0;
    d["faults"][0]["target"] = "C1";
    expect_load_error(d, "/faults/0/shard", "this fault's target is neither");
    // The master's replica, held back before a shard failover, names its shard the same way.
    d["faults"][0] = {{"action", "pause"}, {"target", "redis-cluster-replica"}, {"shard", 2}, {"at_ms", 10}};
    expect_load_error(d, "/faults/0/shard", "shards 0..1");
    d["faults"][0].erase("shard");
    expect_load_error(d, "/faults/0/shard", "required");
    d["faults"][0] = {{"action", "kill"}, {"target", "redis-cluster-replica"}, {"shard", 0}, {"at_ms", 10}};
    expect_load_error(d, "/faults/0/target", "kill acts on");
}

}  // namespace s2_shard_test
}  // namespace relab
