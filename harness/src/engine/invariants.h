// What must hold of every trial relab judges, whatever the lab: the accounting's identities and the
// history's pairing of each actor's invokes with their completions. A trial that breaks one was
// measured wrongly by relab itself, so the check throws HarnessError (exit 2), never a verdict.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "check/outcome.h"

namespace relab {

// Why `a` is inconsistent ("published 3 != processed_once 1 + duplicated 0 + lost 1"), or nullopt.
std::optional<std::string> accounting_violation(const Accounting& a);
// Why the history's invoke/completion records do not pair up, or nullopt. The nemesis: every fault
// invoke has exactly one ok or fail after it, and every completion an invoke before it. A client:
// at most one request open (a send with no answer yet), and every answer completes the open send
// of its request and attempt; a kill or restart of the client, or the trial's end, leaves an open
// one unanswered (indeterminate, not a violation).
std::optional<std::string> pairing_violation(const std::vector<HistoryRecord>& history);
// Throws HarnessError naming the lab, the trial, its seed and the violation.
void check_trial_invariants(const Scenario& s, const TrialOutcome& t);

}  // namespace relab
