// What every part of a consumer shares (roles/consumer/context.h): the stream a sharded lab's
// consumer reads, the name it reads under, what its records carry, and riding out a lost
// PostgreSQL only in a lab that schedules that fault.
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "roles/consumer/context.h"
#include "sim_role_fixture.h"

namespace relab {
namespace consumer_context_test {

using test::SimActorPorts;
using test::SimRoleWorld;

RoleSettings sharded() {
    RoleSettings s;
    s.shard.enabled = true;
    s.shard.streams = 3;
    return s;
}

TEST(ConsumerContextTest, a_sharded_labs_consumer_ck_reads_shard_k_minus_1_and_others_are_refused) {
    const RoleSettings s = sharded();
    SimRoleWorld w(s);
    SimActorPorts a(w.world, w.history, 1);
    EXPECT_EQ(ConsumerContext(s, "C1", a.ports).key(), "orders:{0}");
    EXPECT_EQ(ConsumerContext(s, "C3", a.ports).key(), "orders:{2}");
    EXPECT_THROW(ConsumerContext(s, "C4", a.ports), std::invalid_argument);
    EXPECT_THROW(ConsumerContext(s, "reaper", a.ports), std::invalid_argument);
    const RoleSettings plain;
    EXPECT_EQ(ConsumerContext(plain, "reaper", a.ports).key(), "orders");
}

// Per process, the name is the actor and a number drawn from the role's generator: the same seed
// draws the same name, the records still name the actor.
TEST(ConsumerContextTest, a_per_process_name_is_the_actor_and_a_drawn_number) {
    const RoleSettings s;
    SimRoleWorld w(s);
    SimActorPorts a(w.world, w.history, 1), b(w.world, w.history, 1);
    ConsumerContext ca(s, "C1", a.ports), cb(s, "C1", b.ports);
    EXPECT_EQ(ca.name(), "C1");
    ca.name_per_process();
    cb.name_per_process();
    EXPECT_EQ(ca.name(), cb.name());
    EXPECT_EQ(ca.name().rfind("C1~", 0), 0u);
    const int n = std::stoi(ca.name().substr(3));
    EXPECT_GE(n, 1000);
    EXPECT_LE(n, 9999);
    EXPECT_EQ(ca.actor(), "C1");
}

// With several streams an entry ID names an entry only with its stream: receive, ack and write
// records say which; other records do not.
TEST(ConsumerContextTest, a_sharded_labs_entry_records_name_their_stream) {
    const RoleSettings s = sharded();
    SimRoleWorld w(s);
    SimActorPorts a(w.world, w.history, 1);
    const ConsumerContext c(s, "C2", a.ports);
    const Event ev{42, "paid", 2};
    for (const Op op : {Op::receive, Op::ack, Op::write, Op::job_fail})
        c.record(op, nlohmann::json::object(), "5-0", &ev);
    const auto& records = w.history.records();
    ASSERT_EQ(records.size(), 4u);
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(records[i].data.at("stream"), "orders:{1}");
    EXPECT_FALSE(records[3].data.contains("stream"));
    EXPECT_EQ(record_entry(records[0]), "5-0");
    EXPECT_EQ(record_event(records[0])->v, 2);
}

// PostgreSQL killed at 5 ms and started at 200 ms: a store call at 10 ms is tried again every
// 100 ms, each failure recorded, until it gets through, where the lab schedules a PostgreSQL
// fault; elsewhere the first failure ends the role. When the call got through (-1 ns: never).
Nanos store_call_during_outage(SimRoleWorld& w, const RoleSettings& s) {
    Nanos through{-1};
    w.spawn("nemesis", [&](RolePorts& p) {
        p.clock.sleep_for(Millis{5});
        w.world.postgres().kill();
        p.clock.sleep_for(Millis{195});
        w.world.postgres().start();
    });
    w.spawn("C1", [&](RolePorts& p) {
        p.clock.sleep_for(Millis{10});
        const ConsumerContext c(s, "C1", p);
        c.with_store_retry([&] { return p.orders.rows(); });
        through = p.clock.now();
    });
    w.run();
    return through;
}

TEST(ConsumerContextTest, a_lost_postgres_is_ridden_out_only_where_the_lab_schedules_it) {
    RoleSettings s;
    s.postgres_faults_scheduled = true;
    SimRoleWorld w(s);
    EXPECT_GT(store_call_during_outage(w, s), Millis{200});
    const auto errors = w.records(Op::error);
    EXPECT_GE(errors.size(), 2u);  // at 10 and 110 ms, at least
    EXPECT_EQ(errors.size(), w.history.records().size());
    for (const auto& r : errors) EXPECT_EQ(r.data.at("server"), "postgres");

    const RoleSettings unscheduled;
    SimRoleWorld w2(unscheduled);
    EXPECT_THROW(store_call_during_outage(w2, unscheduled), StoreUnavailable);
}

}  // namespace consumer_context_test
}  // namespace relab
