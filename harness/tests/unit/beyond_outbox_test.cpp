// The "beyond" outbox labs' pieces without servers: the loader's dispatcher count, claim and the
// consumer's dedupe; the simulated outbox's SKIP LOCKED claims; the per-event accounting
// (republished, reapplied, skipped) and the expectation terms that read it.
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "check/accounting.h"
#include "roles/roles.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"
#include "sim/outbox_model.h"
#include "sim_fixture.h"

namespace relab {
namespace beyond_outbox_test {

using nlohmann::json;

json outbox_doc() {
    return json::parse(R"({
        "id": "o-1", "title": "O", "kind": "workload",
        "orders": [ { "id": 42 } ],
        "events": [ { "order": 42, "type": "created", "version": 1 },
                    { "order": 42, "type": "paid", "version": 2 } ],
        "dispatcher": { "ordering": "per_key" },
        "consumers": 1,
        "expect": { "wrong": "none" }
    })");
}

TEST(BeyondOutboxLoaderTest, one_dispatcher_keeps_its_name_and_several_are_numbered) {
    json doc = outbox_doc();
    Scenario one = parse_scenario(doc.dump(), "f.json");
    EXPECT_EQ(one.flow().dispatcher.count, 1);
    EXPECT_EQ(one.flow().dispatcher.claim, DispatchClaim::none);
    EXPECT_EQ(one.flow().write.dedupe, WriteDedupe::none);
    EXPECT_EQ(dispatcher_actors(one.flow().dispatcher), (std::vector<std::string>{"dispatcher"}));

    doc["dispatcher"]["count"] = 3;
    doc["dispatcher"]["claim"] = "skip_locked";
    doc["write"] = {{"dedupe", "aggregate_version"}};
    const Scenario three = parse_scenario(doc.dump(), "f.json");
    EXPECT_EQ(three.flow().dispatcher.claim, DispatchClaim::skip_locked);
    EXPECT_EQ(three.flow().write.dedupe, WriteDedupe::aggregate_version);
    std::vector<std::string> actors;
    for (const auto& r : trial_roles(three)) actors.push_back(r.actor);
    EXPECT_EQ(actors, (std::vector<std::string>{"C1", "app", "dispatcher1", "dispatcher2", "dispatcher3"}));
}

TEST(BeyondOutboxLoaderTest, bad_counts_claims_and_dedupes_are_refused_with_their_path) {
    struct Case {
        const char* pointer;
        json value;
        const char* path;
        const char* reason;
    };
    const std::vector<Case> cases = {
        {"/dispatcher/count", 0, "/dispatcher/count", "1"},
        {"/dispatcher/count", 9, "/dispatcher/count", "8"},
        {"/dispatcher/count", "2", "/dispatcher/count", "integer"},
        {"/dispatcher/claim", "advisory", "/dispatcher/claim", "\"none\", \"skip_locked\""},
        {"/dispatcher/claim", true, "/dispatcher/claim", "one of"},
        {"/write", json{{"dedupe", "entry_id"}}, "/write/dedupe", "\"none\", \"aggregate_version\""},
    };
    for (const auto& c : cases) {
        json doc = outbox_doc();
        doc[json::json_pointer(c.pointer)] = c.value;
        const ScenarioError e = test::load_error(doc);
        EXPECT_EQ(e.json_path(), c.path) << e.what();
        EXPECT_NE(e.reason().find(c.reason), std::string::npos) << e.what();
    }
    // A claim holds one row's transaction; a round-long transaction does not combine with it.
    json doc = outbox_doc();
    doc["dispatcher"]["claim"] = "skip_locked";
    doc["dispatcher"]["mark"] = "round";
    const ScenarioError e = test::load_error(doc);
    EXPECT_EQ(e.json_path(), "/dispatcher/mark") << e.what();
    // Faults may name the numbered dispatchers, not "dispatcher", once there are several.
    doc = outbox_doc();
    doc["dispatcher"]["count"] = 2;
    doc["faults"] = json::array({{{"action", "kill"}, {"target", "dispatcher"}, {"at_ms", 10}}});
    EXPECT_EQ(test::load_error(doc).json_path(), "/faults/0/target");
    doc["faults"][0]["target"] = "dispatcher2";
    EXPECT_NO_THROW(parse_scenario(doc.dump(), "f.json"));
}

TEST(BeyondOutboxLoaderTest, the_per_event_terms_are_read_as_bands) {
    json doc = outbox_doc();
    doc["expect"]["republished"] = 1;
    doc["expect"]["reapplied"] = json{{"at_most", 0}};
    doc["expect"]["skipped"] = json{{"at_least", 1}};
    const Scenario s = parse_scenario(doc.dump(), "f.json");
    ASSERT_TRUE(s.expect.every_trial.band("republished") && s.expect.every_trial.band("reapplied") && s.expect.every_trial.band("skipped"));
    EXPECT_TRUE(s.expect.every_trial.band("republished")->contains(1));
    EXPECT_FALSE(s.expect.every_trial.band("republished")->contains(2));
    EXPECT_TRUE(s.expect.every_trial.band("reapplied")->contains(0));
    EXPECT_FALSE(s.expect.every_trial.band("skipped")->contains(0));
    doc["expect"]["republished"] = "twice";
    EXPECT_EQ(test::load_error(doc).json_path(), "/expect/republished");
}

// Four rows: 42 created, 43 created, 42 paid, 43 paid (ids 1..4).
sim::OutboxModel four_rows() {
    sim::OutboxModel m;
    m.reset({});
    m.record_change(42, "created", 1);
    m.record_change(43, "created", 1);
    m.record_change(42, "paid", 2);
    m.record_change(43, "paid", 2);
    return m;
}

const int kA = 1, kB = 2;  // two transactions' identities
const auto kAlive = [](const void*) { return true; };

TEST(SimOutboxClaimTest, per_key_claims_skip_an_aggregate_whose_first_row_another_holds) {
    sim::OutboxModel m = four_rows();
    auto a = m.claim(ClaimScope::aggregate_head, {}, &kA, kAlive);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->id, 1);
    // B skips row 1 (locked) and 42 paid behind it: #43's first row.
    auto b = m.claim(ClaimScope::aggregate_head, {}, &kB, kAlive);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->id, 2);
    EXPECT_EQ(m.lock_holder(2), &kB);
    // A again, #42 passed over (its publish failed this round): #43's first row is B's, and 43 paid
    // behind it is no one's yet.
    auto again = m.claim(ClaimScope::aggregate_head, {42}, &kA, kAlive);
    EXPECT_FALSE(again) << again->id;
    // B publishes and commits row 2: 43 paid becomes #43's first row.
    m.mark_published(2, "2-0", Nanos{1});
    m.release(&kB);
    auto next = m.claim(ClaimScope::aggregate_head, {}, &kB, kAlive);
    ASSERT_TRUE(next);
    EXPECT_EQ(next->id, 4);
}

