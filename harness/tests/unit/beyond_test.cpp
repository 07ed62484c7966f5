// Issue 12 "beyond": an order with no row yet (absent), the upsert and insert-then-update writes,
// the side effect per job and the checker's side_effects_out_of_order.
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "check/accounting.h"
#include "check/outcome.h"
#include "roles/order_sql.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"
#include "sim/table_model.h"
#include "sim_fixture.h"

namespace relab {
namespace beyond_test {

using nlohmann::json;

json doc() {
    return json::parse(R"({
        "id": "t-1", "title": "T", "kind": "workload",
        "orders": [ { "id": 42, "absent": true } ],
        "events": [ { "order": 42, "type": "created", "version": 1 },
                    { "order": 42, "type": "paid", "version": 2 } ],
        "write": { "mode": "upsert" },
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

json event(int64_t order, const std::string& type, int64_t v) { return {{"order", order}, {"type", type}, {"v", v}}; }

HistoryRecord side_effect(int64_t t_ns, int64_t seq, int64_t order, const std::string& type, int64_t v) {
    return rec(t_ns, "C1", Op::side_effect,
               {{"entry", "1-0"}, {"event", event(order, type, v)}, {"order", order}, {"version", v}, {"seq", seq},
                {"applied", true}});
}

// The articles' eviction claims: a flood into another database of the same instance ("db"), and
// into the cache's own instance ("redis-cache", which "servers": {"cache": {...}} starts).
json eviction_doc() {
    return json::parse(R"({
        "id": "e", "title": "T", "kind": "workload",
        "idem": { "clients": [ { "name": "A", "requests": [ { "client_key": "k", "at_ms": [0, 3500] } ] } ] },
        "servers": { "redis": { "maxmemory-policy": "noeviction" }, "cache": { "maxmemory": "3mb" } },
        "faults": [ { "action": "flood", "target": "redis-cache", "at_ms": 2200, "bytes": 8000000, "db": 1 } ],
        "expect": { "wrong": "none" }
    })");
}

TEST(ClaimsLoaderTest, a_flood_names_its_database_and_may_hit_the_caches_own_instance) {
    const Scenario s = parse_scenario(eviction_doc().dump(), "e.json");
    ASSERT_TRUE(s.servers.cache);
    EXPECT_EQ(s.servers.cache_config.at("maxmemory"), "3mb");
    ASSERT_EQ(s.faults.size(), 1u);
    EXPECT_EQ(s.faults[0].target, Target::of(FaultTarget::redis_cache));
    EXPECT_EQ(s.faults[0].db, 1);

    json no_cache = eviction_doc();
    no_cache["servers"].erase("cache");
    test::expect_load_error(no_cache, "/faults/0/target", "\"cache\"");
    json bad_db = eviction_doc();
    bad_db["faults"][0]["db"] = 16;
    test::expect_load_error(bad_db, "/faults/0/db", "");
    json db_elsewhere = eviction_doc();
    db_elsewhere["faults"][0] = json::parse(R"({"action": "observe", "target": "redis", "at_ms": 100, "db": 1})");
    test::expect_load_error(db_elsewhere, "/faults/0/db", "applies to a flood only");
    // The cache's instance is a flood's target only: nothing else may restart or kill it.
    json restart_cache = eviction_doc();
    restart_cache["faults"][0] = json::parse(R"({"action": "restart", "target": "redis-cache", "at_ms": 100})");
    test::expect_load_error(restart_cache, "/faults/0/target", "");
}

TEST(BeyondLoaderTest, an_absent_order_has_no_initial_row_and_the_new_write_modes_load) {
    const Scenario s = parse_scenario(doc().dump(), "f.json");
    ASSERT_EQ(s.flow().orders.size(), 1u);
    EXPECT_TRUE(s.flow().orders[0].absent);
    EXPECT_EQ(s.flow().write.mode, WriteMode::upsert);
    EXPECT_FALSE(s.flow().write.side_effect);
    EXPECT_TRUE(initial_order_rows(s.flow()).empty());

    json d = doc();
    d["orders"].push_back({{"id", 43}, {"initial_status", "created"}, {"initial_version", 1}});
    d["write"] = {{"mode", "insert_then_update"}, {"side_effect", true}};
    const Scenario t = parse_scenario(d.dump(), "f.json");
    EXPECT_EQ(t.flow().write.mode, WriteMode::insert_then_update);
    EXPECT_TRUE(t.flow().write.side_effect);
    const std::vector<OrderRow> rows = initial_order_rows(t.flow());
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].id, 43);
    EXPECT_EQ(rows[0].status, "created");
    EXPECT_EQ(to_string(WriteMode::upsert), "upsert");
    EXPECT_EQ(to_string(WriteMode::insert_then_update), "insert_then_update");
}

TEST(BeyondLoaderTest, bad_absent_and_side_effect_fields_are_refused_with_their_path) {
    json d = doc();
    d["orders"][0]["absent"] = "yes";
    test::expect_load_error(d, "/orders/0/absent", "true or false");

    d = doc();
    d["orders"][0]["initial_status"] = "new";
    test::expect_load_error(d, "/orders/0/initial_status", "absent order has no row");

    d = doc();
    d["write"]["mode"] = "cas";  // an UPDATE never creates the row
    test::expect_load_error(d, "/orders/0/absent", "\"upsert\"");

    d = doc();
    d["write"]["mode"] = "merge";
    test::expect_load_error(d, "/write/mode", "insert_then_update");

    d = doc();
    d["write"]["side_effect"] = 1;
    test::expect_load_error(d, "/write/side_effect", "true or false");

    d = doc();
    d["write"]["side_effect"] = true;
    d["expect"]["side_effects_out_of_order"] = "some";
    test::expect_load_error(d, "/expect/side_effects_out_of_order", "count");

    d = doc();
    d["expect"]["side_effects_out_of_order"] = {{"at_least", 1}};
    test::expect_load_error(d, "/expect/side_effects_out_of_order", "\"side_effect\": true");
    d["write"]["side_effect"] = true;
    EXPECT_TRUE(parse_scenario(d.dump(), "f.json").expect.every_trial.band("side_effects_out_of_order").has_value());
}

TEST(BeyondSqlTest, the_upsert_and_the_naive_fallback_are_the_statements_the_lab_names) {
    EXPECT_EQ(order_write_sql({42, "paid", 2, WriteMode::upsert}),
              "INSERT INTO tmp_orders (id, status, version) VALUES (42, 'paid', 2) ON CONFLICT (id) DO UPDATE SET "
              "status = EXCLUDED.status, version = EXCLUDED.version WHERE tmp_orders.version < EXCLUDED.version");
    EXPECT_EQ(order_write_sql({42, "created", 1, WriteMode::insert_then_update}),
              "INSERT INTO tmp_orders (id, status, version) VALUES (42, 'created', 1)");
    EXPECT_EQ(order_update_sql(order_fallback_update({42, "created", 1, WriteMode::insert_then_update})),
              "UPDATE tmp_orders SET status = 'created', version = 1 WHERE id = 42");
    EXPECT_EQ(side_effect_sql(42, "o'k", 3),
              "INSERT INTO tmp_side_effects (order_id, event_type, version) VALUES (42, 'o''k', 3) RETURNING seq");
}

TEST(BeyondTableModelTest, the_upsert_inserts_a_missing_row_then_applies_only_newer_versions) {
    sim::TableModel t;
    t.reset({});
    const sim::StatementResult paid = t.upsert_autocommit(OrderRow{42, "paid", 2}, VersionGuard::below);
    EXPECT_TRUE(paid.done());
    EXPECT_EQ(paid.affected, 1);
    EXPECT_TRUE(paid.inserted);
    const sim::StatementResult created = t.upsert_autocommit(OrderRow{42, "created", 1}, VersionGuard::below);
    EXPECT_TRUE(created.done());
    EXPECT_EQ(created.affected, 0);  // ON CONFLICT DO UPDATE ... WHERE 2 < 1: refused
    EXPECT_FALSE(created.inserted);
    const sim::StatementResult same = t.upsert_autocommit(OrderRow{42, "paid again", 2}, VersionGuard::below);
    EXPECT_EQ(same.affected, 0);  // an equal version is not newer
    const sim::StatementResult shipped = t.upsert_autocommit(OrderRow{42, "shipped", 3}, VersionGuard::below);
    EXPECT_EQ(shipped.affected, 1);
    EXPECT_FALSE(shipped.inserted);
    ASSERT_EQ(t.rows().size(), 1u);
    EXPECT_EQ(t.rows()[0].status, "shipped");
    EXPECT_EQ(t.rows()[0].version, 3);
}

TEST(BeyondTableModelTest, the_upsert_waits_for_a_row_locked_by_an_open_transaction) {
    sim::TableModel t;
    t.reset({OrderRow{42, "new", 0}});
    const sim::TxnId a = t.begin();
    ASSERT_EQ(t.update(a, OrderUpdate{42, "created", 1, VersionGuard::below, 1}).affected, 1);
    const sim::TxnId b = t.begin();
    const sim::StatementResult blocked = t.upsert(b, OrderRow{42, "paid", 2}, VersionGuard::below);
    EXPECT_TRUE(blocked.blocked());
    EXPECT_EQ(blocked.blocked_by, a);
    ASSERT_TRUE(t.commit(a));
    const sim::StatementResult resumed = t.resume(b);  // re-checks 1 < 2 on the committed row
    EXPECT_EQ(resumed.affected, 1);
    ASSERT_TRUE(t.commit(b));
    EXPECT_EQ(t.rows().at(0).status, "paid");
}

TEST(BeyondTableModelTest, a_second_insert_of_the_row_fails_with_23505_and_leaves_it_alone) {
    sim::TableModel t;
    t.reset({});
    EXPECT_EQ(t.insert_autocommit(OrderRow{42, "paid", 2}).affected, 1);
    const sim::StatementResult again = t.insert_autocommit(OrderRow{42, "created", 1});
    EXPECT_TRUE(again.failed());
    EXPECT_EQ(again.sqlstate, "23505");
    EXPECT_EQ(t.rows().at(0).status, "paid");
    EXPECT_EQ(t.send_side_effect(42, "paid", 2), 1);
    EXPECT_EQ(t.send_side_effect(42, "created", 1), 2);
    EXPECT_EQ(t.side_effects().size(), 2u);
    t.reset({});
    EXPECT_TRUE(t.side_effects().empty());
    EXPECT_EQ(t.send_side_effect(42, "created", 1), 1);  // seq restarts with the table
}

TEST(BeyondCheckerTest, side_effects_out_of_order_counts_orders_whose_rows_invert_their_versions) {
    // #42: paid (seq 1) before created (seq 2): out of order. #43: in order. The table's seq decides,
    // not the time the record was written.
    const std::vector<HistoryRecord> history = {side_effect(10, 1, 42, "paid", 2), side_effect(20, 3, 42, "created", 1),
                                                side_effect(15, 2, 43, "created", 1), side_effect(5, 4, 43, "paid", 2)};
    const Accounting a = account(history);
    EXPECT_EQ(a.side_effects, 4);
    EXPECT_EQ(a.side_effects_out_of_order, 1);
    ASSERT_EQ(a.side_effect_examples.size(), 1u);
    EXPECT_EQ(a.side_effect_examples[0], "#42: paid (v2) sent before created (v1)");
    EXPECT_FALSE(a.clean());
    EXPECT_NE(accounting_text(a).find("4 side effects sent · 1 order out of version order"), std::string::npos)
        << accounting_text(a);
    EXPECT_EQ(account({side_effect(1, 1, 42, "created", 1), side_effect(2, 2, 42, "paid", 2)}).side_effects_out_of_order,
              0);
}

TEST(BeyondCheckerTest, the_expectation_band_reads_the_measure_and_refuses_a_trial_without_side_effects) {
    Scenario s;
    s.id = "t";
    s.flow().orders = {OrderSpec{42, "new", 0, "paid"}};
    s.expect.every_trial.bands["side_effects_out_of_order"] = Band{1, std::nullopt};
    const std::vector<HistoryRecord> inverted = {side_effect(1, 1, 42, "paid", 2), side_effect(2, 2, 42, "created", 1)};
    EXPECT_TRUE(check_trial(s, 1, 9, inverted, {{42, "paid", 2}}, {}).unmet.empty());
    const std::vector<HistoryRecord> in_order = {side_effect(1, 1, 42, "created", 1), side_effect(2, 2, 42, "paid", 2)};
    const TrialOutcome t = check_trial(s, 1, 9, in_order, {{42, "paid", 2}}, {});
    ASSERT_EQ(t.unmet.size(), 1u);
    EXPECT_NE(t.unmet[0].find("side_effects_out_of_order >= 1 (measured 0)"), std::string::npos) << t.unmet[0];
    const TrialOutcome none = check_trial(s, 1, 9, {}, {{42, "paid", 2}}, {});
    ASSERT_EQ(none.unmet.size(), 1u);
    EXPECT_NE(none.unmet[0].find("no side effect was sent"), std::string::npos) << none.unmet[0];
}

TEST(BeyondCheckerTest, a_side_effect_table_that_disagrees_with_the_history_is_the_harness_failure) {
    const std::vector<HistoryRecord> history = {side_effect(1, 1, 42, "paid", 2), side_effect(2, 2, 42, "created", 1)};
    EXPECT_NO_THROW(check_side_effects_recorded(history, {{1, 42, "paid", 2}, {2, 42, "created", 1}}));
    EXPECT_THROW(check_side_effects_recorded(history, {{1, 42, "paid", 2}}), HarnessError);
    EXPECT_THROW(check_side_effects_recorded(history, {{1, 42, "paid", 2}, {2, 42, "created", 2}}), HarnessError);
}

}  // namespace beyond_test
}  // namespace relab
