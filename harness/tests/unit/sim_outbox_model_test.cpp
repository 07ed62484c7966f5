// The in-memory source tables: tmp_src_orders and tmp_outbox as the dispatcher reads them.
#include <gtest/gtest.h>

#include "sim/outbox_model.h"

namespace relab::sim {

TEST(SimOutboxModelTest, changes_get_ids_from_one_and_update_the_source_row) {
    OutboxModel m;
    m.reset({OrderRow{42, "new", 0}});
    EXPECT_EQ(m.record_change(42, "created", 1), 1);
    EXPECT_EQ(m.record_change(43, "created", 1), 2);  // no source row 43: the INSERT still happens
    EXPECT_EQ(m.source_rows().at(0).status, "created");
    EXPECT_EQ(m.source_rows().size(), 1u);
    m.reset({});
    EXPECT_EQ(m.record_change(42, "paid", 2), 1);  // ids restart
}

TEST(SimOutboxModelTest, unpublished_rows_come_by_id_or_by_aggregate_then_id) {
    OutboxModel m;
    m.reset({});
    m.record_change(43, "created", 1);  // 1
    m.record_change(42, "created", 1);  // 2
    m.record_change(43, "paid", 2);     // 3
    m.mark_published(1, "5-0", Nanos{5});
    m.count_failed_attempt(2);
    auto by_id = m.unpublished(OutboxOrder::by_id);
    ASSERT_EQ(by_id.size(), 2u);
    EXPECT_EQ(by_id[0].id, 2);
    EXPECT_EQ(by_id[0].attempts, 1);
    EXPECT_EQ(by_id[1].id, 3);
    m.record_change(42, "paid", 2);  // 4
    auto per_key = m.unpublished(OutboxOrder::by_aggregate_then_id);
    ASSERT_EQ(per_key.size(), 3u);
    EXPECT_EQ(per_key[0].id, 2);
    EXPECT_EQ(per_key[1].id, 4);
    EXPECT_EQ(per_key[2].id, 3);
    EXPECT_EQ(m.outbox()[0].stream_id, "5-0");
}

}  // namespace relab::sim
