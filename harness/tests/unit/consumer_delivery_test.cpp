// A consumer's delivery (roles/consumer/delivery.h) on the simulator's stream model, feeding a sink
// that acknowledges what it is given: pending entries before new ones, XAUTOCLAIM rounds in the
// loop and in the reaper, a deleted pending entry, and the stop key.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "roles/consumer/delivery.h"
#include "sim_role_fixture.h"

namespace relab {
namespace consumer_delivery_test {

using test::SimRoleWorld;

// Acknowledges each entry it is given at once, and keeps (entry, how it came) in order.
class AckingSink : public DeliverySink {
public:
    explicit AckingSink(StreamAcks& acks) : m_acks(acks) {}
    void process(const StreamEntry& entry, const Event& ev) override {
        given.push_back(entry.id + " v" + std::to_string(ev.v));
        m_acks.acknowledge(entry.id);
    }
    void flush() override {
        ++flushes;
        m_acks.flush();
    }
    Millis before_read(Millis block) override { return block; }
    bool holds_nothing() const override { return true; }
    bool failed() const override { return false; }

    std::vector<std::string> given;
    int flushes = 0;

private:
    StreamAcks& m_acks;
};

// A consumer C1's delivery on `p`, with a sink that acknowledges.
struct Delivered {
    Delivered(const RoleSettings& s, RolePorts& p, const std::string& actor = "C1")
        : c(s, actor, p), acks(c), sink(acks), delivery(c, acks, sink) {}
    ConsumerContext c;
    StreamAcks acks;
    AckingSink sink;
    ConsumerDelivery delivery;
};

RoleSettings quick() {
    RoleSettings s;
    s.stream.block_ms = 50;
    s.stream.read_count = 10;
    return s;
}

// C1 was given v1 and v2 and died before acknowledging them; v3 came after. Restarted with
// pending_first it gets v1 and v2 again (delivery 2, "pending") before v3 ("new"); without, only v3.
std::vector<std::string> restart_c1(bool pending_first, SimRoleWorld& w, RoleSettings& s) {
    s.recovery.pending_first = pending_first;
    w.publish({Event{1, "paid", 1}, Event{1, "paid", 2}});
    w.world.streams().xreadgroup(s.stream.key, s.stream.group, "C1", 10, Nanos{0});
    w.publish({Event{1, "paid", 3}});
    w.world.kv().set(kStopKey, "1", sim::SetOptions{}, Nanos{0});
    std::vector<std::string> given;
    w.spawn("C1", [&](RolePorts& p) {
        Delivered d(s, p);
        d.delivery.read_loop();
        given = d.sink.given;
    });
    w.run();
    std::vector<std::string> vias;
    for (const auto& r : w.records(Op::receive))
        vias.push_back(r.data.at("via").get<std::string>() + " " + r.data.at("deliveries").dump());
    EXPECT_EQ(vias.size(), given.size());
    return vias;
}

TEST(ConsumerDeliveryTest, pending_first_reads_its_own_pending_entries_before_new_ones) {
    RoleSettings s = quick();
    SimRoleWorld w(s);
    EXPECT_EQ(restart_c1(true, w, s), (std::vector<std::string>{"pending 2", "pending 2", "new 1"}));
    EXPECT_TRUE(w.world.streams().pending(s.stream.key, s.stream.group).empty());
}

TEST(ConsumerDeliveryTest, without_pending_first_only_new_entries_come) {
    RoleSettings s = quick();
    SimRoleWorld w(s);
    EXPECT_EQ(restart_c1(false, w, s), (std::vector<std::string>{"new 1"}));
    EXPECT_EQ(w.world.streams().pending(s.stream.key, s.stream.group).size(), 2u);
}

// C9 took two entries and went away. C1 claims in its loop (autoclaim, not in the reaper) once
// they have been idle min_idle_ms: one claim record naming both, each received via "claim".
TEST(ConsumerDeliveryTest, the_loop_claims_entries_left_idle_by_another_consumer) {
    RoleSettings s = quick();
    s.recovery.autoclaim.enabled = true;
    s.recovery.autoclaim.in = RecoverySpec::Autoclaim::In::consumers;
    s.recovery.autoclaim.min_idle_ms = 100;
    s.recovery.autoclaim.every_ms = 20;
    SimRoleWorld w(s);
    const auto ids = w.publish({Event{1, "paid", 1}, Event{2, "paid", 1}});
    w.world.streams().xreadgroup(s.stream.key, s.stream.group, "C9", 10, Nanos{0});
    w.spawn("stopper", [&](RolePorts& p) {
        p.clock.sleep_for(Millis{300});
        w.world.kv().set(kStopKey, "1", sim::SetOptions{}, w.world.now());
    });
    w.spawn("C1", [&](RolePorts& p) { Delivered(s, p).delivery.read_loop(); });
    w.run();
    const auto claims = w.records(Op::claim);
    ASSERT_EQ(claims.size(), 1u);
    EXPECT_EQ(claims[0].data.at("claimed"), nlohmann::json(ids));
    EXPECT_GE(claims[0].t_ns, Millis{100}.count() * 1'000'000);
    const auto received = w.records(Op::receive);
    ASSERT_EQ(received.size(), 2u);
    for (const auto& r : received) {
        EXPECT_EQ(r.data.at("via"), "claim");
        EXPECT_EQ(r.data.at("deliveries"), 2);
    }
    EXPECT_TRUE(w.world.streams().pending(s.stream.key, s.stream.group).empty());
}

// The reaper: a claim round every every_ms until the stop key; the entry it claimed handed on as
// any consumer's.
TEST(ConsumerDeliveryTest, the_reaper_claims_every_every_ms_until_the_stop_key) {
    RoleSettings s = quick();
    s.recovery.autoclaim.enabled = true;
    s.recovery.autoclaim.min_idle_ms = 50;
    s.recovery.autoclaim.every_ms = 40;
    SimRoleWorld w(s);
    w.publish({Event{1, "paid", 1}});
    w.world.streams().xreadgroup(s.stream.key, s.stream.group, "C9", 10, Nanos{0});
    std::vector<std::string> given;
    w.spawn("reaper", [&](RolePorts& p) {
        Delivered d(s, p, "reaper");
        d.delivery.run_reaper();
        given = d.sink.given;
    });
    w.spawn("stopper", [&](RolePorts& p) {
        p.clock.sleep_for(Millis{200});
        w.world.kv().set(kStopKey, "1", sim::SetOptions{}, w.world.now());
    });
    w.run();
    ASSERT_EQ(given.size(), 1u);
    const auto claims = w.records(Op::claim);
    ASSERT_EQ(claims.size(), 1u);
    // The rounds at about 40 ms found it idle less than 50 ms; the one at about 80 ms claimed it.
    EXPECT_GE(claims[0].t_ns, Millis{80}.count() * 1'000'000);
    EXPECT_LT(claims[0].t_ns, Millis{120}.count() * 1'000'000);
    EXPECT_GE(w.world.now(), Millis{200});
}

// Redis killed at 10 ms and started empty at 30 ms: in a lab that schedules a Redis fault, the
// loop records each error and reads on, and with recreate_group creates the vanished group again
// (NOGROUP), so the entry published afterwards is delivered. In any other lab the first error
// ends the role.
void kill_and_restart_redis(SimRoleWorld& w, const RoleSettings& s) {
    w.spawn("nemesis", [&](RolePorts& p) {
        p.clock.sleep_for(Millis{10});
        w.world.kill_redis();
        p.clock.sleep_for(Millis{20});
        w.world.redis().start(false);
    });
    w.spawn("producer", [&](RolePorts& p) {
        p.clock.sleep_for(Millis{300});
        try {
            p.kv.exists(kStopKey);
        } catch (const KvError&) {
            // its connection died with the server: the next call connects again
        }
        p.stream.xadd(s.stream.key, {event_fields(Event{1, "paid", 1})});
        p.clock.sleep_for(Millis{100});
        p.kv.set_nx_px(kStopKey, "1", Millis{60'000});
    });
    w.spawn("C1", [&](RolePorts& p) { Delivered(s, p).delivery.read_loop(); });
    w.run();
}

TEST(ConsumerDeliveryTest, a_redis_error_is_ridden_out_and_a_vanished_group_created_again) {
    RoleSettings s = quick();
    s.redis_faults_scheduled = true;
    s.recovery.recreate_group = true;
    SimRoleWorld w(s);
    kill_and_restart_redis(w, s);
    const std::vector<std::string> ops = w.ops();
    ASSERT_GE(ops.size(), 4u);
    EXPECT_EQ(ops.front(), "error");
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "group_created"), 1);
    EXPECT_EQ(ops[ops.size() - 2], "receive");
    EXPECT_EQ(ops.back(), "ack");
    bool nogroup = false;
    for (const auto& r : w.records(Op::error))
        nogroup = nogroup || r.data.at("error").get<std::string>().find("NOGROUP") != std::string::npos;
    EXPECT_TRUE(nogroup);
}

TEST(ConsumerDeliveryTest, a_redis_error_ends_the_loop_in_a_lab_without_redis_faults) {
    const RoleSettings s = quick();
    SimRoleWorld w(s);
    EXPECT_THROW(kill_and_restart_redis(w, s), KvError);
    EXPECT_EQ(w.world.scheduler().failed_fiber(), "C1");
    EXPECT_TRUE(w.history.records().empty());
}

}  // namespace consumer_delivery_test
}  // namespace relab
