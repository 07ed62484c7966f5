// Dead-lettering (roles/consumer/dead_letter.h) on the simulator's stream model: a failed job's entry stays
// pending under recovery.max_deliveries; at the cap it goes to <stream>:dead and is acknowledged.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "roles/consumer/dead_letter.h"
#include "sim_role_fixture.h"

namespace relab {
namespace dead_letter_test {

using test::SimRoleWorld;

const Event k_paid{42, "paid", 2};

RoleSettings capped(int64_t max_deliveries) {
    RoleSettings s;
    s.recovery.max_deliveries = max_deliveries;
    return s;
}

// C1 reads the entry (delivery 1) and its job fails; C2 claims it (delivery 2) and its job fails
// again. What job_failed answered each time.
std::vector<bool> fail_twice(SimRoleWorld& w, const RoleSettings& s) {
    w.publish({k_paid});
    std::vector<bool> done;
    w.spawn("C1", [&](RolePorts& p) {
        const ConsumerContext c1(s, "C1", p);
        StreamAcks acks1(c1);
        const auto first = p.stream.xreadgroup(s.stream.group, "C1", s.stream.key, 1, Millis{10});
        done.push_back(DeadLetter(c1, acks1).job_failed(first.at(0), k_paid));
        const ConsumerContext c2(s, "C2", p);
        StreamAcks acks2(c2);
        const auto second = p.stream.xautoclaim(s.stream.key, s.stream.group, "C2", Millis{0}, "0-0", 10);
        done.push_back(DeadLetter(c2, acks2).job_failed(second.claimed.at(0), k_paid));
    });
    w.run();
    return done;
}

TEST(DeadLetterTest, under_the_cap_a_failed_entry_is_recorded_and_left_pending) {
    const RoleSettings s = capped(3);
    SimRoleWorld w(s);
    EXPECT_EQ(fail_twice(w, s), (std::vector<bool>{false, false}));
    EXPECT_EQ(w.ops(), (std::vector<std::string>{"job_fail", "job_fail"}));
    const auto fails = w.records(Op::job_fail);
    EXPECT_EQ(fails[0].data.at("deliveries"), 1);
    EXPECT_EQ(fails[1].data.at("deliveries"), 2);
    EXPECT_EQ(w.world.streams().pending(s.stream.key, s.stream.group).size(), 1u);
    EXPECT_EQ(w.world.streams().length("orders:dead"), 0u);
}

// At its second delivery (the cap): XADDed to orders:dead with where it came from and how often
// it was delivered, recorded, and acknowledged.
TEST(DeadLetterTest, at_the_cap_the_entry_goes_to_the_dead_letter_stream_and_is_acknowledged) {
    const RoleSettings s = capped(2);
    SimRoleWorld w(s);
    EXPECT_EQ(fail_twice(w, s), (std::vector<bool>{false, true}));
    EXPECT_EQ(w.ops(), (std::vector<std::string>{"job_fail", "job_fail", "dead_letter", "ack"}));
    EXPECT_TRUE(w.world.streams().pending(s.stream.key, s.stream.group).empty());
    const auto dead = w.world.streams().xrange("orders:dead");
    ASSERT_EQ(dead.size(), 1u);
    const std::string from = std::string(record_entry(w.records(Op::job_fail)[0]));
    EXPECT_EQ(dead[0].field("dead_from"), from);
    EXPECT_EQ(dead[0].field("deliveries"), "2");
    EXPECT_EQ(dead[0].field("type"), "paid");
    const auto record = w.records(Op::dead_letter).at(0);
    EXPECT_EQ(record.data.at("dead_stream"), "orders:dead");
    EXPECT_EQ(record.data.at("dead_entry"), dead[0].id);
    EXPECT_EQ(record_entry(w.records(Op::ack).at(0)), from);
}

TEST(DeadLetterTest, without_a_cap_an_entry_is_never_dead_lettered) {
    const RoleSettings s = capped(0);
    SimRoleWorld w(s);
    EXPECT_EQ(fail_twice(w, s), (std::vector<bool>{false, false}));
    EXPECT_FALSE(w.world.streams().exists("orders:dead"));
}

}  // namespace dead_letter_test
}  // namespace relab
