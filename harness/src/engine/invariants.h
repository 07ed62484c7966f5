// What must hold of every trial relab judges, whatever the lab: the accounting's identities and the
// history's pairing of a fault's invoke with its completion. A trial that breaks one was measured
// wrongly by relab itself, so the check throws HarnessError (exit 2), never a verdict.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "check/outcome.h"

namespace relab {

// Why `a` is inconsistent ("published 3 != processed_once 1 + duplicated 0 + lost 1"), or nullopt.
std::optional<std::string> accounting_violation(const Accounting& a);
// Why the history's invoke/completion records do not pair up, or nullopt: every fault invoke has
// exactly one ok or fail after it, and every completion an invoke before it.
std::optional<std::string> pairing_violation(const std::vector<HistoryRecord>& history);
// Throws HarnessError naming the lab, the trial, its seed and the violation.
void check_trial_invariants(const Scenario& s, const TrialOutcome& t);

}  // namespace relab
