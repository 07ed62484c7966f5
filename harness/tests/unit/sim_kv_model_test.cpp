// The in-memory Redis string keys: SET's conditions and expiry options, lazy expiry on virtual
// time, and compare-and-delete.
#include <gtest/gtest.h>

#include "sim/kv_model.h"

namespace relab::sim {

namespace sim_kv_model_test {

constexpr Nanos ms(int64_t v) { return Nanos{v * 1'000'000}; }

SetOptions with(SetOptions::Condition c, std::optional<Millis> px = std::nullopt, bool keepttl = false, bool get = false) {
    SetOptions o;
    o.condition = c;
    o.px = px;
    o.keepttl = keepttl;
    o.get = get;
    return o;
}

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

TEST(SimKvModelTest, ttl_rounds_to_the_nearest_second_as_redis_does) {
    KvModel kv;
    kv.set("k", "v", with(SetOptions::Condition::always, Millis{60'000}), ms(0));
    EXPECT_EQ(kv.ttl("k", ms(0)), 60);
    EXPECT_EQ(kv.ttl("k", ms(700)), 59);    // 59.3 s left
    EXPECT_EQ(kv.ttl("k", ms(1'400)), 59);  // 58.6 s left: Redis's (ms + 500) / 1000
    EXPECT_EQ(kv.ttl("k", ms(1'600)), 58);
    kv.set("p", "v", SetOptions{}, ms(0));
    EXPECT_EQ(kv.ttl("p", ms(5)), -1);
    EXPECT_EQ(kv.ttl("missing", ms(5)), -2);
    EXPECT_EQ(kv.ttl("k", ms(60'001)), -2);
}

TEST(SimKvModelTest, the_middlewares_two_phases_claim_with_nx_get_then_store_with_xx) {
    KvModel kv;
    // Phase 1: SET k {in_progress} NX GET EX 60 (EX 60 is PX 60000).
    auto claim = with(SetOptions::Condition::nx, Millis{60'000}, false, /*get=*/true);
    auto r = kv.set("idem:k", "in_progress", claim, ms(0));
    EXPECT_TRUE(r.written);
    EXPECT_FALSE(r.previous);
    // A second claim does not reset the TTL and reads the first one's value.
    r = kv.set("idem:k", "in_progress-2", claim, ms(1'200));
    EXPECT_FALSE(r.written);
    EXPECT_EQ(r.previous, "in_progress");
    EXPECT_EQ(kv.ttl("idem:k", ms(1'200)), 59);
    // Phase 2, two-tier: SET k {done} XX EX 86400 gives the long TTL.
    r = kv.set("idem:k", "done", with(SetOptions::Condition::xx, Millis{86'400'000}), ms(2'000));
    EXPECT_TRUE(r.written);
    EXPECT_EQ(kv.ttl("idem:k", ms(2'000)), 86'400);
    // One-tier: XX KEEPTTL keeps the claim's deadline.
    kv.set("idem:j", "in_progress", claim, ms(0));
    kv.set("idem:j", "done", with(SetOptions::Condition::xx, std::nullopt, /*keepttl=*/true), ms(1'000));
    EXPECT_EQ(kv.pttl("idem:j", ms(1'000)), 59'000);
    // The store after the claim expired writes nothing: XX needs the key.
    EXPECT_FALSE(kv.set("idem:j", "done", with(SetOptions::Condition::xx, Millis{1000}), ms(61'000)).written);
    EXPECT_FALSE(kv.exists("idem:j", ms(61'000)));
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

}  // namespace sim_kv_model_test
}  // namespace relab::sim
