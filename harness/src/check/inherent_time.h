// How long a run's labs take by their own content, measured from what they recorded: the time
// their trials and cases spent between their first and last record, without what relab adds
// around them (starting servers and role processes, reading results back, writing reports). The
// wall time of a run set beside it says what the harness costs, and what --jobs saves.
#pragma once

#include <cstdint>
#include <vector>

#include "check/outcome.h"

namespace relab {

// A workload trial: from its first to its last history record. A trial whose history was not
// kept (a load lab's, too long to keep) counts its load figures' span (first publish to last
// write), 0 when it has none.
int64_t trial_inherent_us(const TrialOutcome& t);
// A session case: from its origin to the end of its last step (start_us + duration_us), so the
// steps' planned waits (at_ms) count.
int64_t case_inherent_us(const CaseOutcome& c);
// A lab: the sum over its trials and cases. A skipped lab ran nothing: 0.
int64_t lab_inherent_us(const LabResult& lab);
// A run: the sum over its labs.
int64_t run_inherent_us(const std::vector<LabResult>& labs);

}  // namespace relab