TEST(SimOutboxClaimTest, row_claims_let_a_later_row_of_the_same_aggregate_go_while_its_first_is_held) {
    sim::OutboxModel m = four_rows();
    ASSERT_EQ(m.claim(ClaimScope::row, {}, &kA, kAlive)->id, 1);
    ASSERT_EQ(m.claim(ClaimScope::row, {}, &kB, kAlive)->id, 2);
    m.release(&kB);
    m.mark_published(2, "2-0", Nanos{1});
    // Row 1 (42 created) is A's; B takes 42 paid: the reorder per-key exclusion prevents.
    EXPECT_EQ(m.claim(ClaimScope::row, {}, &kB, kAlive)->id, 3);
    // Skipped rows (a failed publish this round) are passed over.
    m.release(&kA);
    EXPECT_EQ(m.claim(ClaimScope::row, {1}, &kA, kAlive)->id, 4);
}

TEST(SimOutboxClaimTest, a_dead_holders_locks_are_gone) {
    sim::OutboxModel m = four_rows();
    ASSERT_EQ(m.claim(ClaimScope::aggregate_head, {}, &kA, kAlive)->id, 1);
    // A's connection died (its process killed): its transaction, and its lock, with it.
    auto only_b_lives = [](const void* holder) { return holder == &kB; };
    auto b = m.claim(ClaimScope::aggregate_head, {}, &kB, only_b_lives);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->id, 1);
    EXPECT_EQ(m.lock_holder(1), &kB);
}

