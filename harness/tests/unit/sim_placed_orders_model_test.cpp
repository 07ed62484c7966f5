// The in-memory orders table of the idempotency labs: ids from a sequence, and layer 4's unique
// index on idem_key refusing a second order for the same request.
#include <gtest/gtest.h>

#include "sim/placed_orders_model.h"

namespace relab::sim {

TEST(SimPlacedOrdersModelTest, without_layer_4_every_insert_is_a_row_with_the_next_id) {
    PlacedOrdersModel m;
    m.reset(false);
    EXPECT_EQ(m.place_order(7, "7:8f3a", "{\"qty\":1}"), 1);
    EXPECT_EQ(m.place_order(7, "7:8f3a", "{\"qty\":5}"), 2);  // the same request again: a duplicate row
    EXPECT_EQ(m.place_order(9, "9:8f3a", "{\"qty\":1}"), 3);
    ASSERT_EQ(m.orders().size(), 3u);
    EXPECT_EQ(m.orders()[1].id, 2);
    EXPECT_EQ(m.orders()[1].user_id, 7);
    EXPECT_EQ(m.orders()[1].idem_key, "7:8f3a");
    EXPECT_EQ(m.orders()[1].payload, "{\"qty\":5}");
    EXPECT_FALSE(m.unique_idem_key());
}

TEST(SimPlacedOrdersModelTest, layer_4_refuses_a_second_order_for_the_same_key_and_burns_its_id) {
    PlacedOrdersModel m;
    m.reset(true);
    EXPECT_EQ(m.place_order(7, "7:k", "p"), 1);
    try {
        m.place_order(7, "7:k", "p");
        FAIL() << "expected layer 4 to refuse the duplicate";
    } catch (const DuplicateOrderError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("orders_idem_key"), std::string::npos) << what;
        EXPECT_NE(what.find("(7:k)"), std::string::npos) << what;
    }
    EXPECT_EQ(m.orders().size(), 1u);
    // nextval is not rolled back with the refused INSERT: PostgreSQL's next id is 3, not 2.
    EXPECT_EQ(m.place_order(9, "9:k", "p"), 3);
    EXPECT_EQ(m.orders().size(), 2u);
}

TEST(SimPlacedOrdersModelTest, reset_empties_the_table_restarts_ids_and_sets_the_index) {
    PlacedOrdersModel m;
    m.reset(true);
    m.place_order(7, "7:k", "p");
    m.reset(false);
    EXPECT_TRUE(m.orders().empty());
    EXPECT_EQ(m.place_order(7, "7:k", "p"), 1);
    EXPECT_NO_THROW(m.place_order(7, "7:k", "p"));  // no index any more
    m.reset(true);
    EXPECT_EQ(m.place_order(7, "7:k", "p"), 1);
    EXPECT_THROW(m.place_order(7, "7:k", "p"), DuplicateOrderError);
}

}  // namespace relab::sim
