// S3's reader and workers (roles/consumer/fanout.h) as fibers on the simulator, the workers' job a
// 10 ms sleep that notes when it ran: per_key keeps an order's jobs in stream order, one at a time,
// while orders run side by side; any_worker lets one order's jobs overlap.
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "roles/consumer/fanout.h"
#include "sim_role_fixture.h"

namespace relab {
namespace consumer_fanout_test {

using test::SimRoleWorld;

struct Ran {
    std::string worker;
    int64_t order = 0;
    int64_t v = 0;
    Nanos start{0}, end{0};
};

RoleSettings fanout(FanoutSpec::Dispatch dispatch) {
    RoleSettings s;
    s.fanout.enabled = true;
    s.fanout.workers = 2;
    s.fanout.dispatch = dispatch;
    return s;
}

const std::vector<Event> k_events = {{1, "paid", 1}, {1, "paid", 2}, {1, "paid", 3}, {2, "paid", 1}, {2, "paid", 2}};

// A worker's job: a 10 ms sleep on the worker's clock, noted in `ran` when it ends.
class SleepingJobs : public JobRunner {
public:
    SleepingJobs(const std::string& worker, Clock& clock, std::vector<Ran>& ran)
        : m_worker(worker), m_clock(clock), m_ran(ran) {}
    bool run_job(const StreamEntry&, const Event& ev) override {
        Ran r{m_worker, ev.order, ev.v, m_clock.now()};
        m_clock.sleep_for(Millis{10});
        r.end = m_clock.now();
        m_ran.push_back(r);
        return true;
    }

private:
    std::string m_worker;
    Clock& m_clock;
    std::vector<Ran>& m_ran;
};

// Reader C1 dispatches k_events at once and stops; the jobs its workers ran, in the order they
// ended. `jobs_at_end`: how many had ended when the reader's run returned.
std::vector<Ran> fan_out(SimRoleWorld& w, const RoleSettings& s, size_t* jobs_at_end = nullptr) {
    std::vector<Ran> ran;
    w.spawn("C1", [&](RolePorts& p) {
        const ConsumerContext c(s, "C1", p);
        FanoutReader reader(c);
        FanoutReader::Worker worker = [&](const std::string& actor, RolePorts& ports, FanoutQueues& queues) {
            const ConsumerContext wc(s, actor, ports);
            SleepingJobs jobs(actor, ports.clock, ran);
            FanoutWorker(wc, queues, jobs).run();
        };
        reader.run(worker, [&] {
            int n = 0;
            for (const Event& ev : k_events)
                reader.dispatch(StreamEntry{std::to_string(++n) + "-0", event_fields(ev)}, ev);
            EXPECT_FALSE(reader.idle());
        });
        if (jobs_at_end) *jobs_at_end = ran.size();
        EXPECT_TRUE(reader.idle());
    });
    w.run();
    return ran;
}

std::map<int64_t, std::vector<Ran>> by_order(const std::vector<Ran>& ran) {
    std::map<int64_t, std::vector<Ran>> out;
    for (const Ran& r : ran) out[r.order].push_back(r);
    return out;
}

TEST(ConsumerFanoutTest, per_key_runs_an_orders_jobs_in_order_one_at_a_time_and_orders_side_by_side) {
    const RoleSettings s = fanout(FanoutSpec::Dispatch::per_key);
    SimRoleWorld w(s);
    size_t at_end = 0;
    const std::vector<Ran> ran = fan_out(w, s, &at_end);
    ASSERT_EQ(ran.size(), k_events.size());
    EXPECT_EQ(at_end, k_events.size());  // the reader's run waited for every job
    for (const auto& [order, jobs] : by_order(ran)) {
        for (size_t i = 0; i < jobs.size(); ++i) {
            EXPECT_EQ(jobs[i].v, static_cast<int64_t>(i + 1)) << "#" << order;
            if (i > 0) {
                EXPECT_GE(jobs[i].start, jobs[i - 1].end) << "#" << order << " v" << jobs[i].v;
            }
        }
    }
    // Two workers on two orders: 50 ms of jobs done in the time of order 1's three.
    EXPECT_LT(ran.back().end, Millis{40});
    std::vector<int64_t> ahead;
    for (const auto& r : w.records(Op::dispatch)) {
        EXPECT_EQ(r.actor, "C1");
        ahead.push_back(r.data.at("ahead").get<int64_t>());
    }
    EXPECT_EQ(ahead, (std::vector<int64_t>{0, 1, 2, 0, 1}));
    const auto takes = w.records(Op::take);
    ASSERT_EQ(takes.size(), k_events.size());
    for (const auto& r : takes) EXPECT_EQ(r.actor.rfind("C1.w", 0), 0u) << r.actor;
}

// any_worker: one FIFO for every order, so order 1's first two jobs run at the same time.
TEST(ConsumerFanoutTest, any_worker_lets_an_orders_jobs_overlap) {
    const RoleSettings s = fanout(FanoutSpec::Dispatch::any_worker);
    SimRoleWorld w(s);
    const std::vector<Ran> ran = fan_out(w, s);
    ASSERT_EQ(ran.size(), k_events.size());
    const std::vector<Ran> order1 = by_order(ran).at(1);
    EXPECT_LT(order1[1].start, order1[0].end);
    std::vector<int64_t> ahead;
    for (const auto& r : w.records(Op::dispatch)) ahead.push_back(r.data.at("ahead").get<int64_t>());
    EXPECT_EQ(ahead, (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(ConsumerFanoutTest, a_backend_without_tasks_is_refused) {
    const RoleSettings s = fanout(FanoutSpec::Dispatch::per_key);
    SimRoleWorld w(s);
    w.spawn("C1", [&](RolePorts& p) {
        RolePorts no_tasks{p.clock, p.rng, p.stream, p.kv, p.orders, p.outbox, p.history};
        const ConsumerContext c(s, "C1", no_tasks);
        FanoutReader(c).run([](const std::string&, RolePorts&, FanoutQueues&) {}, [] {});
    });
    EXPECT_THROW(w.run(), std::logic_error);
}

}  // namespace consumer_fanout_test
}  // namespace relab
