#include "engine/trial_loop.h"

#include <algorithm>
#include "util/check.h"

#include "engine/invariants.h"
#include "engine/seeds.h"
#include "scenario/loader/loader.h"
#include "util/interrupt.h"

namespace relab {

namespace {

void keep_or_drop(const LoopPlan& plan, KeepPolicy& policy, TrialOutcome& o) {
    if (policy.keeps(o.trial, o.wrong, o.history.size())) {
        if (plan.on_kept) plan.on_kept(o);
        return;
    }
    // Moved-from empties, not `= {}`: assigning an empty list keeps the capacity, and a long
    // exploration would keep every dropped history's buffer.
    o.history = std::vector<HistoryRecord>();
    o.stream = std::vector<StreamEntry>();
}

}  // namespace

int last_possible_trial(const Scenario& s, const LoopPlan& plan) {
    return plan.first_trial - 1 + std::max(plan.trials, s.expect.until_wrong_max_runs);
}

bool shard_has_trials(const Scenario& s, const LoopPlan& plan) {
    for (int t = plan.first_trial; t <= last_possible_trial(s, plan) && t < plan.first_trial + plan.shard.count; ++t)
        if (plan.shard.has(t)) return true;
    return false;
}

void run_trial_loop(const Scenario& s, const LoopPlan& plan, LabResult& lab, const TrialFn& trial) {
    RELAB_CHECK(plan.shard.index >= 1 && plan.shard.index <= plan.shard.count, "a shard K/N with 1 <= K <= N");
    const uint64_t seed = lab_seed(s, plan.seed);
    const int n = plan.trials;
    // A shard cannot see the other shards' wrong trials: it runs its share of every possible one.
    const int sliced_to = plan.shard.whole() ? n : last_possible_trial(s, plan) - plan.first_trial + 1;
    KeepPolicy policy(s, n, plan.keep);
    if (n > 0) lab.trials.reserve(static_cast<size_t>(n / plan.shard.count + 1));
    int wrong = 0;
    // The sequential rule of a racy lab (expect.until_wrong): more trials while too few went wrong.
    for (int i = 1; i <= sliced_to || (plan.shard.whole() && s.expect.wants_more(wrong, i - 1)); ++i) {
        const int t = plan.first_trial + i - 1;
        if (!plan.shard.has(t)) continue;
        throw_if_interrupted();
        if (plan.progress && (i <= plan.shard.count || i % plan.progress_every == 0 || i == n))
            plan.progress(s.id, i, std::max(sliced_to, i));
        TrialResult r = trial(t, trial_seed(seed, t));
        if (auto* c = std::get_if<CaseOutcome>(&r)) {
            c->trial = t;
            if (c->wrong) ++wrong;
            lab.cases.push_back(std::move(*c));
            continue;
        }
        TrialOutcome& o = std::get<TrialOutcome>(r);
        RELAB_CHECK(o.trial == t, "a trial outcome carries the number it was run as");
        check_trial_invariants(s, o);
        if (plan.verify) plan.verify(o);
        if (o.wrong) ++wrong;
        keep_or_drop(plan, policy, o);
        lab.trials.push_back(std::move(o));
    }
    lab.planned_trials = n;
}

LabResult run_with_beside(const Scenario& s, const std::function<LabResult(const Scenario&)>& run_one) {
    const StreamLab* flow = s.flow_if();
    if (!flow || !flow->beside) return run_one(s);
    const LabResult beside = run_one(beside_scenario(s));
    LabResult lab = run_one(s);
    if (lab.skipped || beside.skipped) return lab;
    lab.beside_name = flow->beside->name;
    lab.beside_throughput = beside.throughput;
    summarize(lab);
    return lab;
}

}  // namespace relab
