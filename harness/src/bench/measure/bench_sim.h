// Simulated trials per second, on one thread or several: `relab bench sim`. Every thread has its
// own SimBackend (its own world, scheduler, fibers and history; the simulator keeps no global
// mutable state), and the lab's trials are split into consecutive ranges, one per thread, each
// trial with the seed it has in a one-thread run, so the outcomes are the same whatever --jobs.
#pragma once

#include <cstdint>

#include "scenario/scenario.h"

namespace relab {

struct SimBenchResult {
    int jobs = 1;
    int64_t simulated = 0;  // trials run, trial 1's determinism re-run included
    int wrong = 0;          // trials with a wrong final state, over every range
    int total = 0;          // trials counted by the checker (simulated minus the re-run)
    double seconds = 0;     // wall clock, from the first thread's start to the last one's end
    // CPU time of the whole process over the same span: near jobs × seconds when every thread had
    // a core of its own; far below it when the machine was busy with other work.
    double cpu_seconds = 0;
    double trials_per_second() const { return seconds > 0 ? static_cast<double>(simulated) / seconds : 0; }
};

// Runs `trials` trials of `s` (which the simulator must support: see sim_skip_reason) on `jobs`
// threads. An exception in any thread (a role failing, Ctrl-C) is rethrown once all have stopped.
SimBenchResult bench_sim_lab(const Scenario& s, int trials, int jobs);

}  // namespace relab
