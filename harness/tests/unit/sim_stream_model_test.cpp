// The in-memory Redis stream: IDs, consumer groups, the PEL, XACK, XAUTOCLAIM and blocked readers
// served first come, first served.
#include <gtest/gtest.h>

#include "sim/stream_model.h"

namespace relab::sim {

namespace sim_stream_model_test {

constexpr Nanos ms(int64_t v) { return Nanos{v * 1'000'000}; }

Fields ev(const std::string& type) { return {{"order", "42"}, {"type", type}}; }

TEST(SimStreamModelTest, ids_are_the_clock_in_ms_with_a_sequence_that_never_goes_back) {
    StreamModel m;
    EXPECT_EQ(m.xadd("s", ev("a"), ms(1000) + Nanos{5}), "1000-0");
    EXPECT_EQ(m.xadd("s", ev("b"), ms(1000) + Nanos{900'000}), "1000-1");
    EXPECT_EQ(m.xadd("s", ev("c"), ms(1002)), "1002-0");
    EXPECT_EQ(m.xadd("s", ev("d"), ms(900)), "1002-1");  // the clock went back
    const auto all = m.xrange("s");
    ASSERT_EQ(all.size(), 4u);
    EXPECT_EQ(all[3].field("type"), "d");
    EXPECT_EQ(m.last_id("s"), "1002-1");
    EXPECT_EQ(m.length("s"), 4u);
    EXPECT_EQ(m.length("missing"), 0u);
}

TEST(SimStreamModelTest, a_group_created_at_dollar_sees_only_later_entries) {
    StreamModel m;
    m.xadd("s", ev("old"), ms(1));
    m.create_group("s", "g", "$", false);
    m.create_group("s", "from-start", "0", false);
    m.xadd("s", ev("new"), ms(2));
    const auto got = m.xreadgroup("s", "g", "c1", 10, ms(3));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].field("type"), "new");
    EXPECT_EQ(m.xreadgroup("s", "from-start", "c1", 10, ms(3)).size(), 2u);
    EXPECT_THROW(m.create_group("s", "g", "$", false), StreamError);        // BUSYGROUP
    EXPECT_THROW(m.create_group("missing", "g", "$", false), StreamError);  // needs MKSTREAM
    m.create_group("missing", "g", "$", true);
    EXPECT_TRUE(m.drained("missing", "g"));
}

TEST(SimStreamModelTest, xreadgroup_delivers_each_entry_once_with_count_and_tracks_it_as_pending) {
    StreamModel m;
    m.create_group("s", "g", "$", true);
    for (const char* t : {"a", "b", "c"}) m.xadd("s", ev(t), ms(1));
    const auto first = m.xreadgroup("s", "g", "c1", 2, ms(2));
    const auto second = m.xreadgroup("s", "g", "c2", 2, ms(3));
    ASSERT_EQ(first.size(), 2u);
    ASSERT_EQ(second.size(), 1u);
    EXPECT_EQ(second[0].field("type"), "c");
    EXPECT_TRUE(m.xreadgroup("s", "g", "c1", 2, ms(4)).empty());
    const auto pel = m.pending("s", "g");
    ASSERT_EQ(pel.size(), 3u);
    EXPECT_EQ(pel[0].consumer, "c1");
    EXPECT_EQ(pel[2].consumer, "c2");
    EXPECT_EQ(pel[2].delivered_at, ms(3));
    EXPECT_EQ(pel[2].deliveries, 1);
    EXPECT_EQ(m.last_delivered("s", "g"), "1-2");
    EXPECT_FALSE(m.drained("s", "g"));
    EXPECT_THROW(m.xreadgroup("s", "nogroup", "c1", 1, ms(5)), StreamError);
}

TEST(SimStreamModelTest, xack_removes_from_the_pel_once_and_drains_the_group) {
    StreamModel m;
    m.create_group("s", "g", "$", true);
    const std::string id = m.xadd("s", ev("a"), ms(1));
    m.xreadgroup("s", "g", "c1", 1, ms(2));
    EXPECT_EQ(m.xack("s", "g", id), 1);
    EXPECT_EQ(m.xack("s", "g", id), 0);
    EXPECT_EQ(m.xack("s", "other", id), 0);
    EXPECT_TRUE(m.pending("s", "g").empty());
    EXPECT_TRUE(m.drained("s", "g"));
}

TEST(SimStreamModelTest, xautoclaim_takes_only_entries_idle_long_enough_and_pages_with_a_cursor) {
    StreamModel m;
    m.create_group("s", "g", "$", true);
    for (const char* t : {"a", "b", "c"}) m.xadd("s", ev(t), ms(1));
    m.xreadgroup("s", "g", "dead", 2, ms(10));   // a and b, delivered at 10 ms
    m.xreadgroup("s", "g", "alive", 1, ms(90));  // c, delivered at 90 ms
    auto r = m.xautoclaim("s", "g", "rescuer", ms(50), "0-0", 1, ms(100));
    ASSERT_EQ(r.claimed.size(), 1u);
    EXPECT_EQ(r.claimed[0].field("type"), "a");
    EXPECT_EQ(r.next, "1-1");
    r = m.xautoclaim("s", "g", "rescuer", ms(50), r.next, 10, ms(100));
    ASSERT_EQ(r.claimed.size(), 1u);  // b; c is only 10 ms idle
    EXPECT_EQ(r.claimed[0].field("type"), "b");
    EXPECT_EQ(r.next, "0-0");
    const auto pel = m.pending("s", "g");
    EXPECT_EQ(pel[0].consumer, "rescuer");
    EXPECT_EQ(pel[0].deliveries, 2);
    EXPECT_EQ(pel[0].delivered_at, ms(100));
    EXPECT_EQ(pel[2].consumer, "alive");
    // Claimed just now, so not idle any more.
    EXPECT_TRUE(m.xautoclaim("s", "g", "other", ms(50), "0-0", 10, ms(120)).claimed.empty());
}

TEST(SimStreamModelTest, blocked_readers_are_served_first_come_first_served_one_entry_each) {
    StreamModel m;
    m.create_group("s", "g", "$", true);
    const uint64_t first = m.block("s", "g", "c2", 1);
    const uint64_t second = m.block("s", "g", "c1", 1);
    EXPECT_EQ(m.blocked_readers(), 2);
    m.xadd("s", ev("created"), ms(1));
    auto served = m.serve_blocked("s", ms(1));
    ASSERT_EQ(served.size(), 1u);
    EXPECT_EQ(served[0].ticket, first);
    EXPECT_EQ(served[0].entries.at(0).field("type"), "created");
    EXPECT_EQ(m.blocked_tickets(), std::vector<uint64_t>{second});
    m.xadd("s", ev("paid"), ms(1));
    served = m.serve_blocked("s", ms(1));
    ASSERT_EQ(served.size(), 1u);
    EXPECT_EQ(served[0].ticket, second);
    EXPECT_EQ(served[0].entries.at(0).field("type"), "paid");
    EXPECT_EQ(m.pending("s", "g")[1].consumer, "c1");
    EXPECT_EQ(m.blocked_readers(), 0);
}

TEST(SimStreamModelTest, an_unblocked_reader_is_no_longer_served) {
    StreamModel m;
    m.create_group("s", "g", "$", true);
    const uint64_t t = m.block("s", "g", "c1", 1);
    EXPECT_TRUE(m.unblock(t));
    EXPECT_FALSE(m.unblock(t));
    m.xadd("s", ev("a"), ms(1));
    EXPECT_TRUE(m.serve_blocked("s", ms(1)).empty());
    EXPECT_THROW(m.block("s", "missing-group", "c1", 1), StreamError);
}

TEST(SimStreamModelTest, entry_ids_parse_and_print_as_redis_writes_them) {
    EXPECT_EQ(EntryId::parse("1790000000001-3").to_string(), "1790000000001-3");
    EXPECT_EQ(EntryId::parse("17").to_string(), "17-0");
    EXPECT_LT(EntryId::parse("5-9"), EntryId::parse("6-0"));
    EXPECT_THROW(EntryId::parse("x-1"), StreamError);
    EXPECT_THROW(EntryId::parse("1-"), StreamError);
}

}  // namespace sim_stream_model_test
}  // namespace relab::sim
