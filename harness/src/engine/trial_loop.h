// The one loop over a lab's trials, for both backends and every family: how many trials run
// (the planned ones, then more while a racy lab's expect.until_wrong asks), each trial's seed,
// Ctrl-C between trials, progress, the invariants checked after every trial, and which trials keep
// their history for the timelines.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>

#include "check/outcome.h"
#include "check/run_shard.h"
#include "scenario/scenario.h"

namespace relab {

struct LoopPlan {
    int trials = 1;       // planned, before until_wrong
    int first_trial = 1;  // a slice of a lab's trials (relab bench --jobs) starts later
    std::optional<uint64_t> seed;  // --seed: every lab's seed derives from it
    // Called before a trial (lab id, trial, trials) every `progress_every` trials, the first and last too.
    std::function<void(const std::string&, int, int)> progress;
    int progress_every = 1;
    // Which trials keep their history and stream; every trial keeps its outcome.
    KeepRule keep;
    // This runner's share of the trials (--shard K/N). A shard of a racy lab runs its share of every
    // trial up to until_wrong's max_runs: `relab merge` then cuts the merged trials where one run's
    // sequential rule would have stopped.
    RunShard shard;
    // Called on each trial's outcome before the loop keeps or drops its history (the simulator's
    // determinism check of trial 1), and on each history kept (to fold its fields).
    std::function<void(const TrialOutcome&)> verify;
    std::function<void(TrialOutcome&)> on_kept;
};

// What one trial of a family gives: a workload's outcome, or a scripted case's.
using TrialResult = std::variant<TrialOutcome, CaseOutcome>;
using TrialFn = std::function<TrialResult(int trial, uint64_t trial_seed)>;

// The last trial number a lab's loop may reach: its planned trials, or until_wrong's max_runs.
int last_possible_trial(const Scenario& s, const LoopPlan& plan);
// Whether this shard runs any trial of the lab (a shard with none leaves the lab's servers alone).
bool shard_has_trials(const Scenario& s, const LoopPlan& plan);

// Runs trials first_trial.. into lab.trials (or lab.cases). Throws what a trial throws, and
// HarnessError when a trial's outcome breaks an invariant of relab's own accounting.
void run_trial_loop(const Scenario& s, const LoopPlan& plan, LabResult& lab, const TrialFn& trial);

// A lab with an arrangement beside it (StreamLab::beside, for expect.throughput_ratio): `run_one`
// runs that arrangement first, then the lab, on the same backend and servers, and the lab is judged
// again with the arrangement's pace. Any other lab: `run_one(s)`.
LabResult run_with_beside(const Scenario& s, const std::function<LabResult(const Scenario&)>& run_one);

}  // namespace relab
