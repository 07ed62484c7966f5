#include "engine/trial_loop.h"

#include <algorithm>

#include "engine/invariants.h"
#include "engine/seeds.h"
#include "util/interrupt.h"

namespace relab {

namespace {

// Which trials keep their history, decided as they come.
class KeepPolicy {
public:
    KeepPolicy(const Scenario& s, const LoopPlan& p)
        : m_plan(p),
          m_keep_all(p.trials <= p.keep_all_trials &&
                     static_cast<size_t>(p.trials) * std::max<size_t>(s.events.size(), 1) <= p.keep_all_events) {}

    bool keeps(int i, const TrialOutcome& o) {
        if (o.history.size() > m_plan.max_records) return false;  // a load trial: tens of MB, unreadable as text
        const bool keep = m_keep_all || i <= m_plan.keep_first || (o.wrong && m_wrong_kept < m_plan.kept_wrong);
        if (keep && o.wrong) ++m_wrong_kept;
        return keep;
    }

private:
    const LoopPlan& m_plan;
    bool m_keep_all;
    size_t m_wrong_kept = 0;
};

void keep_or_drop(const LoopPlan& plan, KeepPolicy& policy, int i, TrialOutcome& o) {
    if (policy.keeps(i, o)) {
        if (plan.on_kept) plan.on_kept(o);
        return;
    }
    // Moved-from empties, not `= {}`: assigning an empty list keeps the capacity, and a long
    // exploration would keep every dropped history's buffer.
    o.history = std::vector<HistoryRecord>();
    o.stream = std::vector<StreamEntry>();
}

}  // namespace

void run_trial_loop(const Scenario& s, const LoopPlan& plan, LabResult& lab, const TrialFn& trial) {
    const uint64_t seed = lab_seed(s, plan.seed);
    const int n = plan.trials;
    KeepPolicy policy(s, plan);
    if (n > 0) lab.trials.reserve(static_cast<size_t>(n));
    int wrong = 0;
    // The sequential rule of a racy lab (expect.until_wrong): more trials while too few went wrong.
    for (int i = 1; i <= n || s.expect.wants_more(wrong, i - 1); ++i) {
        throw_if_interrupted();
        const int t = plan.first_trial + i - 1;
        if (plan.progress && (i == 1 || i % plan.progress_every == 0 || i == n))
            plan.progress(s.id, i, std::max(n, i));
        TrialResult r = trial(t, trial_seed(seed, t));
        if (auto* c = std::get_if<CaseOutcome>(&r)) {
            if (c->wrong) ++wrong;
            lab.cases.push_back(std::move(*c));
            continue;
        }
        TrialOutcome& o = std::get<TrialOutcome>(r);
        check_trial_invariants(s, o);
        if (plan.verify) plan.verify(o);
        if (o.wrong) ++wrong;
        keep_or_drop(plan, policy, i, o);
        lab.trials.push_back(std::move(o));
    }
}

}  // namespace relab
