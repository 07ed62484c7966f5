// The engine shared by both backends and every lab family (harness/src/engine/): the one trial
// loop (how many trials, until_wrong, which keep their history), the invariants checked after every
// trial, and the family table.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/family.h"
#include "engine/invariants.h"
#include "engine/trial_loop.h"
#include "scenario/scenario.h"

namespace relab {
namespace engine_test {

using nlohmann::json;

Scenario racy_lab(int runs, int at_least, int max_runs) {
    Scenario s;
    s.id = "racy";
    s.runs = runs;
    s.expect.wrong = Expectation::Count::at_least;
    s.expect.n = at_least;
    s.expect.until_wrong_max_runs = max_runs;
    return s;
}

TrialOutcome outcome(int trial, bool wrong) {
    TrialOutcome o;
    o.trial = trial;
    o.wrong = wrong;
    o.history.push_back(HistoryRecord{trial, 0, "producer", Op::start, json::object()});
    return o;
}

TEST(TrialLoop, runs_the_planned_trials_with_their_own_seeds) {
    const Scenario s = racy_lab(3, 0, 0);
    LoopPlan plan;
    plan.trials = 3;
    LabResult lab;
    std::vector<uint64_t> seeds;
    run_trial_loop(s, plan, lab, [&](int t, uint64_t seed) -> TrialResult {
        seeds.push_back(seed);
        return outcome(t, false);
    });
    ASSERT_EQ(lab.trials.size(), 3u);
    EXPECT_EQ(lab.trials[2].trial, 3);
    EXPECT_NE(seeds[0], seeds[1]);
}

TEST(TrialLoop, until_wrong_runs_on_while_too_few_went_wrong_and_stops_at_the_first_enough) {
    const Scenario s = racy_lab(2, 1, 10);
    LoopPlan plan;
    plan.trials = 2;
    LabResult never;
    run_trial_loop(s, plan, never, [](int t, uint64_t) -> TrialResult { return outcome(t, false); });
    EXPECT_EQ(never.trials.size(), 10u);  // up to max_runs
    LabResult fifth;
    run_trial_loop(s, plan, fifth, [](int t, uint64_t) -> TrialResult { return outcome(t, t == 5); });
    EXPECT_EQ(fifth.trials.size(), 5u);
}

TEST(TrialLoop, a_long_exploration_keeps_the_first_and_the_wrong_histories_only) {
    const Scenario s = racy_lab(20, 0, 0);
    LoopPlan plan;
    plan.trials = 20;
    plan.keep.keep_all_trials = 5;
    plan.keep.keep_first = 2;
    plan.keep.kept_wrong = 1;
    LabResult lab;
    run_trial_loop(s, plan, lab, [](int t, uint64_t) -> TrialResult { return outcome(t, t == 7 || t == 9); });
    std::vector<int> kept;
    for (const auto& t : lab.trials)
        if (!t.history.empty()) kept.push_back(t.trial);
    EXPECT_EQ(kept, (std::vector<int>{1, 2, 7}));
}

TEST(TrialLoop, a_trial_that_breaks_an_invariant_is_a_harness_error) {
    const Scenario s = racy_lab(1, 0, 0);
    LoopPlan plan;
    LabResult lab;
    EXPECT_THROW(run_trial_loop(s, plan, lab,
                                [](int t, uint64_t) -> TrialResult {
                                    TrialOutcome o = outcome(t, false);
                                    o.accounting.published = 2;
                                    o.accounting.processed_once = 1;
                                    return o;
                                }),
                 HarnessError);
}

TEST(Invariants, the_accounting_identity_holds_or_is_named) {
    Accounting a;
    a.published = 4;
    a.processed_once = 2;
    a.duplicated = 1;
    a.lost = 1;
    EXPECT_FALSE(accounting_violation(a));
    a.lost = 0;
    ASSERT_TRUE(accounting_violation(a));
    EXPECT_NE(accounting_violation(a)->find("published 4"), std::string::npos);
    a.lost = 1;
    a.unapplied = 4;
    EXPECT_TRUE(accounting_violation(a));
}

HistoryRecord fault(int64_t t, const std::string& phase, int index = 1) {
    return HistoryRecord{1, t, "nemesis", Op::fault,
                         {{"action", "kill"}, {"target", "C1"}, {"fault", index}, {"phase", phase}}};
}

TEST(Invariants, every_fault_invoke_completes_once) {
    EXPECT_FALSE(pairing_violation({fault(1, "invoke"), fault(2, "ok"), fault(3, "invoke"), fault(4, "fail")}));
    EXPECT_TRUE(pairing_violation({fault(1, "invoke")}));                                   // never completed
    EXPECT_TRUE(pairing_violation({fault(1, "ok")}));                                       // no invoke
    EXPECT_TRUE(pairing_violation({fault(1, "invoke"), fault(2, "invoke"), fault(3, "ok")}));  // overlapping
    EXPECT_FALSE(pairing_violation({fault(1, "invoke", 1), fault(2, "invoke", 2), fault(3, "ok", 2), fault(4, "ok", 1)}));
}

TEST(Families, every_lab_kind_has_one_row_and_a_role_family_has_every_role_hook) {
    for (LabKind k : {LabKind::stream, LabKind::sessions, LabKind::idem_clients, LabKind::idem_benchmark,
                      LabKind::idem_cluster}) {
        const LabFamily& f = family_of(k);
        EXPECT_EQ(f.kind, k);
        Scenario lab;
        lab.set_kind(k);
        EXPECT_TRUE(f.planned_trials && f.budget && f.sim_skip_reason && f.real_skip_reason) << f.name;
        if (f.has_roles())
            EXPECT_TRUE(f.prepare && f.supervise && f.finish && !f.open_probe) << f.name;
        else
            EXPECT_TRUE(f.open_probe && f.sim_skip_reason(lab)) << f.name << ": a probe runs on real servers only";
    }
    EXPECT_EQ(lab_families().size(), 5u);
}

}  // namespace engine_test
}  // namespace relab
