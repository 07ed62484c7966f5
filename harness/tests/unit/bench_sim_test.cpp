// `relab bench sim --jobs N`: the simulator on several threads runs the same trials, with the same
// outcomes, as on one (each thread has its own SimBackend; nothing is shared between them).
#include <gtest/gtest.h>

#include "bench/measure/bench_sim.h"
#include "sim_fixture.h"

namespace relab {

TEST(BenchSimTest, threads_split_the_trials_and_reach_the_one_thread_outcomes) {
    const Scenario s = test::scenario("08c-s4a-lock.json");
    const SimBenchResult one = bench_sim_lab(s, 300, 1);
    const SimBenchResult three = bench_sim_lab(s, 300, 3);
    EXPECT_EQ(one.total, 300);
    EXPECT_EQ(one.simulated, 301);  // trial 1 twice: the determinism self-check
    EXPECT_EQ(three.jobs, 3);
    EXPECT_EQ(three.total, one.total);
    EXPECT_EQ(three.simulated, one.simulated);
    EXPECT_EQ(three.wrong, one.wrong);  // the same seeds, the same wrong trials
    EXPECT_GT(one.wrong, 0);            // S4a goes wrong in about a quarter of its seeds
    EXPECT_GT(three.seconds, 0);
}

TEST(BenchSimTest, more_threads_than_trials_run_each_trial_once) {
    const Scenario s = test::scenario("08a-baseline.json");
    const SimBenchResult r = bench_sim_lab(s, 2, 8);
    EXPECT_EQ(r.jobs, 2);
    EXPECT_EQ(r.total, 2);
    EXPECT_EQ(r.simulated, 3);
}

}  // namespace relab
