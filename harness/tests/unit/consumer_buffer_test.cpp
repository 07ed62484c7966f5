// P3's reorder buffer (roles/consumer/buffer.h) on the simulator's clock and stream, with a job
// that records which versions it ran: next versions run at once, later ones wait for their gap,
// late ones are dropped or applied, and a gap timeout gives up on a gap.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "roles/consumer/buffer.h"
#include "sim_role_fixture.h"

namespace relab {
namespace consumer_buffer_test {

using test::SimRoleWorld;

struct Step {
    Millis at;  // from the start
    Event ev;
};

// A job that notes which version it ran, and fails for the versions in `failing`.
class NotingJobs : public JobRunner {
public:
    explicit NotingJobs(const std::vector<int64_t>& failing) : m_failing(failing) {}
    bool run_job(const StreamEntry&, const Event& ev) override {
        ran.push_back(ev.v);
        return std::find(m_failing.begin(), m_failing.end(), ev.v) == m_failing.end();
    }
    std::vector<int64_t> ran;

private:
    const std::vector<int64_t>& m_failing;
};

// One buffer on order 42 taking the steps at their times, then, for `after`, calling
// release_timed_out (and block(1000 ms)) every 10 ms. The versions its job ran, in order; the
// job fails for the versions in `failing`. `blocks` gets what block() answered.
std::vector<int64_t> buffer(SimRoleWorld& w, const RoleSettings& s, const std::vector<Step>& steps,
                            const std::vector<int64_t>& failing = {}, Millis after = Millis{0},
                            std::vector<Millis>* blocks = nullptr) {
    NotingJobs jobs(failing);
    w.spawn("C1", [&](RolePorts& p) {
        const ConsumerContext c(s, "C1", p);
        StreamAcks acks(c);
        ReorderBuffer b(c, acks, jobs);
        for (const Step& step : steps) {
            if (const Nanos wait = step.at - p.clock.now(); wait > Nanos{0}) p.clock.sleep_for(wait);
            b.take(StreamEntry{std::to_string(step.ev.v) + "-0", event_fields(step.ev)}, step.ev);
        }
        for (Millis waited{0}; waited < after; waited += Millis{10}) {
            if (blocks) blocks->push_back(b.block(Millis{1000}));
            b.release_timed_out();
            p.clock.sleep_for(Millis{10});
        }
    });
    w.run();
    return jobs.ran;
}

Event v(int64_t version) { return Event{42, "paid", version}; }

// v1 runs; v3 and v4 wait for v2; v2 runs and releases them in version order.
TEST(ReorderBufferTest, a_later_version_waits_for_its_gap_and_is_released_in_order) {
    const RoleSettings s;
    SimRoleWorld w(s);
    const std::vector<Step> steps = {{Millis{0}, v(1)}, {Millis{5}, v(4)}, {Millis{6}, v(3)}, {Millis{20}, v(2)}};
    EXPECT_EQ(buffer(w, s, steps), (std::vector<int64_t>{1, 2, 3, 4}));
    const auto holds = w.records(Op::buffer_hold);
    ASSERT_EQ(holds.size(), 2u);
    EXPECT_EQ(holds[0].data.at("waiting_for"), 2);
    const auto released = w.records(Op::buffer_release);
    ASSERT_EQ(released.size(), 2u);
    EXPECT_EQ(record_event(released[0])->v, 3);
    EXPECT_EQ(released[0].data.at("reason"), "in_order");
    EXPECT_EQ(released[0].data.at("held_ms"), 14);
    EXPECT_EQ(record_event(released[1])->v, 4);
}

// After v2, v1 is late: dropped (acknowledged, never run), or with late "apply" run anyway.
TEST(ReorderBufferTest, a_late_version_is_dropped_or_applied_as_the_lab_says) {
    for (const auto late : {BufferSpec::Late::drop, BufferSpec::Late::apply}) {
        RoleSettings s;
        s.buffer.late = late;
        SimRoleWorld w(s);
        const bool drop = late == BufferSpec::Late::drop;
        const std::vector<Step> steps = {{Millis{0}, v(1)}, {Millis{1}, v(2)}, {Millis{2}, v(1)}};
        EXPECT_EQ(buffer(w, s, steps), drop ? std::vector<int64_t>({1, 2}) : std::vector<int64_t>({1, 2, 1}));
        const auto lates = w.records(Op::late);
        ASSERT_EQ(lates.size(), 1u);
        EXPECT_EQ(lates[0].data.at("last_applied"), 2);
        EXPECT_EQ(lates[0].data.at("action"), drop ? "drop" : "apply");
        EXPECT_EQ(w.records(Op::ack).size(), drop ? 1u : 0u);
    }
}

// A failed job leaves its order's gap open: v1 fails, so v2 stays held.
TEST(ReorderBufferTest, a_failed_job_keeps_the_versions_after_it_held) {
    const RoleSettings s;
    SimRoleWorld w(s);
    const std::vector<Step> steps = {{Millis{0}, v(1)}, {Millis{1}, v(2)}};
    EXPECT_EQ(buffer(w, s, steps, {1}), (std::vector<int64_t>{1}));
    EXPECT_EQ(w.records(Op::buffer_hold).size(), 1u);
}

// gap_timeout_ms 50: v3 held at 0 ms waits for v2 until 50 ms, then runs with v2 skipped; the
// next read may block only until then.
TEST(ReorderBufferTest, a_gap_timeout_gives_up_on_the_gap_and_bounds_the_read_block) {
    RoleSettings s;
    s.buffer.gap_timeout_ms = 50;
    SimRoleWorld w(s);
    std::vector<Millis> blocks;
    const std::vector<Step> steps = {{Millis{0}, v(1)}, {Millis{0}, v(3)}};
    EXPECT_EQ(buffer(w, s, steps, {}, Millis{100}, &blocks), (std::vector<int64_t>{1, 3}));
    const auto released = w.records(Op::buffer_release);
    ASSERT_EQ(released.size(), 1u);
    EXPECT_EQ(released[0].data.at("reason"), "gap_timeout");
    EXPECT_EQ(released[0].data.at("skipped"), nlohmann::json::array({2}));
    EXPECT_GE(released[0].t_ns, Millis{50}.count() * 1'000'000);
    EXPECT_LT(released[0].t_ns, Millis{61}.count() * 1'000'000);
    ASSERT_GE(blocks.size(), 2u);
    EXPECT_EQ(blocks[0], Millis{50});
    EXPECT_EQ(blocks[1], Millis{40});
    EXPECT_EQ(blocks.back(), Millis{1000});  // nothing held any more
}

TEST(ReorderBufferTest, without_a_gap_timeout_a_held_version_waits_for_ever) {
    const RoleSettings s;
    SimRoleWorld w(s);
    std::vector<Millis> blocks;
    const std::vector<Step> steps = {{Millis{0}, v(1)}, {Millis{0}, v(3)}};
    EXPECT_EQ(buffer(w, s, steps, {}, Millis{100}, &blocks), (std::vector<int64_t>{1}));
    EXPECT_TRUE(w.records(Op::buffer_release).empty());
    EXPECT_EQ(blocks.front(), Millis{1000});
}

}  // namespace consumer_buffer_test
}  // namespace relab
