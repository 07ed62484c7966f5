// The in-memory tmp_orders: row locks held to the end of the transaction, READ COMMITTED's
// re-check of the WHERE on the row's new version after a wait, REPEATABLE READ's serialization
// failure, rollback. The cases are the article's "CAS when two UPDATEs overlap".
#include <gtest/gtest.h>

#include "roles/order_sql.h"
#include "sim/table_model.h"

namespace relab::sim {

namespace sim_table_model_test {

OrderUpdate cas(const std::string& status, int64_t version) {
    return order_update(OrderWrite{42, status, version, WriteMode::cas});
}

OrderRow row42(TableModel& t) { return t.rows().at(0); }

class SimTableModelTest : public ::testing::Test {
protected:
    void SetUp() override { table.reset({OrderRow{42, "new", 0}}); }
    TableModel table;
};

TEST_F(SimTableModelTest, autocommit_cas_applies_the_newer_version_and_skips_the_older) {
    EXPECT_EQ(table.update_autocommit(cas("paid", 2)), 1);
    EXPECT_EQ(table.update_autocommit(cas("created", 1)), 0);
    EXPECT_EQ(row42(table).status, "paid");
    EXPECT_EQ(row42(table).version, 2);
    const OrderUpdate plain = order_update(OrderWrite{42, "created", 1, WriteMode::plain});
    EXPECT_EQ(table.update_autocommit(plain), 1);
    EXPECT_EQ(row42(table).status, "created");
    EXPECT_EQ(row42(table).version, 2);  // plain writes leave the version alone
    EXPECT_EQ(table.update_autocommit(OrderUpdate{7, "x", std::nullopt, VersionGuard::none, 0}), 0);  // no such row
}

TEST_F(SimTableModelTest, read_committed_waits_for_the_row_lock_then_rechecks_where_on_the_new_version) {
    const TxnId a = table.begin();
    EXPECT_EQ(table.update(a, cas("paid", 2)).affected, 1);
    const TxnId b = table.begin(Isolation::read_committed);
    const StatementResult waiting = table.update(b, cas("created", 1));  // sees version 0: WHERE holds
    ASSERT_TRUE(waiting.blocked());
    EXPECT_EQ(waiting.blocked_by, a);
    EXPECT_EQ(table.waiting_for(b), a);
    EXPECT_TRUE(table.resume(b).blocked());  // a still open
    EXPECT_EQ(row42(table).status, "new");   // a's change is not committed yet
    EXPECT_TRUE(table.commit(a));
    const StatementResult done = table.resume(b);
    ASSERT_TRUE(done.done());
    EXPECT_EQ(done.affected, 0);  // version is 2 now: 2 < 1 fails
    EXPECT_TRUE(table.commit(b));
    EXPECT_EQ(row42(table).status, "paid");
    EXPECT_EQ(row42(table).version, 2);
}

TEST_F(SimTableModelTest, read_committed_recheck_that_still_holds_updates_the_committed_version) {
    const TxnId a = table.begin();
    table.update(a, cas("created", 1));
    const TxnId b = table.begin();
    ASSERT_TRUE(table.update(b, cas("paid", 2)).blocked());
    table.commit(a);
    EXPECT_EQ(table.resume(b).affected, 1);  // 1 < 2 still holds on the new version
    table.commit(b);
    EXPECT_EQ(row42(table).status, "paid");
    EXPECT_EQ(row42(table).version, 2);
}

TEST_F(SimTableModelTest, a_rolled_back_holder_releases_the_row_and_the_waiter_updates_the_old_version) {
    const TxnId a = table.begin();
    table.update(a, cas("paid", 2));
    const TxnId b = table.begin();
    ASSERT_TRUE(table.update(b, cas("created", 1)).blocked());
    table.rollback(a);
    EXPECT_EQ(table.resume(b).affected, 1);
    table.commit(b);
    EXPECT_EQ(row42(table).status, "created");
    EXPECT_EQ(row42(table).version, 1);
}

TEST_F(SimTableModelTest, repeatable_read_fails_with_40001_when_the_holder_commits_a_change) {
    const TxnId a = table.begin();
    table.update(a, cas("paid", 2));
    const TxnId b = table.begin(Isolation::repeatable_read);
    ASSERT_TRUE(table.update(b, cas("created", 1)).blocked());
    table.commit(a);
    const StatementResult r = table.resume(b);
    ASSERT_TRUE(r.failed());
    EXPECT_EQ(r.sqlstate, "40001");
    EXPECT_EQ(r.message, "could not serialize access due to concurrent update");
    EXPECT_TRUE(table.failed(b));
    // The failed transaction accepts nothing but its end; COMMIT rolls it back.
    EXPECT_EQ(table.update(b, cas("created", 1)).sqlstate, "25P02");
    EXPECT_FALSE(table.commit(b));
    // The retry, in a new REPEATABLE READ transaction, sees version 2 and skips.
    const TxnId retry = table.begin(Isolation::repeatable_read);
    const StatementResult again = table.update(retry, cas("created", 1));
    ASSERT_TRUE(again.done());
    EXPECT_EQ(again.affected, 0);
    EXPECT_TRUE(table.commit(retry));
    EXPECT_EQ(row42(table).status, "paid");
}

TEST_F(SimTableModelTest, repeatable_read_goes_through_when_the_holder_rolls_back) {
    const TxnId a = table.begin();
    table.update(a, cas("paid", 2));
    const TxnId b = table.begin(Isolation::repeatable_read);
    ASSERT_TRUE(table.update(b, cas("created", 1)).blocked());
    table.rollback(a);
    EXPECT_EQ(table.resume(b).affected, 1);
    EXPECT_TRUE(table.commit(b));
    EXPECT_EQ(row42(table).status, "created");
}

TEST_F(SimTableModelTest, repeatable_read_keeps_its_first_snapshot_and_read_committed_does_not) {
    const TxnId rr = table.begin(Isolation::repeatable_read);
    const TxnId rc = table.begin(Isolation::read_committed);
    EXPECT_EQ(table.select(rr).at(0).status, "new");  // the snapshot is taken here
    EXPECT_EQ(table.select(rc).at(0).status, "new");
    table.update_autocommit(cas("paid", 2));
    EXPECT_EQ(table.select(rr).at(0).status, "new");
    EXPECT_EQ(table.select(rc).at(0).status, "paid");
    // A write in RR to a row changed after its snapshot fails at once (the changer committed).
    EXPECT_EQ(table.update(rr, cas("shipped", 3)).sqlstate, "40001");
}

TEST_F(SimTableModelTest, a_transaction_sees_its_own_uncommitted_changes_and_others_do_not) {
    const TxnId a = table.begin();
    table.update(a, cas("paid", 2));
    EXPECT_EQ(table.select(a).at(0).status, "paid");
    const TxnId b = table.begin();
    EXPECT_EQ(table.select(b).at(0).status, "new");
    EXPECT_EQ(table.update(a, cas("shipped", 3)).affected, 1);  // its own lock does not block it
    table.commit(a);
    EXPECT_EQ(table.select(b).at(0).status, "shipped");
}

TEST_F(SimTableModelTest, insert_of_an_existing_id_violates_the_primary_key) {
    const TxnId t = table.begin();
    const StatementResult dup = table.insert(t, OrderRow{42, "x", 0});
    EXPECT_EQ(dup.sqlstate, "23505");
    table.rollback(t);
    const TxnId u = table.begin();
    EXPECT_EQ(table.insert(u, OrderRow{43, "new", 0}).affected, 1);
    EXPECT_EQ(table.rows().size(), 1u);  // not committed yet
    table.commit(u);
    EXPECT_EQ(table.rows().size(), 2u);
}

TEST_F(SimTableModelTest, autocommit_into_a_locked_row_is_a_caller_bug) {
    const TxnId a = table.begin();
    table.update(a, cas("paid", 2));
    EXPECT_THROW(table.update_autocommit(cas("created", 1)), TableModelError);
    table.commit(a);
    EXPECT_EQ(row42(table).status, "paid");
}

// P4 on the table: the change events' history goes wrong reordered (a removal before its add is
// refused) and redelivered (an add applied twice); the same history as states applied by version
// ends right both ways.
OrderUpdate amount_write(WriteMode mode, const std::string& status, int64_t version, int64_t delta, int64_t amount) {
    OrderWrite w{42, status, version, mode};
    w.delta = delta;
    w.amount = amount;
    return order_update(w);
}

TEST_F(SimTableModelTest, change_events_go_wrong_reordered_and_redelivered_and_states_by_version_do_not) {
    // amount_added v1 (+30, state 30) and amount_removed v2 (-30, state 0), the removal first.
    EXPECT_EQ(table.update_autocommit(amount_write(WriteMode::delta, "amount_removed", 2, -30, 0)), 0);  // nothing to remove
    EXPECT_EQ(table.update_autocommit(amount_write(WriteMode::delta, "amount_added", 1, 30, 30)), 1);
    EXPECT_EQ(row42(table).amount, 30);
    EXPECT_EQ(row42(table).version, 0);  // a change carries no version
    table.reset({OrderRow{42, "new", 0}});
    EXPECT_EQ(table.update_autocommit(amount_write(WriteMode::cas_state, "amount_removed", 2, -30, 0)), 1);
    EXPECT_EQ(table.update_autocommit(amount_write(WriteMode::cas_state, "amount_added", 1, 30, 30)), 0);
    EXPECT_EQ(row42(table).amount, 0);
    EXPECT_EQ(row42(table).status, "amount_removed");
    EXPECT_EQ(row42(table).version, 2);

    // amount_added v1 (+30, state 30) applied twice around v2 (+20, state 50).
    for (const WriteMode mode : {WriteMode::delta, WriteMode::cas_state}) {
        table.reset({OrderRow{42, "new", 0}});
        table.update_autocommit(amount_write(mode, "amount_added", 2, 20, 50));
        table.update_autocommit(amount_write(mode, "amount_added", 1, 30, 30));
        table.update_autocommit(amount_write(mode, "amount_added", 1, 30, 30));
        EXPECT_EQ(row42(table).amount, mode == WriteMode::delta ? 80 : 50) << to_string(mode);
    }
}

// The floor is the WHERE's, checked on the row the statement sees, as PostgreSQL does: a removal
// while the add's transaction is still open sees amount 0, skips the row without waiting for its
// lock, and is refused.
TEST_F(SimTableModelTest, a_removal_while_the_add_is_uncommitted_is_refused_without_waiting) {
    const TxnId add = table.begin();
    EXPECT_EQ(table.update(add, amount_write(WriteMode::delta, "amount_added", 1, 30, 30)).affected, 1);
    const TxnId remove = table.begin();
    const StatementResult r = table.update(remove, amount_write(WriteMode::delta, "amount_removed", 2, -30, 0));
    EXPECT_FALSE(r.blocked());
    EXPECT_EQ(r.affected, 0);
    EXPECT_TRUE(table.commit(add));
    EXPECT_TRUE(table.commit(remove));
    EXPECT_EQ(row42(table).amount, 30);
}

}  // namespace sim_table_model_test
}  // namespace relab::sim
