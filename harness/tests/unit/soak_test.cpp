// The soak: its figures from a history (kills, restarts, entries given back, the group read at the
// end), its section and expectation terms in a scenario file, its deadline on the simulator, and
// the shipped soak lab and its mutant at a small size. The real backend's run is in the real tests
// (harness/tests/real/soak_test.cpp).
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "check/soak_stats.h"
#include "cli/commands.h"
#include "ports/history_op.h"
#include "report/reporter.h"
#include "report/text/soak_table.h"
#include "scenario/loader/loader.h"
#include "sim_fixture.h"

namespace relab {
namespace soak_test {

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
    EXPECT_EQ(k.examples.recovered, (std::vector<std::string>{"2-0"}));
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
    EXPECT_TRUE(s.flow().soak.enabled);
    EXPECT_EQ(s.flow().soak.drain_ms, 5000);
    EXPECT_EQ(last_event_ms(s.flow()), 90);
    EXPECT_EQ(soak_deadline_ms(s.flow()), 5090);
    ASSERT_EQ(s.expect.every_trial.soak.size(), 2u);
    EXPECT_EQ(s.expect.every_trial.soak.at("kills").at_least, 1);
    EXPECT_NE(s.expect.describe().find("pending = 0"), std::string::npos) << s.expect.describe();
    EXPECT_FALSE(parse_scenario(test::scenario_json("08b-s1.json").dump(), "f.json").flow().soak.enabled);

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

Scenario shipped_soak() { return load_scenario(test::k_scenarios + "soak/s3-s5-kills.json"); }

// The shipped soak at 2,500 orders (10 s of events, 3 kills at 2, 5 and 8 s) on the simulator:
// every entry processed, the group read empty at the end before the deadline, entries given back
// after the kills, 0 wrong; its mutant (no recovery) leaves the killed reader's entries pending
// until the deadline, reports them pending and lost, and breaks.
TEST(SoakLabTest, the_shipped_soak_holds_on_the_simulator_and_its_mutant_stops_at_the_deadline) {
    const Scenario s = with_generated_orders(shipped_soak(), 2500);
    ASSERT_FALSE(sim_skip_reason(s).has_value());
    const LabResult lab = test::run_sim(s, 1);
    ASSERT_EQ(lab.trials.size(), 1u);
    const TrialOutcome& t = lab.trials[0];
    EXPECT_TRUE(lab.held) << (lab.failures.empty() ? "" : lab.failures[0]);
    EXPECT_EQ(t.accounting.published, 7500);
    EXPECT_EQ(t.accounting.lost, 0);
    EXPECT_EQ(t.soak.kills, 3);
    EXPECT_EQ(t.soak.restarts, 3);
    EXPECT_GT(t.soak.recovered, 0);
    EXPECT_EQ(t.soak.pending, 0);
    EXPECT_EQ(t.soak.undelivered, 0);
    EXPECT_FALSE(t.soak.deadline_passed);
    EXPECT_EQ(t.soak.deadline_ms, 9996 + 20000);
    EXPECT_LT(t.soak.end_ms, t.soak.deadline_ms);
    EXPECT_TRUE(t.wrong_orders.empty());

    EXPECT_GE(t.accounting.unapplied, 3);  // the three paid events the producer retried after shipped

    const auto mutant = [&s](const std::string& name) {
        for (const auto& m : s.mutants)
            if (m.name == name) return m;
        throw std::logic_error("the soak has no mutant " + name);
    };
    const LabResult plain = test::run_sim(apply_mutant(s, mutant("plain-write")), 1);
    EXPECT_FALSE(plain.held);
    EXPECT_EQ(plain.trials.at(0).wrong_orders.size(), 3u);
    EXPECT_EQ(plain.trials.at(0).accounting.unapplied, 0);

    const LabResult broken = test::run_sim(apply_mutant(s, mutant("no-recovery")), 1);
    const TrialOutcome& m = broken.trials.at(0);
    EXPECT_FALSE(broken.held);
    EXPECT_TRUE(m.soak.deadline_passed);
    EXPECT_GE(m.soak.end_ms, m.soak.deadline_ms);
    EXPECT_GT(m.soak.pending, 0);
    EXPECT_EQ(m.soak.undelivered, 0);
    EXPECT_GT(m.accounting.lost, 0);
    EXPECT_LE(m.accounting.lost, m.soak.pending);  // what was never processed, a dead reader held
    EXPECT_EQ(m.soak.recovered, 0);
    // Its records, the nemesis's and relab's reading of the group included, carry only the fields
    // their op lists (history_op.h), as every shipped lab's do.
    for (const TrialOutcome* trial : {&t, &m})
        for (const auto& r : trial->history)
            for (const auto& [field, value] : r.data.items())
                EXPECT_TRUE(op_carries(r.op, field)) << r.actor << " recorded " << to_string(r.op) << " with " << field;
    // The end of the run says so, entry by entry.
    std::ostringstream table;
    write_soak_table(soak_rows({lab, broken}), table);
    EXPECT_NE(table.str().find("soak-s3-s5-kills: held"), std::string::npos) << table.str();
    EXPECT_NE(table.str().find("7,500 events sent · 7,500 processed"), std::string::npos) << table.str();
    EXPECT_NE(table.str().find("soak-s3-s5-kills/no-recovery: broken"), std::string::npos) << table.str();
    EXPECT_NE(table.str().find(fmt::format("{} pending in the group", m.soak.pending)), std::string::npos) << table.str();
    EXPECT_NE(table.str().find("the deadline (30.0 s) passed before the group drained"), std::string::npos) << table.str();
    const json rows = soak_table_json(soak_rows({lab, broken}));
    EXPECT_EQ(rows.at(0).at("kills"), 3);
    EXPECT_EQ(rows.at(1).at("deadline_passed"), true);
}

// The soak figures survive the JSON report: a run read back gives the same figures and the same
// verdict, and relab report's recheck keeps them for a trial whose history was dropped.
TEST(SoakLabTest, the_soak_figures_survive_the_json_report) {
    RunReport run;
    run.labs.push_back(test::run_sim(with_generated_orders(shipped_soak(), 2500), 1));
    TrialOutcome& t = run.labs[0].trials[0];
    ASSERT_TRUE(t.soak.measured);
    for (const bool kept : {true, false}) {
        if (!kept) t.history.clear();  // as a long trial's, dropped once checked
        const json j = run_to_json(run);
        const RunReport back = run_from_json(j);
        EXPECT_EQ(back.labs.at(0).trials.at(0).soak, t.soak) << kept;
        EXPECT_EQ(back.labs.at(0).held, run.labs[0].held) << kept;
        EXPECT_EQ(run_to_json(back), j) << kept;
    }
}

// Like the load labs, the soak lives in scenarios/soak: `relab list` shows it, a run of every lab
// leaves it out, naming it ("soak", its id) finds it.
TEST(SoakLabTest, relab_list_names_the_soak_and_a_run_of_every_lab_leaves_it_out) {
    ListOptions o;
    o.scenarios_dir = test::k_scenarios;
    std::ostringstream out;
    auto* old = std::cout.rdbuf(out.rdbuf());
    const int rc = run_list(o);
    std::cout.rdbuf(old);
    EXPECT_EQ(rc, 0);
    EXPECT_NE(out.str().find("soak-s3-s5-kills"), std::string::npos);
    RunOptions every;
    every.scenarios_dir = test::k_scenarios;
    for (const auto& s : select_labs(every)) EXPECT_NE(s.group, "soak") << s.id;
    RunOptions named;
    named.scenarios_dir = test::k_scenarios;
    named.labs = {"soak"};
    const auto chosen = select_labs(named);
    ASSERT_EQ(chosen.size(), 1u);
    EXPECT_EQ(chosen[0].id, "soak-s3-s5-kills");
}

}  // namespace soak_test
}  // namespace relab
