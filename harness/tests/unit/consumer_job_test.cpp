// A consumer's job as its lab models it (roles/consumer/job.h): a generated workload's own cost per
// event before job_cost_ms by type, and poison events.
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "roles/consumer/job.h"
#include "sim_role_fixture.h"

namespace relab {
namespace consumer_job_test {

using test::SimRoleWorld;

EventSpec spec(int64_t order, const std::string& type, int64_t version, int64_t cost_us = -1, bool fails = false) {
    EventSpec e;
    e.order = order;
    e.type = type;
    e.version = version;
    e.cost_us = cost_us;
    e.fails = fails;
    return e;
}

// How long spend_cost slept for each event, in µs of virtual time (a sleep's 30 µs wake-up
// included: 0 means no sleep at all).
std::vector<int64_t> costs_of(const RoleSettings& s, const std::vector<Event>& events) {
    SimRoleWorld w(s);
    std::vector<int64_t> out;
    w.spawn("C1", [&](RolePorts& p) {
        const ConsumerContext c(s, "C1", p);
        const ConsumerJob job(c);
        for (const Event& ev : events) {
            const Nanos t0 = p.clock.now();
            job.spend_cost(ev);
            out.push_back((p.clock.now() - t0).count() / 1000);
        }
    });
    w.run();
    return out;
}

TEST(ConsumerJobTest, an_events_own_cost_comes_before_its_types_and_an_unknown_type_costs_nothing) {
    RoleSettings s;
    s.events = {spec(1, "paid", 1, 250), spec(2, "paid", 1, 0)};
    s.job_cost_ms = {{"paid", 5}};
    EXPECT_EQ(costs_of(s, {Event{1, "paid", 1}, Event{2, "paid", 1}, Event{3, "paid", 1}, Event{3, "shipped", 1}}),
              (std::vector<int64_t>{280, 0, 5030, 0}));
}

TEST(ConsumerJobTest, only_the_poison_events_order_type_and_version_fail) {
    RoleSettings s;
    s.events = {spec(1, "paid", 2, -1, true), spec(1, "created", 1)};
    SimRoleWorld w(s);
    test::SimActorPorts actor(w.world, w.history, 1);
    const ConsumerContext c(s, "C1", actor.ports);
    const ConsumerJob job(c);
    EXPECT_TRUE(job.poisoned(Event{1, "paid", 2}));
    EXPECT_FALSE(job.poisoned(Event{1, "paid", 3}));
    EXPECT_FALSE(job.poisoned(Event{2, "paid", 2}));
    EXPECT_FALSE(job.poisoned(Event{1, "shipped", 2}));
    EXPECT_FALSE(job.poisoned(Event{1, "created", 1}));
}

// S3's workers share the reader's index of costs instead of building one each.
TEST(ConsumerJobTest, costs_given_are_shared_not_indexed_again) {
    RoleSettings s;
    s.events = {spec(1, "paid", 1, 250)};
    SimRoleWorld w(s);
    test::SimActorPorts actor(w.world, w.history, 1);
    const ConsumerContext c(s, "C1", actor.ports);
    const ConsumerJob reader(c);
    ASSERT_EQ(reader.costs()->size(), 1u);
    EXPECT_EQ(reader.costs()->at("1:paid:1"), 250);
    const ConsumerJob worker(c, reader.costs());
    EXPECT_EQ(worker.costs().get(), reader.costs().get());
}

}  // namespace consumer_job_test
}  // namespace relab
