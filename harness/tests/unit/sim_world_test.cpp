// The simulated network and servers: a port call takes one round trip, a blocked reader is
// answered when an entry arrives (plus its wake-up), or when BLOCK runs out.
#include <gtest/gtest.h>

#include "sim/sim_ports.h"
#include "sim/sim_world.h"

namespace relab::sim {

namespace sim_world_test {

constexpr Nanos us(int64_t v) { return Nanos{v * 1000}; }

// Every latency fixed: round trip 100 µs (50 + 50), wake-up 30 µs, processes start at once.
Latency fixed() {
    Latency l;
    l.rtt_min = l.rtt_max = us(100);
    l.wakeup_min = l.wakeup_max = us(30);
    return l;
}

class SimWorldTest : public ::testing::Test {
protected:
    void SetUp() override {
        world.reset(fixed(), Nanos{0}, 1);
        world.streams().create_group("orders", "g", "$", true);
    }
    SimWorld world;
};

TEST_F(SimWorldTest, a_port_call_costs_one_round_trip_and_runs_at_the_server_halfway) {
    SimKv kv(world);
    Nanos done{-1};
    bool set = false;
    world.scheduler().spawn("C1", [&] {
        set = kv.set_nx_px("lock", "me", Millis{1});
        done = world.now();
    }, Nanos{0});
    world.scheduler().run(Millis{100});
    EXPECT_TRUE(set);
    EXPECT_EQ(done, us(100));
    // Set at the server at 50 µs with PX 1: there until 1050 µs inclusive.
    EXPECT_TRUE(world.kv().exists("lock", us(1050)));
    EXPECT_FALSE(world.kv().exists("lock", us(1051)));
}

TEST_F(SimWorldTest, a_blocked_reader_gets_the_entry_a_reply_half_and_a_wakeup_after_the_xadd) {
    SimStream stream(world);
    SimClock clock(world);
    Nanos received_at{-1};
    std::vector<StreamEntry> got;
    world.scheduler().spawn("C1", [&] {
        got = stream.xreadgroup("g", "C1", "orders", 1, Millis{2000});
        received_at = clock.now();
    }, Nanos{0});
    world.scheduler().spawn("producer", [&] {
        stream.wait_readers_blocked(1, Millis{1000});  // C1 blocks at 50 µs; answer at 100 µs
        EXPECT_EQ(clock.now(), us(100));
        clock.sleep_for(us(1000));                     // wakes at 1130 µs
        stream.xadd("orders", {{{"type", "created"}}}); // at the server at 1180 µs
    }, Nanos{0});
    // Idle only after C1's BLOCK timer (2 s) has fired as a no-op.
    EXPECT_EQ(world.scheduler().run(Millis{5000}), Scheduler::Stop::idle);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].field("type"), "created");
    EXPECT_EQ(received_at, us(1180 + 50 + 30));
}

