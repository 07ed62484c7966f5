// When a consumer's XACKs go out (roles/consumer/acks.h), on the simulator's stream model: at once
// with stream.ack "each", all of a read at flush with "batch"; and what a claim round remembers.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "roles/consumer/acks.h"
#include "sim_role_fixture.h"

namespace relab {
namespace consumer_acks_test {

using test::SimRoleWorld;

// Two entries read by C1; acknowledged one by one, with `flush` called after the second. How
// many were still pending after each step: after the first acknowledge, the second, the flush.
std::vector<size_t> acknowledge_two(SimRoleWorld& w, const RoleSettings& s) {
    w.publish({Event{1, "paid", 1}, Event{2, "paid", 1}});
    std::vector<size_t> pending;
    auto pending_now = [&] { return w.world.streams().pending(s.stream.key, s.stream.group).size(); };
    w.spawn("C1", [&](RolePorts& p) {
        const ConsumerContext c(s, "C1", p);
        StreamAcks acks(c);
        for (const auto& e : p.stream.xreadgroup(s.stream.group, "C1", s.stream.key, 10, Millis{10})) {
            acks.acknowledge(e.id);
            pending.push_back(pending_now());
        }
        acks.flush();
        pending.push_back(pending_now());
    });
    w.run();
    return pending;
}

TEST(StreamAcksTest, each_acknowledges_at_once) {
    const RoleSettings s;
    SimRoleWorld w(s);
    EXPECT_EQ(acknowledge_two(w, s), (std::vector<size_t>{1, 0, 0}));
    const auto acks = w.records(Op::ack);
    ASSERT_EQ(acks.size(), 2u);
    EXPECT_FALSE(acks[0].data.contains("batch"));
}

TEST(StreamAcksTest, batch_acknowledges_the_read_at_flush_with_one_xack) {
    RoleSettings s;
    s.stream.ack = StreamSpec::Ack::batch;
    SimRoleWorld w(s);
    EXPECT_EQ(acknowledge_two(w, s), (std::vector<size_t>{2, 2, 0}));
    const auto acks = w.records(Op::ack);
    ASSERT_EQ(acks.size(), 2u);
    for (const auto& r : acks) EXPECT_EQ(r.data.at("batch"), 2);
    EXPECT_EQ(acks[0].t_ns, acks[1].t_ns);  // one round trip for both
}

// Inside a claim round an entry acknowledged is remembered until the round ends; outside one,
// nothing is.
TEST(StreamAcksTest, a_claim_round_remembers_what_it_acknowledged) {
    const RoleSettings s;
    SimRoleWorld w(s);
    std::vector<bool> seen;
    w.spawn("C1", [&](RolePorts& p) {
        const ConsumerContext c(s, "C1", p);
        StreamAcks acks(c);
        acks.acknowledge("1-0");
        seen.push_back(acks.acked_in_round("1-0"));
        acks.begin_round();
        acks.acknowledge("2-0");
        seen.push_back(acks.acked_in_round("2-0"));
        acks.end_round();
        seen.push_back(acks.acked_in_round("2-0"));
    });
    w.run();
    EXPECT_EQ(seen, (std::vector<bool>{false, true, false}));
}

}  // namespace consumer_acks_test
}  // namespace relab
