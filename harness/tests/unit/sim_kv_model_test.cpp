// The in-memory Redis string keys: SET's conditions and expiry options, lazy expiry on virtual
// time, and compare-and-delete.
#include <gtest/gtest.h>

#include "sim/kv_model.h"

namespace relab::sim {

namespace {

constexpr Nanos ms(int64_t v) { return Nanos{v * 1'000'000}; }

SetOptions with(SetOptions::Condition c, std::optional<Millis> px = std::nullopt, bool keepttl = false, bool get = false) {
    SetOptions o;
    o.condition = c;
    o.px = px;
    o.keepttl = keepttl;
    o.get = get;
    return o;
}

}  // namespace

TEST(SimKvModelTest, nx_sets_only_a_missing_key_and_xx_only_an_existing_one) {
    KvModel kv;
    EXPECT_FALSE(kv.set("k", "v1", with(SetOptions::Condition::xx), ms(0)).written);
    EXPECT_FALSE(kv.exists("k", ms(0)));
    EXPECT_TRUE(kv.set("k", "v1", SetOptions::nx_px(Millis{500}), ms(0)).written);
    EXPECT_FALSE(kv.set("k", "v2", SetOptions::nx_px(Millis{500}), ms(1)).written);
    EXPECT_EQ(kv.get("k", ms(1)), "v1");
    EXPECT_TRUE(kv.set("k", "v3", with(SetOptions::Condition::xx), ms(2)).written);
    EXPECT_EQ(kv.get("k", ms(2)), "v3");
}

TEST(SimKvModelTest, a_key_expires_just_after_its_deadline_on_virtual_time) {
    KvModel kv;
    kv.set("lock", "me", SetOptions::nx_px(Millis{500}), ms(100));
    EXPECT_TRUE(kv.exists("lock", ms(600)));  // at the deadline: still there (Redis: now > deadline)
    EXPECT_EQ(kv.pttl("lock", ms(599)), 1);
    EXPECT_FALSE(kv.exists("lock", ms(600) + Nanos{1}));
    EXPECT_EQ(kv.pttl("lock", ms(601)), -2);
    // An expired lock can be taken again.
    EXPECT_TRUE(kv.set("lock", "other", SetOptions::nx_px(Millis{500}), ms(601)).written);
}

TEST(SimKvModelTest, plain_set_clears_the_ttl_and_keepttl_keeps_it) {
    KvModel kv;
    kv.set("k", "a", with(SetOptions::Condition::always, Millis{100}), ms(0));
    kv.set("k", "b", with(SetOptions::Condition::always, std::nullopt, /*keepttl=*/true), ms(10));
    EXPECT_EQ(kv.pttl("k", ms(10)), 90);
    EXPECT_FALSE(kv.exists("k", ms(101)));
    kv.set("k", "c", with(SetOptions::Condition::always, Millis{100}), ms(200));
    kv.set("k", "d", SetOptions{}, ms(210));
    EXPECT_EQ(kv.pttl("k", ms(210)), -1);
    EXPECT_TRUE(kv.exists("k", ms(10'000)));
}

TEST(SimKvModelTest, get_returns_the_previous_value_whether_or_not_the_condition_held) {
    KvModel kv;
    auto r = kv.set("k", "first", with(SetOptions::Condition::nx, std::nullopt, false, /*get=*/true), ms(0));
    EXPECT_TRUE(r.written);
    EXPECT_FALSE(r.previous.has_value());
    r = kv.set("k", "second", with(SetOptions::Condition::nx, std::nullopt, false, true), ms(1));
    EXPECT_FALSE(r.written);
    EXPECT_EQ(r.previous, "first");
    r = kv.set("k", "third", with(SetOptions::Condition::always, std::nullopt, false, true), ms(2));
    EXPECT_TRUE(r.written);
    EXPECT_EQ(r.previous, "first");
}

TEST(SimKvModelTest, bad_options_are_refused_like_redis_does) {
    KvModel kv;
    EXPECT_THROW(kv.set("k", "v", with(SetOptions::Condition::always, Millis{0}), ms(0)), KvError);
    EXPECT_THROW(kv.set("k", "v", with(SetOptions::Condition::always, Millis{10}, /*keepttl=*/true), ms(0)), KvError);
}

TEST(SimKvModelTest, compare_and_delete_removes_only_our_own_live_token) {
    KvModel kv;
    kv.set("lock", "C1:1-0", SetOptions::nx_px(Millis{500}), ms(0));
    EXPECT_EQ(kv.delete_if_equals("lock", "C2:1-1", ms(10)), 0);
    EXPECT_TRUE(kv.exists("lock", ms(10)));
    EXPECT_EQ(kv.delete_if_equals("lock", "C1:1-0", ms(20)), 1);
    EXPECT_FALSE(kv.exists("lock", ms(20)));
    // S4c: the lock expired and someone else holds it now; the late release must not delete it.
    kv.set("lock", "C1:1-0", SetOptions::nx_px(Millis{500}), ms(0));
    kv.set("lock", "C2:1-1", SetOptions::nx_px(Millis{500}), ms(520));
    EXPECT_EQ(kv.delete_if_equals("lock", "C1:1-0", ms(800)), 0);
    EXPECT_EQ(kv.get("lock", ms(800)), "C2:1-1");
    EXPECT_EQ(kv.del("lock", ms(800)), 1);
    EXPECT_EQ(kv.del("lock", ms(800)), 0);
}

}  // namespace relab::sim
