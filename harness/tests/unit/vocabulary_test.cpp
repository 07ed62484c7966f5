// The vocabularies kept as tables: the expectation terms (scenario/terms.h), the accounting's
// figures (check/accounting.h) and the write modes (ports/write_mode.h). Every row is exercised
// through what reads it: a term is loaded, described and checked; a figure is written to a JSON
// report, read back and digested; a mode is loaded, passed to a role and written through the one
// write path, on a recording store and on the simulated table.
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "check/outcome.h"
#include "report/compare/lab_digest.h"
#include "report/reporter.h"
#include "roles/order_sql.h"
#include "roles/order_write.h"
#include "roles/role_settings.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"
#include "sim/sim_ports.h"
#include "sim/sim_world.h"
#include "sim_fixture.h"

namespace relab {
namespace vocabulary_test {

using nlohmann::json;

json workload_doc() {
    return json::parse(R"({
        "id": "t-1", "title": "T", "kind": "workload",
        "orders": [ { "id": 42 } ],
        "events": [ { "order": 42, "type": "created", "version": 1 },
                    { "order": 42, "type": "paid", "version": 2 } ],
        "expect": { "wrong": "all" }
    })");
}

Scenario parse(const json& doc) { return parse_scenario(doc.dump(), "f.json"); }

// A value of the term's shape that the loader accepts in a workload lab.
json sample_value(const TermRow& row) {
    switch (row.shape) {
        case TermShape::final_status: return {{"42", "paid"}};
        case TermShape::stale_overwrites: return {{"order", 42}, {"by", "created"}, {"over", "paid"}};
        case TermShape::figure: return {{"at_least", 1}};
        case TermShape::figures: return {{figure_names(row.table).front(), {{"at_least", 1}}}};
        case TermShape::has:
        case TermShape::never:
        case TermShape::sequence: return json::array({{{"op", "ack"}}});
        case TermShape::stream: return json::array({"42:paid"});
        case TermShape::publish_delay: return json::array({{{"order", 42}, {"min", 0}, {"max", 5}}});
    }
    return nullptr;
}

// The workload doc with what the term needs to be measured.
json doc_for(const TermRow& row) {
    json doc = workload_doc();
    if (row.needs == TermNeeds::side_effects) doc["write"]["side_effect"] = true;
    if (row.needs == TermNeeds::soak) doc["soak"] = {{"drain_ms", 100}};
    if (row.needs == TermNeeds::isolation) doc["write"]["isolation"] = "repeatable_read";
    return doc;
}

TEST(VocabularyTest, every_term_is_read_under_its_keys_described_the_same_and_refused_in_a_session_lab) {
    for (const TermRow& row : term_rows()) {
        SCOPED_TRACE(std::string(row.name));
        const std::string top(row.top_name.empty() ? row.name : row.top_name);
        json doc = doc_for(row);
        doc["expect"][top] = sample_value(row);
        doc["expect"]["every_wrong_trial"] = {{std::string(row.name), sample_value(row)}};
        const Scenario s = parse(doc);
        EXPECT_TRUE(s.expect.every_trial.states(row));
        EXPECT_TRUE(s.expect.every_wrong_trial.states(row));
        EXPECT_FALSE(s.expect.every_trial.describe().empty());
        EXPECT_EQ(s.expect.every_trial.describe(), s.expect.every_wrong_trial.describe());

        json session = json::parse(R"({"id": "s", "title": "S", "kind": "sessions", "expect": {"wrong": "none"},
            "cases": [{"title": "c", "sessions": [{"name": "A", "steps": [{"sql": "SELECT 1"}]}]}]})");
        session["expect"][top] = sample_value(row);
        test::expect_load_error(session, "/expect/" + top, "applies only to kind \"workload\"");
    }
}

