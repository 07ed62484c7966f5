#include "check/inherent_time.h"

#include <algorithm>

namespace relab {

int64_t trial_inherent_us(const TrialOutcome& t) {
    if (t.history.empty()) return std::max<int64_t>(t.load.span_us, 0);
    const auto [lo, hi] = std::minmax_element(t.history.begin(), t.history.end(),
                                              [](const HistoryRecord& a, const HistoryRecord& b) { return a.t_ns < b.t_ns; });
    return (hi->t_ns - lo->t_ns) / 1000;
}

int64_t case_inherent_us(const CaseOutcome& c) {
    int64_t end = 0;
    for (const auto& s : c.steps) end = std::max(end, s.start_us + s.duration_us);
    return end;
}

int64_t lab_inherent_us(const LabResult& lab) {
    if (lab.skipped) return 0;
    int64_t us = 0;
    for (const auto& t : lab.trials) us += trial_inherent_us(t);
    for (const auto& c : lab.cases) us += case_inherent_us(c);
    return us;
}

int64_t run_inherent_us(const std::vector<LabResult>& labs) {
    int64_t us = 0;
    for (const auto& lab : labs) us += lab_inherent_us(lab);
    return us;
}

}  // namespace relab
