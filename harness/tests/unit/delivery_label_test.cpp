// The one label of how a receive came, and the timeline drawing it on its receive markers.
#include <gtest/gtest.h>

#include "report/text/delivery_label.h"
#include "report/text/timeline.h"
#include "report_fixture.h"

namespace relab {
namespace delivery_label_test {

using nlohmann::json;

TEST(DeliveryLabelTest, a_first_delivery_of_a_new_entry_and_an_old_record_have_no_label) {
    EXPECT_EQ(delivery_label({{"deliveries", 1}, {"via", "new"}}), "");
    EXPECT_EQ(delivery_label({{"entry", "1-0"}}), "");  // written before relab kept deliveries and via
    EXPECT_EQ(delivery_label(json()), "");
    EXPECT_EQ(delivery_label(json::array()), "");
}

TEST(DeliveryLabelTest, a_redelivery_says_its_count_and_how_it_came) {
    EXPECT_EQ(delivery_label({{"deliveries", 2}, {"via", "claim"}}), "delivery 2, claimed");
    EXPECT_EQ(delivery_label({{"deliveries", 3}, {"via", "pending"}}), "delivery 3, from its pending list");
    EXPECT_EQ(delivery_label({{"deliveries", 2}, {"via", "xclaim"}}), "delivery 2, via xclaim");
    EXPECT_EQ(delivery_label({{"deliveries", 4}}), "delivery 4");            // no via: a new read
    EXPECT_EQ(delivery_label({{"deliveries", 2}, {"via", 7}}), "delivery 2");  // a via that is no text: likewise
    // A claim is labelled even when the group counts it as the first delivery.
    EXPECT_EQ(delivery_label({{"deliveries", 1}, {"via", "claim"}}), "delivery 1, claimed");
}

TEST(DeliveryLabelTest, the_timeline_labels_each_receive_marker_with_it) {
    TrialOutcome t;
    json pending = {{"entry", "1-0"}, {"event", test::event(42, "created", 1)}, {"deliveries", 3}, {"via", "pending"}};
    t.history = {
        test::receive(1, 1, "C1", "1-0", test::event(42, "created", 1)),
        test::rec(1, 5, "C1", Op::receive, pending),
    };
    const Timeline tl = trial_timeline(t, false);
    std::vector<std::string> labels;
    for (const auto& m : tl.markers)
        if (m.kind == TimelineMarker::Kind::receive) labels.push_back(m.label);
    EXPECT_EQ(labels, (std::vector<std::string>{"", "delivery 3, from its pending list"}));
}

}  // namespace delivery_label_test
}  // namespace relab