TEST(VocabularyTest, a_term_whose_figure_the_lab_does_not_measure_is_refused_naming_what_to_add) {
    for (const TermRow& row : term_rows()) {
        if (row.needs == TermNeeds::nothing) continue;
        SCOPED_TRACE(std::string(row.name));
        json doc = workload_doc();
        doc["expect"]["every_wrong_trial"] = {{std::string(row.name), sample_value(row)}};
        test::expect_load_error(doc, "/expect/every_wrong_trial/" + std::string(row.name),
                                std::string(needs_text(row.needs)));
    }
}

// Every band on an accounting figure: loaded, described in its words, and checked against the
// figure its row names (a trial with none of it misses "at least 1", one with one meets it).
TEST(VocabularyTest, every_figure_term_round_trips_load_describe_check) {
    for (const TermRow& row : term_rows()) {
        if (row.shape != TermShape::figure) continue;
        SCOPED_TRACE(std::string(row.name));
        const AccountingFigure* figure = accounting_figure(row.figure);
        ASSERT_NE(figure, nullptr);
        json doc = doc_for(row);
        doc["expect"][std::string(row.name)] = sample_value(row);
        const Scenario s = parse(doc);
        ASSERT_TRUE(s.expect.every_trial.band(row.name).has_value());
        EXPECT_EQ(s.expect.every_trial.describe(), std::string(row.words) + " >= 1");

        TrialOutcome t;
        t.accounting.side_effects = 1;  // a side effect was sent: their figures are measured
        if (figure->count == &Accounting::side_effects) t.accounting.side_effects = 0;
        evaluate_trial(s, t);
        EXPECT_EQ(t.unmet, std::vector<std::string>{std::string(row.name) + " >= 1 (measured 0)"});
        t.accounting.*figure->count = 1;
        evaluate_trial(s, t);
        EXPECT_TRUE(t.unmet.empty());
    }
}

TEST(VocabularyTest, a_side_effect_term_in_a_trial_that_sent_none_is_no_measurement) {
    json doc = workload_doc();
    doc["write"]["side_effect"] = true;
    doc["expect"]["side_effects_out_of_order"] = 0;
    TrialOutcome t;
    evaluate_trial(parse(doc), t);
    EXPECT_EQ(t.unmet, std::vector<std::string>{"side_effects_out_of_order = 0: no side effect was sent"});
}

// A lab whose accounting holds a distinct count and example for every figure.
LabResult lab_with_every_figure() {
    LabResult lab;
    lab.scenario = parse(workload_doc());
    TrialOutcome t;
    t.trial = 1;
    int n = 0;
    for (const AccountingFigure& f : accounting_figures()) {
        t.accounting.*f.count = ++n;
        if (f.examples) t.accounting.*f.examples = {"e" + std::to_string(n)};
    }
    lab.trials.push_back(t);
    summarize(lab);
    return lab;
}

TEST(VocabularyTest, every_accounting_figure_survives_the_json_report_and_reaches_the_digest) {
    RunReport run;
    run.labs.push_back(lab_with_every_figure());
    const Accounting& written = run.labs[0].trials[0].accounting;
    const RunReport read = run_from_json(run_to_json(run));
    EXPECT_EQ(read.labs.at(0).trials.at(0).accounting, written);
    const LabDigest digest = digest_lab(run.labs[0]);
    for (const AccountingFigure& f : accounting_figures())
        EXPECT_EQ(digest.accounting.at(std::string(f.name)), written.*f.count) << f.name;
}

TEST(VocabularyTest, the_sum_adds_every_figure_and_the_flags_decide_clean) {
    Accounting a, total;
    for (const AccountingFigure& f : accounting_figures()) a.*f.count = 2;
    total += a;
    total += a;
    for (const AccountingFigure& f : accounting_figures()) {
        EXPECT_EQ(total.*f.count, 4) << f.name;
        Accounting one;
        one.*f.count = 1;
        EXPECT_EQ(one.clean(), f.flag == AccountingFlag::none) << f.name;
    }
}

