// The simulated world's parts, each alone: the scheduler's event queue and fiber slots, the
// network (a round trip's cost, a link that holds calls), the Redis and PostgreSQL servers'
// availability and connections, and the calls blocked at Redis.
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/blocked_calls.h"
#include "sim/event_queue.h"
#include "sim/fiber_slots.h"
#include "sim/scheduler.h"
#include "sim/sim_network.h"
#include "sim/sim_postgres.h"
#include "sim/sim_redis.h"

namespace relab::sim {
namespace sim_parts_test {

constexpr Nanos us(int64_t v) { return Nanos{v * 1000}; }

void no_op(void*, uint64_t) {}

// Every latency fixed: round trip 100 µs (50 + 50), wake-up 30 µs.
Latency fixed() {
    Latency l;
    l.rtt_min = l.rtt_max = us(100);
    l.wakeup_min = l.wakeup_max = us(30);
    return l;
}

// Events come out by time, then tie, whatever the order they went in; the earliest one waits
// beside the heap, and an earlier one pushed after it takes its place.
TEST(EventQueueTest, events_come_out_in_time_then_tie_order) {
    EventQueue q;
    EXPECT_EQ(q.front(), nullptr);
    const std::vector<std::pair<int64_t, uint64_t>> in = {{30, 1}, {10, 5}, {20, 0}, {10, 2}, {5, 9}, {30, 0}, {20, 7}};
    for (size_t i = 0; i < in.size(); ++i) q.push({in[i].first, in[i].second, &no_op, nullptr, i});
    ASSERT_NE(q.front(), nullptr);
    EXPECT_EQ(q.front()->t, 5);
    std::vector<std::pair<int64_t, uint64_t>> out;
    while (q.front()) {
        const EventQueue::Event e = q.pop();
        out.emplace_back(e.t, e.tie);
    }
    EXPECT_EQ(out, (std::vector<std::pair<int64_t, uint64_t>>{{5, 9}, {10, 2}, {10, 5}, {20, 0}, {20, 7}, {30, 0}, {30, 1}}));
    q.push({1, 0, &no_op, nullptr, 0});
    q.push({2, 0, &no_op, nullptr, 0});
    q.clear();
    EXPECT_EQ(q.front(), nullptr);
}

// Ids in spawn order from 0; a reset frees every slot, which the next fibers reuse from 0 again;
// an id no fiber in use has is refused.
TEST(FiberSlotsTest, fibers_are_numbered_in_order_and_a_reset_reuses_the_slots) {
    FiberSlots slots(64 * 1024);
    EXPECT_EQ(slots.add("a", [] {}), 0);
    EXPECT_EQ(slots.add("b", [] {}), 1);
    EXPECT_EQ(slots.size(), 2);
    EXPECT_EQ(slots.live(), 2);
    EXPECT_TRUE(slots[1].wake_pending);
    EXPECT_EQ(slots[1].fiber->name(), "b");
    EXPECT_EQ(slots.unfinished(), (std::vector<std::string>{"a", "b"}));
    EXPECT_THROW(slots[2], std::out_of_range);
    EXPECT_THROW(slots[kNoFiber], std::out_of_range);
    const Fiber* first = slots[0].fiber.get();
    slots.reset();
    EXPECT_EQ(slots.size(), 0);
    EXPECT_EQ(slots.live(), 0);
    EXPECT_THROW(slots[0], std::out_of_range);
    EXPECT_EQ(slots.add("c", [] {}), 0);
    EXPECT_EQ(slots[0].fiber.get(), first);  // the same fiber, its stack kept
}

// A round trip runs its op at the server half a round trip after the call and returns after the
// other half; a blackholed link holds the call until the heal lets it go on.
TEST(SimNetworkTest, a_round_trip_costs_one_rtt_and_a_blackhole_holds_the_call_until_the_heal) {
    Scheduler sched;
    sched.reset(Nanos{0}, 1);
    SimNetwork net(sched);
    net.reset(fixed());
    SimConnection conn;
    conn.link.blackhole = true;
    Nanos ran_at{-1}, back_at{-1};
    int64_t released = -1;
    sched.spawn("role", [&] {
        const int v = net.round_trip([&] {
            ran_at = sched.now();
            return 7;
        }, &conn);
        EXPECT_EQ(v, 7);
        back_at = sched.now();
    }, Nanos{0});
    sched.spawn("nemesis", [&] {
        sched.sleep_for(Millis{1});
        released = net.set_link(conn, LinkMode{});  // the heal
    }, Nanos{0});
    EXPECT_EQ(sched.run(Millis{100}), Scheduler::Stop::idle);
    EXPECT_EQ(released, 1);
    EXPECT_EQ(ran_at, Millis{1} + us(50));
    EXPECT_EQ(back_at, Millis{1} + us(100));
}

// A connection opened before a kill fails its next call once, then connects again; a CLIENT KILL
// does the same to one connection; calls are refused while the server is down.
TEST(SimRedisTest, a_dead_connection_fails_once_and_a_down_server_refuses_calls) {
    SimRedis redis;
    redis.reset();
    SimConnection conn;
    redis.open_connection(conn);
    auto call = [&](SimConnection* c) {
        try {
            return redis.at([] { return std::string("ok"); }, c);
        } catch (const relab::KvError& e) {  // the client's error, not the key model's
            return std::string(e.what());
        }
    };
    EXPECT_EQ(call(&conn), "ok");
    redis.kill();
    EXPECT_FALSE(redis.up());
    EXPECT_EQ(call(nullptr), "Connection refused: the simulated redis-server is down");
    redis.start(true);
    EXPECT_EQ(call(&conn), "server closed the connection");
    EXPECT_EQ(call(&conn), "ok");
    EXPECT_TRUE(redis.close(conn));
    EXPECT_EQ(call(&conn), "server closed the connection");
    EXPECT_FALSE(redis.close(conn));  // closed already
}

// A paused replica keeps the state of its pause; promoted after the primary's kill, that state is
// the server's.
TEST(SimRedisTest, a_promoted_replica_has_what_it_had_when_paused) {
    SimRedis redis;
    redis.reset();
    redis.kv().set("before", "1", SetOptions{}, Nanos{0});
    redis.pause_replica();
    EXPECT_TRUE(redis.replica_paused());
    redis.kv().set("after", "1", SetOptions{}, Nanos{0});
    redis.kill();
    redis.promote_replica();
    EXPECT_TRUE(redis.up());
    EXPECT_FALSE(redis.replica_paused());
    EXPECT_TRUE(redis.kv().exists("before", Nanos{0}));
    EXPECT_FALSE(redis.kv().exists("after", Nanos{0}));
}

// A transaction's connection is live only on the incarnation it was opened on, while up.
TEST(SimPostgresTest, a_connection_is_live_until_a_kill_and_a_statement_on_it_then_fails_once) {
    SimPostgres pg;
    pg.reset();
    SimConnection conn;
    pg.open_connection(conn);
    EXPECT_TRUE(pg.connection_live(conn));
    pg.kill();
    EXPECT_FALSE(pg.connection_live(conn));
    EXPECT_THROW(pg.at([] { return 1; }, nullptr), StoreUnavailable);
    pg.start();
    EXPECT_FALSE(pg.connection_live(conn));
    EXPECT_THROW(pg.at([] { return 1; }, &conn), StoreUnavailable);
    EXPECT_EQ(pg.at([] { return 1; }, &conn), 1);
    EXPECT_TRUE(pg.connection_live(conn));
}

// A reader blocked at the server is served by the next entry, a reply half and a wake-up later;
// the barrier answers once a reader is blocked; a dropped fiber no longer waits.
TEST(BlockedCallsTest, a_blocked_reader_is_served_by_the_next_entry_and_the_barrier_sees_it_blocked) {
    Scheduler sched;
    sched.reset(Nanos{0}, 1);
    SimNetwork net(sched);
    net.reset(fixed());
    SimRedis redis;
    redis.reset();
    redis.streams().create_group("orders", "g", "$", true);
    BlockedCalls calls(sched, net, redis);
    std::vector<StreamEntry> got;
    Nanos got_at{-1}, barrier_at{-1};
    sched.spawn("C1", [&] {
        got = calls.xreadgroup("orders", "g", "C1", 1, Millis{0}, nullptr);
        got_at = sched.now();
    }, Nanos{0});
    sched.spawn("producer", [&] {
        calls.wait_readers_blocked(1, Millis{100});  // C1 blocks at 50 µs; answered at 100 µs
        barrier_at = sched.now();
        sched.sleep_for(Millis{1});
        redis.streams().xadd("orders", Fields{{"type", "paid"}}, sched.now());  // at the server, at once
        calls.serve("orders");
    }, Nanos{0});
    // Idle once the barrier's timeout, if it was queued, has fired as a no-op.
    EXPECT_EQ(sched.run(Millis{1000}), Scheduler::Stop::idle);
    EXPECT_EQ(barrier_at, us(100));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got_at, us(100) + Millis{1} + us(50 + 30));

    sched.reset(Nanos{0}, 1);
    calls.reset();
    FiberId waiter = kNoFiber;
    bool cancelled = false;
    waiter = sched.spawn("supervisor", [&] {
        try {
            calls.wait_stream_change();
        } catch (const FiberCancelled&) {
            cancelled = true;
            throw;
        }
    }, Nanos{0});
    sched.spawn("nemesis", [&] {
        sched.sleep_for(Millis{1});
        sched.kill(waiter);
        EXPECT_TRUE(calls.drop_fiber(waiter));
        EXPECT_FALSE(calls.drop_fiber(waiter));
        sched.wake(waiter, sched.now());
    }, Nanos{0});
    EXPECT_EQ(sched.run(Millis{100}), Scheduler::Stop::idle);
    EXPECT_TRUE(cancelled);
}

}  // namespace sim_parts_test
}  // namespace relab::sim