TEST_F(SimWorldTest, block_runs_out_with_an_empty_reply_and_unblock_ends_it_early) {
    SimStream stream(world);
    Nanos first_empty{-1}, second_empty{-1};
    world.scheduler().spawn("C1", [&] {
        EXPECT_TRUE(stream.xreadgroup("g", "C1", "orders", 1, Millis{10}).empty());
        first_empty = world.now();
        EXPECT_TRUE(stream.xreadgroup("g", "C1", "orders", 1, Millis{10'000}).empty());
        second_empty = world.now();
    }, Nanos{0});
    world.scheduler().spawn("admin", [&] {
        world.scheduler().sleep_for(Millis{20});
        world.unblock_all_readers();  // CLIENT UNBLOCK at 20 ms
    }, Nanos{0});
    world.scheduler().run(Millis{100'000});
    EXPECT_EQ(first_empty, us(50) + Millis{10} + us(50 + 30));
    EXPECT_EQ(second_empty, Millis{20} + us(50 + 30));
}

TEST_F(SimWorldTest, the_start_barrier_times_out_with_an_error_naming_the_count) {
    SimStream stream(world);
    std::string error;
    world.scheduler().spawn("producer", [&] {
        try {
            stream.wait_readers_blocked(2, Millis{5});
        } catch (const SimError& e) {
            error = e.what();
        }
    }, Nanos{0});
    world.scheduler().run(Millis{100});
    EXPECT_EQ(error, "wait_readers_blocked: only 0 of 2 readers blocked after 5 ms");
}

TEST_F(SimWorldTest, a_server_error_comes_back_to_the_caller_as_an_exception) {
    SimStream stream(world);
    bool threw = false;
    world.scheduler().spawn("C1", [&] {
        try {
            stream.xreadgroup("no-such-group", "C1", "orders", 1, Millis{10});
        } catch (const relab::KvError& e) {  // an error reply, as a real client throws it (RedisError)
            threw = e.kind() == relab::KvError::Kind::reply && std::string(e.what()).find("NOGROUP") != std::string::npos;
        }
    }, Nanos{0});
    world.scheduler().run(Millis{100});
    EXPECT_TRUE(threw);
}

TEST_F(SimWorldTest, the_order_store_returns_the_statement_text_and_affected_rows) {
    world.orders().reset({OrderRow{42, "new", 0}});
    SimOrderStore store(world);
    WriteResult paid, stale;
    world.scheduler().spawn("C1", [&] {
        paid = store.write_state(OrderWrite{42, "paid", 2, WriteMode::cas});
        stale = store.write_state(OrderWrite{42, "created", 1, WriteMode::cas});
    }, Nanos{0});
    world.scheduler().run(Millis{100});
    EXPECT_EQ(paid.affected, 1);
    EXPECT_EQ(stale.affected, 0);
    EXPECT_EQ(stale.sql, "UPDATE tmp_orders SET status = 'created', version = 1 WHERE id = 42 AND version < 1");
    EXPECT_EQ(world.now(), us(200));
}

TEST_F(SimWorldTest, the_orders_table_and_the_idempotency_commands_cost_a_round_trip_each) {
    SimKv kv(world);
    SimOrderTable table(world);
    world.placed_orders().reset(true);
    std::vector<Nanos> at;
    KvSetResult claim;
    std::optional<std::string> value;
    int64_t first = 0, deleted = 0;
    bool refused = false;
    world.scheduler().spawn("A", [&] {
        KvSetOptions o;
        o.condition = KvSetOptions::Condition::nx;
        o.get = true;
        o.ttl = Millis{60'000};
        claim = kv.set("idem:k", "in_progress", o);
        at.push_back(world.now());
        first = table.place_order(7, "7:k", "p");
        at.push_back(world.now());
        try {
            table.place_order(7, "7:k", "p");
        } catch (const DuplicateOrderError&) {
            refused = true;
        }
        at.push_back(world.now());
        value = kv.get("idem:k");
        deleted = kv.del("idem:k");
        at.push_back(world.now());
    }, Nanos{0});
    world.scheduler().run(Millis{100});
    EXPECT_TRUE(claim.written);
    EXPECT_FALSE(claim.previous);
    EXPECT_EQ(first, 1);
    EXPECT_TRUE(refused);  // layer 4, raised at the server, reaches the caller after the reply half
    EXPECT_EQ(value, "in_progress");
    EXPECT_EQ(deleted, 1);
    EXPECT_EQ(at, (std::vector<Nanos>{us(100), us(200), us(300), us(500)}));
    EXPECT_EQ(world.placed_orders().orders().size(), 1u);
    // Claimed at the server at 50 µs with EX 60: 60 s from then.
    EXPECT_FALSE(world.kv().exists("idem:k", us(500)));
}

TEST_F(SimWorldTest, wait_on_the_replicaless_server_answers_zero_after_its_timeout) {
    SimKv kv(world);
    int64_t none = -1, some = -1;
    Nanos none_at{0}, some_at{0};
    world.scheduler().spawn("A", [&] {
        none = kv.wait_replicas(0, Millis{100});
        none_at = world.now();
        some = kv.wait_replicas(1, Millis{100});
        some_at = world.now();
    }, Nanos{0});
    world.scheduler().run(Millis{1000});
    EXPECT_EQ(none, 0);
    EXPECT_EQ(none_at, us(100));
    EXPECT_EQ(some, 0);
    EXPECT_EQ(some_at, us(200) + Millis{100});
}

}  // namespace sim_world_test
}  // namespace relab::sim

namespace relab::sim {
namespace sim_world_test {

// The server model's restart fault: a reader blocked at the kill gets "connection closed", calls
// while it is down are refused, and after the restart what is left depends on persistence.
TEST(SimRedisFaultTest, a_killed_server_closes_blocked_reads_refuses_calls_and_restarts_empty_or_whole) {
    for (const bool persistent : {false, true}) {
        SCOPED_TRACE(persistent ? "appendonly yes" : "no persistence");
        SimWorld world;
        world.reset(Latency{}, Nanos{0}, 5);
        world.streams().create_group("orders", "g", "$", true);
        SimStream stream(world);
        std::string blocked_error, refused_error, after;
        world.scheduler().spawn("C1", [&] {
            try {
                stream.xreadgroup("g", "C1", "orders", 1, Millis{2000});
            } catch (const relab::KvError& e) {
                blocked_error = relab::to_string(e.kind()) + ": " + e.what();
            }
            world.scheduler().sleep_for(Millis{5});  // the server is down now
            try {
                stream.xadd("orders", {{{"type", "paid"}}});
            } catch (const relab::KvError& e) {
                refused_error = relab::to_string(e.kind());
            }
            world.scheduler().sleep_for(Millis{50});  // restarted by now
            try {
                stream.xreadgroup("g", "C1", "orders", 1, Millis{10});
                after = "group still there";
            } catch (const relab::KvError& e) {
                after = std::string(e.what()).find("NOGROUP") != std::string::npos ? "NOGROUP" : e.what();
            }
        }, Nanos{0});
        world.scheduler().spawn("nemesis", [&] {
            world.scheduler().sleep_for(Millis{10});
            world.kill_redis();
            world.scheduler().sleep_for(Millis{20});
            world.redis().start(persistent);
        }, Nanos{0});
        world.scheduler().run(Millis{10'000});
        EXPECT_EQ(blocked_error, "unavailable: server closed the connection");
        EXPECT_EQ(refused_error, "unavailable");
        EXPECT_EQ(after, persistent ? "group still there" : "NOGROUP");
    }
}

}  // namespace sim_world_test
}  // namespace relab::sim

namespace relab::sim {
namespace sim_world_test {

// The PostgreSQL model's kill and restart: a connection open at the kill fails its next statement
// once ("server closed the connection"), statements while it is down are refused, both as
// StoreUnavailable; a transaction that had not committed is gone (record_change's COMMIT never
// comes; a dispatcher round's marks are dropped); committed rows are all there after the restart.
TEST(SimPostgresFaultTest, a_kill_loses_what_was_not_committed_and_a_restart_keeps_what_was) {
    SimWorld world;
    world.reset(Latency{}, Nanos{0}, 5);
    world.orders().reset({{42, "new", 0}});
    world.outbox().reset({{42, "new", 0}});
    SimConnection conn;
    world.postgres().open_connection(conn);
    SimOrderStore orders(world, &conn);
    SimOutbox outbox(world, &conn);
    std::vector<std::string> seen;
    world.scheduler().spawn("role", [&] {
        auto attempt = [&](const char* what, auto f) {
            try {
                f();
                seen.push_back(std::string(what) + ": ok");
            } catch (const relab::StoreUnavailable& e) {
                seen.push_back(std::string(what) + ": " + e.what());
            }
        };
        attempt("write paid", [&] { orders.write_state({42, "paid", 2, WriteMode::plain}); });
        attempt("record created", [&] { outbox.record_change(42, "created", 1); });  // outbox.id 1, committed
        attempt("begin round", [&] { outbox.begin_round(); });
        attempt("mark 1", [&] { outbox.mark_published(1, "1-0"); });
        world.scheduler().sleep_for(Millis{10});  // killed meanwhile
        attempt("commit round", [&] { outbox.commit_round(); });
        attempt("while down", [&] { orders.rows(); });
        world.scheduler().sleep_for(Millis{50});  // up again
        attempt("after restart", [&] { orders.rows(); });
    }, Nanos{0});
    world.scheduler().spawn("nemesis", [&] {
        world.scheduler().sleep_for(Millis{5});
        world.postgres().kill();
        world.scheduler().sleep_for(Millis{20});
        world.postgres().start();
    }, Nanos{0});
    world.scheduler().run(Millis{10'000});
    EXPECT_EQ(seen, (std::vector<std::string>{"write paid: ok", "record created: ok", "begin round: ok", "mark 1: ok",
                                              "commit round: server closed the connection unexpectedly",
                                              "while down: Connection refused: the simulated PostgreSQL is down",
                                              "after restart: ok"}));
    const auto rows = world.orders().rows();
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].status, "paid");
    const auto left = world.outbox().unpublished(OutboxOrder::by_id);
    ASSERT_EQ(left.size(), 1u);  // the round's mark died with its connection
    EXPECT_EQ(left[0].id, 1);
}

}  // namespace sim_world_test
}  // namespace relab::sim