TEST(VocabularyTest, every_write_mode_is_spelt_once_for_the_loader_the_roles_and_the_records) {
    for (const WriteModeInfo& m : k_write_modes) {
        SCOPED_TRACE(std::string(m.name));
        EXPECT_EQ(to_string(m.value), m.name);
        EXPECT_EQ(write_mode_named(m.name), m.value);
        json doc = workload_doc();
        doc["write"] = {{"mode", m.name}};
        // A mode that inserts may find its order absent; an UPDATE needs the row.
        if (m.statement != WriteStatement::update) doc["orders"][0]["absent"] = true;
        // A mode that writes the amount needs events that carry one.
        if (m.amount != AmountWrite::none)
            for (auto& e : doc["events"]) e["delta"] = 10;
        const Scenario s = parse(doc);
        EXPECT_EQ(s.flow().write.mode, m.value);
        EXPECT_EQ(role_settings_from_json(role_settings_to_json(role_settings(s))).write.mode, m.value);
    }
    test::expect_load_error(json::parse(R"({"id": "t", "title": "T", "kind": "workload", "orders": [{"id": 42}],
        "events": [{"order": 42, "type": "paid", "version": 1}], "write": {"mode": "nope"}, "expect": {"wrong": "none"}})"),
                            "/write/mode", "one of \"plain\", \"cas\", \"upsert\", \"insert_then_update\"");
}

// P4's events: the loader adds each order's changes up by version into the amount each event
// carries, and refuses a lab whose amount modes have nothing to apply or whose source history
// goes below 0.
TEST(VocabularyTest, events_with_a_delta_carry_their_orders_amount_by_version) {
    json doc = workload_doc();
    doc["events"] = json::parse(R"([{"order": 42, "type": "removed", "version": 3, "delta": -20},
                                    {"order": 42, "type": "added", "version": 1, "delta": 30},
                                    {"order": 42, "type": "added", "version": 2, "delta": 5}])");
    doc["write"] = {{"mode", "cas_state"}};
    doc["orders"][0]["expected_final"] = {{"status", "removed"}, {"amount", 15}};
    const Scenario s = parse(doc);
    ASSERT_EQ(s.flow().events.size(), 3u);
    EXPECT_EQ(s.flow().events[0].amount, 15);
    EXPECT_EQ(s.flow().events[1].amount, 30);
    EXPECT_EQ(s.flow().events[2].amount, 35);
    EXPECT_EQ(s.flow().orders[0].expected_final, (FinalState{"removed", 15}));
    EXPECT_TRUE(carries_amounts(s.flow()));
    EXPECT_EQ(role_settings_from_json(role_settings_to_json(role_settings(s))).events.at(0).amount, 15);

    json below = doc;
    below["events"][0]["delta"] = -40;
    test::expect_load_error(below, "/events/0/delta", "below 0");
    json some = doc;
    some["events"][1].erase("delta");
    test::expect_load_error(some, "/events/1/delta", "give every event one");
    json none = workload_doc();
    none["write"] = {{"mode", "delta"}};
    test::expect_load_error(none, "/write/mode", "give every event a \"delta\"");
}

// A store that records the statements the write path asks of it and answers as scripted.
class RecordingStatements : public OrderStatements {
public:
    std::vector<std::string> calls;
    std::optional<int64_t> inserted = 1;  // nullopt: the INSERT hits a unique violation
    Upserted upserted{1, true};
    int64_t update(const OrderUpdate& u) override {
        calls.push_back("update " + order_update_sql(u));
        return 1;
    }
    std::vector<int64_t> update_all(const std::vector<OrderUpdate>& us) override {
        for (const auto& u : us) calls.push_back("batch " + order_update_sql(u));
        return std::vector<int64_t>(us.size(), 1);
    }
    std::optional<int64_t> update_once(const OrderWrite& w, const OrderUpdate& u) override {
        calls.push_back("once " + inbox_insert_sql(w) + "; " + order_update_sql(u));
        return 1;
    }
    std::optional<int64_t> insert(const OrderRow& row) override {
        calls.push_back("insert " + order_insert_sql(row));
        return inserted;
    }
    Upserted upsert(const OrderRow& row, VersionGuard guard) override {
        calls.push_back("upsert " + order_upsert_sql(row, guard));
        return upserted;
    }
};

