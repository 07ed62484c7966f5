// RealOutbox::claim_next and the deduplicating RealOrderStore on a real PostgreSQL: two sessions
// stand for two dispatchers; what one holds FOR UPDATE the other skips (SKIP LOCKED), and per key
// the rows behind an aggregate's held first row are no one's. One EmbeddedPostgres for this file.
#include <gtest/gtest.h>

#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "clients/pg_client.h"
#include "process/pg_schema_guard.h"
#include "servers/servers.h"

namespace relab {
namespace outbox_claim_test {

class OutboxClaimTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() { s_pg = std::make_unique<EmbeddedPostgres>(); }
    static void TearDownTestSuite() { s_pg.reset(); }

    void SetUp() override {
        static int counter = 0;
        m_guard = std::make_unique<PgSchemaGuard>(s_pg->endpoint(),
                                                  "relabclaim_" + std::to_string(getpid()) + "_" + std::to_string(++counter));
        m_a = std::make_unique<PgSession>(s_pg->endpoint(), m_guard->name());
        m_b = std::make_unique<PgSession>(s_pg->endpoint(), m_guard->name());
        reset_source_tables(*m_a, {{42, "new", 0}, {43, "new", 0}});
        RealOutbox app(*m_a);
        // 1: 42 created, 2: 43 created, 3: 42 paid, 4: 43 paid
        app.record_change(42, "created", 1);
        app.record_change(43, "created", 1);
        app.record_change(42, "paid", 2);
        app.record_change(43, "paid", 2);
    }
    void TearDown() override {
        m_a.reset();
        m_b.reset();
        m_guard.reset();
    }

    static inline std::unique_ptr<EmbeddedPostgres> s_pg;
    std::unique_ptr<PgSchemaGuard> m_guard;
    std::unique_ptr<PgSession> m_a, m_b;
};

TEST_F(OutboxClaimTest, per_key_claims_skip_an_aggregate_whose_first_row_another_transaction_holds) {
    RealOutbox a(*m_a), b(*m_b);
    a.begin_round();
    ASSERT_EQ(a.claim_next(ClaimScope::aggregate_head, {})->id, 1);
    b.begin_round();
    // Row 1 is A's: B skips it and 42 paid behind it, and takes #43's first row.
    ASSERT_EQ(b.claim_next(ClaimScope::aggregate_head, {})->id, 2);
    b.commit_round();
    b.begin_round();
    const auto next = b.claim_next(ClaimScope::aggregate_head, {43});
    EXPECT_FALSE(next.has_value()) << next->id;  // #43 passed over, #42's first row held by A
    b.commit_round();
    // A publishes row 1 and commits: 42 paid is #42's first row now.
    a.mark_published(1, "1-0");
    a.commit_round();
    b.begin_round();
    EXPECT_EQ(b.claim_next(ClaimScope::aggregate_head, {})->id, 2);  // not marked: B committed nothing
    b.commit_round();
    b.begin_round();
    EXPECT_EQ(b.claim_next(ClaimScope::aggregate_head, {43})->id, 3);
    b.commit_round();
}

TEST_F(OutboxClaimTest, row_claims_take_a_later_row_of_an_aggregate_whose_first_row_is_held) {
    RealOutbox a(*m_a), b(*m_b);
    a.begin_round();
    ASSERT_EQ(a.claim_next(ClaimScope::row, {})->id, 1);
    b.begin_round();
    ASSERT_EQ(b.claim_next(ClaimScope::row, {2})->id, 3);  // 42 paid, while 42 created is A's
    b.commit_round();
    a.commit_round();
    EXPECT_NE(outbox_claim_sql(ClaimScope::row, {2}).find("id NOT IN (2)"), std::string::npos);
}

TEST_F(OutboxClaimTest, the_inbox_applies_an_event_once_and_skips_its_copy) {
    reset_orders_table(*m_a, {{42, "new", 0}});
    reset_inbox_table(*m_a);
    RealOrderStore store(*m_a);
    OrderWrite w{42, "created", 1, WriteMode::plain, true, 1};
    const WriteResult first = store.write_state(w);
    EXPECT_EQ(first.affected, 1);
    EXPECT_FALSE(first.duplicate);
    store.write_state(OrderWrite{42, "paid", 2, WriteMode::plain, true, 2});
    const WriteResult copy = store.write_state(w);
    EXPECT_TRUE(copy.duplicate);
    EXPECT_EQ(copy.affected, 0);
    EXPECT_EQ(store.rows().at(0).status, "paid");  // the copy of created did not go back over paid
    EXPECT_EQ(m_a->exec("SELECT count(*) FROM tmp_inbox").rows.at(0).at(0), "2");
}

}  // namespace outbox_claim_test
}  // namespace relab