HistoryRecord rec(int64_t t, const std::string& actor, Op op, json data) {
    return HistoryRecord{1, t, actor, op, std::move(data)};
}
json ev(int64_t order, const std::string& type, int64_t v) { return {{"order", order}, {"type", type}, {"v", v}}; }
HistoryRecord publish(int64_t t, const std::string& actor, int64_t outbox_id, const std::string& entry, json e) {
    return rec(t, actor, Op::publish, {{"outbox_id", outbox_id}, {"event", e}, {"result", "ok"}, {"entry", entry}});
}
HistoryRecord write(int64_t t, const std::string& entry, json e, int64_t affected, const char* dedupe = nullptr) {
    json d = {{"entry", entry}, {"event", e}, {"status", e["type"]}, {"mode", "plain"}, {"affected", affected}, {"sql", "…"}};
    if (dedupe) d["dedupe"] = dedupe;
    return rec(t, "C1", Op::write, std::move(d));
}

TEST(PerEventAccountingTest, a_row_published_by_two_dispatchers_counts_once_per_event_and_each_entry_once) {
    const std::vector<HistoryRecord> h = {
        publish(1, "dispatcher1", 1, "1-0", ev(42, "created", 1)), publish(2, "dispatcher2", 1, "1-1", ev(42, "created", 1)),
        publish(3, "dispatcher1", 2, "1-2", ev(42, "paid", 2)),    write(4, "1-0", ev(42, "created", 1), 1),
        write(5, "1-1", ev(42, "created", 1), 1),                  write(6, "1-2", ev(42, "paid", 2), 1)};
    const Accounting a = account(h);
    EXPECT_EQ(a.published, 3);
    EXPECT_EQ(a.processed_once, 3);  // every entry's job ran once ...
    EXPECT_EQ(a.duplicated, 0);
    EXPECT_EQ(a.republished, 1);  // ... but one event came in two entries
    EXPECT_EQ(a.reapplied, 1);    // and was written by both jobs
    EXPECT_EQ(a.skipped, 0);
    EXPECT_EQ(a.republished_examples, (std::vector<std::string>{"#42 created v1 ×2"}));
    EXPECT_EQ(republish_text(a),
              "1 event published again (#42 created v1 ×2) · 1 event written again (#42 created v1 ×2) · 0 entries "
              "skipped as duplicates");
}

TEST(PerEventAccountingTest, a_dedupe_skip_is_the_entrys_job_but_not_a_second_write_of_its_event) {
    const std::vector<HistoryRecord> h = {
        publish(1, "dispatcher", 1, "1-0", ev(42, "created", 1)), publish(2, "dispatcher", 1, "1-1", ev(42, "created", 1)),
        write(4, "1-0", ev(42, "created", 1), 1, "applied"), write(5, "1-1", ev(42, "created", 1), 0, "skipped")};
    const Accounting a = account(h);
    EXPECT_EQ(a.processed_once, 2);
    EXPECT_EQ(a.lost, 0);
    EXPECT_EQ(a.republished, 1);
    EXPECT_EQ(a.reapplied, 0);
    EXPECT_EQ(a.skipped, 1);
    // Nothing per event to say in a plain run.
    EXPECT_EQ(republish_text(account({publish(1, "producer", 0, "1-0", ev(42, "created", 1)),
                                      write(2, "1-0", ev(42, "created", 1), 1)})),
              "");
}

}  // namespace beyond_outbox_test
}  // namespace relab

