// The soak: its figures from a history (kills, restarts, entries given back, the group read at the
// end), its section and expectation terms in a scenario file.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "check/soak_stats.h"
#include "sim_fixture.h"

namespace relab {
namespace {

using nlohmann::json;

HistoryRecord rec(int64_t ms, const std::string& actor, Op op, json data) {
    return HistoryRecord{1, ms * 1'000'000, actor, op, std::move(data)};
}

json fault(int index, const std::string& action, const std::string& target, const std::string& phase) {
    return {{"fault", index}, {"action", action}, {"target", target}, {"phase", phase}};
}

// Kills are the schedule's (fault > 0) on roles: a kill, or a restart that found the role running;
// relab's own stop at a deadline (fault 0) and server faults are not. An entry received again
// before any ack of it was given back (recovered), once however often; one received after its ack
// is the accounting's "redelivered", not this.
TEST(SoakStatsTest, counts_the_schedules_kills_the_entries_given_back_and_reads_the_group) {
    json restart_killed = fault(1, "restart", "C1", "ok");
    restart_killed["killed"] = true;
    json restart_started = fault(1, "restart", "C1", "ok");
    restart_started["killed"] = false;
    json group = {{"consumer_group", "g"}, {"pending", 2},       {"undelivered", 5},
                  {"drained", false},      {"deadline_passed", true}, {"deadline_ms", 900}};
    const std::vector<HistoryRecord> h = {
        rec(0, "producer", Op::start, json::object()),
        rec(1, "C1", Op::receive, {{"entry", "1-0"}, {"via", "new"}, {"deliveries", 1}}),
        rec(2, "C1", Op::receive, {{"entry", "2-0"}, {"via", "new"}, {"deliveries", 1}}),
        rec(3, "C1", Op::ack, {{"entry", "1-0"}}),
        rec(10, "nemesis", Op::fault, restart_killed),
        rec(11, "C1", Op::receive, {{"entry", "2-0"}, {"via", "pending"}, {"deliveries", 2}}),
        rec(12, "nemesis", Op::fault, fault(2, "kill", "C1", "ok")),
        rec(13, "nemesis", Op::fault, restart_started),
        rec(14, "C1", Op::receive, {{"entry", "2-0"}, {"via", "pending"}, {"deliveries", 3}}),
        rec(15, "C1", Op::receive, {{"entry", "1-0"}, {"via", "pending"}, {"deliveries", 2}}),  // after its ack
        rec(16, "nemesis", Op::fault, fault(3, "kill", "redis", "ok")),
        rec(17, "nemesis", Op::fault, fault(4, "resume", "C1", "fail")),
        rec(18, "nemesis", Op::fault, fault(0, "kill", "producer", "ok")),
        rec(950, "relab", Op::observe, group),
    };
    const SoakStats k = soak_stats(h);
    EXPECT_TRUE(k.measured);
    EXPECT_EQ(k.kills, 2);  // the killing restart and the kill of C1
    EXPECT_EQ(k.restarts, 2);
    EXPECT_EQ(k.fault_failures, 1);
    EXPECT_EQ(k.recovered, 1);
    EXPECT_EQ(k.recovered_examples, (std::vector<std::string>{"2-0"}));
    EXPECT_EQ(k.pending, 2);
    EXPECT_EQ(k.undelivered, 5);
    EXPECT_TRUE(k.deadline_passed);
    EXPECT_EQ(k.deadline_ms, 900);
    EXPECT_EQ(k.end_ms, 950);
    EXPECT_EQ(soak_figure(k, "kills"), 2);
    EXPECT_EQ(soak_figure(k, "deadline_passed"), 1);
    EXPECT_EQ(soak_figure(k, "nope"), std::nullopt);
    // Without relab's reading of the group there is no pending figure, not a zero.
    const SoakStats unread = soak_stats({h.begin(), h.end() - 1});
    EXPECT_FALSE(unread.measured);
    EXPECT_EQ(soak_figure(unread, "pending"), std::nullopt);
    EXPECT_EQ(soak_figure(unread, "undelivered"), std::nullopt);
}

json soak_doc() {
    return json::parse(R"({
        "id": "s-1", "title": "S", "kind": "workload", "consumers": 1, "runs": 1,
        "generate": { "orders": 10, "every_ms": 10, "expected_final": "paid",
                      "events": [ { "type": "created", "version": 1 }, { "type": "paid", "version": 2 } ] },
        "soak": { "drain_ms": 5000 },
        "expect": { "wrong": "none", "soak": { "pending": { "exactly": 0 }, "kills": { "at_least": 1 } } }
    })");
}

TEST(SoakLoaderTest, reads_the_soak_section_and_its_figures_and_refuses_them_elsewhere) {
    const Scenario s = parse_scenario(soak_doc().dump(), "f.json");
    EXPECT_TRUE(s.soak.enabled);
    EXPECT_EQ(s.soak.drain_ms, 5000);
    EXPECT_EQ(last_event_ms(s), 90);
    EXPECT_EQ(soak_deadline_ms(s), 5090);
    ASSERT_EQ(s.expect.every_trial.soak.size(), 2u);
    EXPECT_EQ(s.expect.every_trial.soak.at("kills").at_least, 1);
    EXPECT_NE(s.expect.describe().find("pending = 0"), std::string::npos) << s.expect.describe();
    EXPECT_FALSE(parse_scenario(test::scenario_json("08b-s1.json").dump(), "f.json").soak.enabled);

    json d = soak_doc();
    d["soak"] = {{"drain_s", 5}};
    test::expect_load_error(d, "/soak/drain_s", "drain_ms");
    d = soak_doc();
    d["expect"]["soak"]["killed"] = {{"at_least", 1}};
    test::expect_load_error(d, "/expect/soak/killed", "kills");
    d = soak_doc();
    d.erase("soak");
    test::expect_load_error(d, "/expect/soak", "add \"soak\"");
    d = soak_doc();
    d.erase("consumers");
    d["shard"] = {{"streams", 2}};
    test::expect_load_error(d, "/soak", "not supported with it");
    json idem = json::parse(R"({
        "id": "i-1", "title": "I", "kind": "workload",
        "idem": { "clients": [ { "name": "A", "requests": [ { "client_key": "k", "at_ms": 0 } ] } ] },
        "soak": { "drain_ms": 10 },
        "expect": { "wrong": "none" }
    })");
    test::expect_load_error(idem, "/soak", "applies to stream labs");
}

}  // namespace
}  // namespace relab