TEST(VocabularyTest, every_write_mode_runs_the_statement_its_row_names_through_the_one_write_path) {
    for (const WriteModeInfo& m : k_write_modes) {
        SCOPED_TRACE(std::string(m.name));
        const OrderWrite w{42, "paid", 2, m.value};
        RecordingStatements db;
        const WriteResult r = write_order_state(w, db);
        EXPECT_EQ(r.affected, 1);
        ASSERT_EQ(db.calls.size(), 1u);
        switch (m.statement) {
            case WriteStatement::update:
                EXPECT_EQ(db.calls[0], "update " + order_write_sql(w));
                EXPECT_EQ(r.row_action, "");
                EXPECT_EQ(write_order_states({w}, db).at(0).sql, order_write_sql(w));
                EXPECT_EQ(db.calls.back(), "batch " + order_write_sql(w));
                break;
            case WriteStatement::upsert:
                EXPECT_EQ(db.calls[0], "upsert " + order_write_sql(w));
                EXPECT_EQ(r.row_action, "inserted");
                break;
            case WriteStatement::insert_then_update: {
                EXPECT_EQ(db.calls[0], "insert " + order_write_sql(w));
                EXPECT_EQ(r.row_action, "inserted");
                RecordingStatements taken;
                taken.inserted = std::nullopt;
                const WriteResult u = write_order_state(w, taken);
                EXPECT_TRUE(u.insert_conflict);
                EXPECT_EQ(u.row_action, "updated");
                EXPECT_EQ(taken.calls.back(), "update " + order_update_sql(order_fallback_update(w)));
                break;
            }
        }
        EXPECT_EQ(r.sql, order_write_sql(w));
    }
}

TEST(VocabularyTest, an_inbox_write_claims_the_event_and_updates_in_one_transaction) {
    OrderWrite w{42, "paid", 2, WriteMode::cas, true, 2};
    RecordingStatements db;
    const WriteResult r = write_order_state(w, db);
    EXPECT_EQ(db.calls, std::vector<std::string>{"once " + inbox_insert_sql(w) + "; " + order_write_sql(w)});
    EXPECT_EQ(r.sql, inbox_insert_sql(w) + "; " + order_write_sql(w));
    EXPECT_THROW(batched_write_sql(w), std::logic_error);
}

// On the simulated table, paid (v2) and then a late created (v1): which modes let the late write
// through is the row's guard.
TEST(VocabularyTest, every_write_mode_applies_its_guard_on_the_simulated_table) {
    for (const WriteModeInfo& m : k_write_modes) {
        SCOPED_TRACE(std::string(m.name));
        sim::SimWorld world;
        world.reset(sim::Latency{}, Nanos{0}, 1);
        world.orders().reset({OrderRow{42, "new", 0}});
        sim::SimOrderStore store(world);
        WriteResult late;
        world.scheduler().spawn("C1", [&] {
            store.write_state(OrderWrite{42, "paid", 2, m.value});
            late = store.write_state(OrderWrite{42, "created", 1, m.value});
        }, Nanos{0});
        world.scheduler().run(Millis{100});
        const OrderRow row = world.orders().rows().at(0);
        const bool refused = m.guard != VersionGuard::none;
        EXPECT_EQ(late.affected, refused ? 0 : 1);
        EXPECT_EQ(row.status, refused ? "paid" : "created");
        EXPECT_EQ(row.version, m.sets_version ? (refused ? 2 : 1) : 0);
        EXPECT_EQ(row.amount, 0);  // neither write carried an amount or a change
    }
}

}  // namespace vocabulary_test
}  // namespace relab