namespace relab {
namespace beyond_outbox_test {

std::vector<std::string> stream_of(const TrialOutcome& t) {
    std::vector<std::string> out;
    for (const auto& e : t.stream) out.push_back(e.field("order") + ":" + e.field("type"));
    return out;
}

// The three labs on the simulator, as shipped and with their mutants: what each measures.
TEST(BeyondOutboxSimTest, two_naive_dispatchers_publish_every_row_twice_and_a_claim_stops_it) {
    const Scenario s = test::scenario("beyond-a-outbox-multi-naive.json");
    const LabResult lab = test::run_sim(s, 20);
    EXPECT_TRUE(lab.held) << (lab.failures.empty() ? "" : lab.failures.front());
    for (const auto& t : lab.trials) {
        EXPECT_EQ(t.accounting.republished, 4);
        EXPECT_EQ(t.accounting.published, 8);
    }
    for (const auto& m : s.mutants) {  // one dispatcher, or SKIP LOCKED claims: each row once
        const LabResult mutant = test::run_sim(apply_mutant(s, m), 5);
        EXPECT_FALSE(mutant.held) << m.name;
        EXPECT_EQ(mutant.trials.at(0).accounting.republished, 0) << m.name;
    }
}

TEST(BeyondOutboxSimTest, per_key_claims_keep_42s_order_and_row_claims_let_paid_overtake) {
    const Scenario s = test::scenario("beyond-b-outbox-multi-per-key.json");
    const LabResult lab = test::run_sim(s, 20);
    EXPECT_TRUE(lab.held) << (lab.failures.empty() ? "" : lab.failures.front());
    EXPECT_EQ(stream_of(lab.trials.at(0)), (std::vector<std::string>{"43:created", "43:paid", "42:created", "42:paid"}));
    const LabResult rows = test::run_sim(apply_mutant(s, s.mutants.at(0)), 5);  // row-lock-only
    for (const auto& t : rows.trials) {
        EXPECT_EQ(t.accounting.stale_overwrites, 1);
        EXPECT_EQ(t.accounting.republished, 0);  // still no row twice: only the order moved
    }
}

TEST(BeyondOutboxSimTest, a_dispatcher_killed_before_its_mark_republishes_and_the_inbox_skips_the_copy) {
    const Scenario s = test::scenario("beyond-c-outbox-dispatcher-crash.json");
    const LabResult lab = test::run_sim(s, 20);
    EXPECT_TRUE(lab.held) << (lab.failures.empty() ? "" : lab.failures.front());
    for (const auto& t : lab.trials) {
        EXPECT_EQ(stream_of(t), (std::vector<std::string>{"42:created", "42:created", "42:paid"}));
        EXPECT_EQ(t.accounting.skipped, 1);
        EXPECT_EQ(t.accounting.reapplied, 0);
    }
    const LabResult no_dedupe = test::run_sim(apply_mutant(s, s.mutants.at(0)), 5);
    EXPECT_EQ(no_dedupe.trials.at(0).accounting.reapplied, 1);
}

// A dispatcher killed while it holds a claim: its connection, transaction and lock go with it,
// and the other dispatcher takes the row (as PostgreSQL aborts a dead backend's transaction).
TEST(BeyondOutboxSimTest, a_killed_claim_holders_row_is_taken_by_the_other_dispatcher) {
    Scenario s = test::scenario("beyond-b-outbox-multi-per-key.json");
    s.flow().dispatcher.failures.clear();
    FaultSpec kill;
    kill.action = FaultAction::kill;
    kill.matched = true;
    kill.trigger.after = FaultTrigger::After{Op::publish, "", {{"outbox_id", 1}, {"result", "ok"}}};
    kill.trigger.delay_ms = 10;
    s.faults = {kill};
    s.expect = Expectation{};
    const LabResult lab = test::run_sim(s, 10);
    for (const auto& t : lab.trials) {
        // 42 created went out, its holder died before the mark; the survivor publishes it again
        // and then 42 paid: nothing is lost, nothing overtakes.
        EXPECT_EQ(t.accounting.republished, 1) << stream_of(t).size();
        EXPECT_EQ(t.accounting.lost, 0);
        EXPECT_EQ(t.accounting.stale_overwrites, 0);
        EXPECT_EQ(t.final_rows.size(), 2u);
    }
}

}  // namespace beyond_outbox_test
}  // namespace relab
