// A simulated trial's parts without SimBackend: SimTrial runs a lab's roles as fibers beside a
// supervisor on a fresh world, and SimControl's primitives on a role act on its fiber (SimRoles).
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend_sim/sim_control.h"
#include "backend_sim/sim_trial.h"
#include "engine/family.h"
#include "sim_fixture.h"

namespace relab::sim_backend_detail {
namespace sim_trial_test {

// After 08a's own supervisor has run the trial to its end: C1 has finished; started again it
// runs; paused, it says so; killed, it has finished and is no longer paused. A role the trial does
// not have is a harness bug. The supervisor's wait for the clients' phase returns at once when
// none is left.
TEST(SimTrialTest, the_controls_primitives_on_a_role_act_on_its_fiber) {
    const Scenario s = test::scenario("08a-baseline.json");
    const LabFamily& family = family_of(s.kind);
    const std::vector<RoleLaunch> roles = family.roles(s);
    SimTrial trial;
    trial.stream_keys = lab_stream_keys(s.flow().stream, s.flow().shard);
    SimTrialStore store(trial.world);
    std::vector<std::string> seen;
    auto state = [&](Control& c, const Target& t) {
        seen.push_back(std::string(c.finished(t) ? "finished" : "running") + (c.paused(t) ? ", paused" : ""));
    };
    const std::vector<HistoryRecord> records = trial.run_roles(
        s, roles, 1, 42, kEpoch + family.budget(s), [&] { family.prepare(s, store); },
        [&](const std::vector<sim::FiberId>& fibers) {
            SimControl control(trial, s, roles, fibers, 42);
            family.supervise(s, roles, control);
            const Target c1 = Target::role("C1");
            state(control, c1);
            control.start(c1);
            state(control, c1);
            control.pause(c1);
            state(control, c1);
            control.kill(c1);
            state(control, c1);
            EXPECT_THROW(control.kill(Target::role("C9")), std::logic_error);
            EXPECT_TRUE(control.drained());
        });
    EXPECT_EQ(seen, (std::vector<std::string>{"finished", "running", "running, paused", "finished"}));
    EXPECT_FALSE(records.empty());
    EXPECT_EQ(trial.restarted.size(), 1u);
}

}  // namespace sim_trial_test
}  // namespace relab::sim_backend_detail
