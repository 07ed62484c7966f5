// The consumer's per-order lock (roles/consumer/lock.h) on the simulator's Redis model: it waits
// for a held key retry_ms at a time, records how many attempts it took, and releases only what is
// still its own.
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "roles/consumer/lock.h"
#include "sim_role_fixture.h"

namespace relab {
namespace consumer_lock_test {

using test::SimRoleWorld;

RoleSettings locked(int64_t ttl_ms = 5000) {
    RoleSettings s;
    s.lock.enabled = true;
    s.lock.ttl_ms = ttl_ms;
    s.lock.retry_ms = 20;
    return s;
}

const Event k_paid{42, "paid", 2};
const StreamEntry k_entry{"5-0", event_fields(k_paid)};

TEST(ConsumerLockTest, the_order_placeholder_is_replaced_in_the_key) {
    LockSpec l;
    EXPECT_EQ(lock_key_for(l, 42), "lock:order:42");
    l.key = "lk:{order}:{order}";
    EXPECT_EQ(lock_key_for(l, 7), "lk:7:7");
}

// Someone else holds lock:order:42 for 50 ms. With round trips of 100 µs, wake-ups of 30 µs and
// retry_ms 20, the attempts reach the server at about 0, 20, 40 and 60 ms: the fourth gets it.
TEST(ConsumerLockTest, acquire_retries_every_retry_ms_until_the_key_is_free_and_records_the_attempts) {
    const RoleSettings s = locked();
    SimRoleWorld w(s);
    w.world.kv().set("lock:order:42", "someone", sim::SetOptions::nx_px(Millis{50}), Nanos{0});
    std::optional<ConsumerLock::Held> held;
    w.spawn("C1", [&](RolePorts& p) {
        ConsumerContext c(s, "C1", p);
        held = ConsumerLock(c).acquire(k_entry, k_paid);
    });
    w.run();
    ASSERT_TRUE(held);
    EXPECT_EQ(held->key, "lock:order:42");
    EXPECT_EQ(held->token, "C1:5-0");
    EXPECT_GE(held->locked_ns, Millis{50}.count() * 1'000'000);
    EXPECT_EQ(w.world.kv().get("lock:order:42", w.world.now()), "C1:5-0");
    const auto acquired = w.records(Op::lock_acquire);
    ASSERT_EQ(acquired.size(), 1u);
    EXPECT_EQ(acquired[0].data.at("attempts"), 4);
    EXPECT_EQ(acquired[0].data.at("key"), "lock:order:42");
    EXPECT_EQ(acquired[0].data.at("ttl_ms"), 5000);
    EXPECT_EQ(record_event(acquired[0])->order, 42);
}

// A free key is taken at the first attempt, after the skew drawn from skew_ms.
TEST(ConsumerLockTest, a_free_key_is_taken_at_once_after_the_skew) {
    RoleSettings s = locked();
    s.lock.skew_ms = {7, 7};
    SimRoleWorld w(s);
    w.spawn("C1", [&](RolePorts& p) {
        ConsumerContext c(s, "C1", p);
        ConsumerLock(c).acquire(k_entry, k_paid);
    });
    w.run();
    const auto acquired = w.records(Op::lock_acquire);
    ASSERT_EQ(acquired.size(), 1u);
    EXPECT_EQ(acquired[0].data.at("attempts"), 1);
    EXPECT_GE(acquired[0].t_ns, Millis{7}.count() * 1'000'000);
}

TEST(ConsumerLockTest, a_lab_without_a_lock_takes_none_and_records_nothing) {
    const RoleSettings s;
    SimRoleWorld w(s);
    bool none = false;
    w.spawn("C1", [&](RolePorts& p) {
        ConsumerContext c(s, "C1", p);
        ConsumerLock lock(c);
        const auto held = lock.acquire(k_entry, k_paid);
        none = !held;
        lock.release(held, k_paid);
    });
    w.run();
    EXPECT_TRUE(none);
    EXPECT_TRUE(w.history.records().empty());
    EXPECT_EQ(w.world.now(), Nanos{0});  // not one call to Redis
}

// Released in time, the key is deleted (result 1); after its TTL ran out and another consumer took
// it, the release deletes nothing (result 0) and the other's key stays, the record saying it was
// held past its ttl_ms.
TEST(ConsumerLockTest, release_deletes_the_key_only_while_it_is_still_its_own) {
    const RoleSettings s = locked(30);
    SimRoleWorld w(s);
    w.spawn("C1", [&](RolePorts& p) {
        ConsumerContext c(s, "C1", p);
        ConsumerLock lock(c);
        lock.release(lock.acquire(k_entry, k_paid), k_paid);
        const auto held = lock.acquire(StreamEntry{"6-0", event_fields(k_paid)}, k_paid);
        p.clock.sleep_for(Millis{40});
        p.kv.set_nx_px("lock:order:42", "C2:7-0", Millis{1000});
        lock.release(held, k_paid);
    });
    w.run();
    const auto released = w.records(Op::lock_release);
    ASSERT_EQ(released.size(), 2u);
    EXPECT_EQ(released[0].data.at("result"), 1);
    EXPECT_EQ(released[0].data.at("method"), "compare-and-delete Lua script");
    EXPECT_EQ(released[1].data.at("result"), 0);
    EXPECT_GT(released[1].data.at("held_ms").get<int64_t>(), 30);
    EXPECT_EQ(w.world.kv().get("lock:order:42", w.world.now()), "C2:7-0");
}

// A failed job's lock goes without a record; and only while it is still the holder's.
TEST(ConsumerLockTest, drop_deletes_the_key_unrecorded) {
    const RoleSettings s = locked();
    SimRoleWorld w(s);
    w.spawn("C1", [&](RolePorts& p) {
        ConsumerContext c(s, "C1", p);
        ConsumerLock lock(c);
        lock.drop(lock.acquire(k_entry, k_paid));
    });
    w.run();
    EXPECT_EQ(w.ops(), (std::vector<std::string>{"lock_acquire"}));
    EXPECT_FALSE(w.world.kv().exists("lock:order:42", w.world.now()));
}

}  // namespace consumer_lock_test
}  // namespace relab
