// Runs labs on the simulator: the same roles as the real backend (trial_roles/run_role), the same
// start barrier, stop protocol, history records and checker, on virtual time. One trial seed gives
// one history, byte for byte; a failing seed is replayed with --replay.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "check/outcome.h"
#include "ports/seed_text.h"
#include "scenario/scenario.h"

namespace relab {

struct SimOptions {
    std::optional<uint64_t> seed;    // overrides every scenario's seed (--seed)
    std::optional<int> trials;       // overrides every scenario's runs (--trials, --runs)
    // The first trial's number: trials first_trial .. first_trial + trials - 1 run, with their own
    // seeds, so `relab bench --jobs N` splits one lab's trials over threads without repeating one.
    int first_trial = 1;
    RunShard shard;                  // --shard K/N: this runner's share of every lab's trials
    std::optional<uint64_t> replay;  // run only the trial with this trial seed (--replay)
    // Runs trial 1 of every lab twice and throws DeterminismError if the histories differ.
    bool self_check = true;
    // Above kKeepAllHistories trials, only the first keep_histories trials and the first few wrong
    // ones keep their history and stream (for timelines); the others keep their outcome.
    int keep_histories = 50;
    // Called before some trials (lab id, trial, trials).
    std::function<void(const std::string&, int, int)> progress;
};

inline constexpr int kKeepAllHistories = 1000;
// ... unless the lab is large: trials × events above this keep only the first and the failing
// histories (S2's 600 events would hold gigabytes of records over 1000 trials).
inline constexpr size_t kKeepAllEvents = 20000;

// The same trial seed gave two different histories: something escaped the seeded schedule.
class DeterminismError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class SimBackend {
public:
    explicit SimBackend(SimOptions opts = {});
    ~SimBackend();
    SimBackend(const SimBackend&) = delete;
    SimBackend& operator=(const SimBackend&) = delete;

    LabResult run(const Scenario& s);
    // One trial of a workload scenario. Throws std::runtime_error naming the trial and its seed
    // when a role fails, the trial runs past its time limit or stalls.
    TrialOutcome run_trial(const Scenario& s, int trial, uint64_t trial_seed);
    // Runs the trial seed twice; the fingerprints of the two runs.
    std::pair<uint64_t, uint64_t> self_check(const Scenario& s, uint64_t trial_seed);

private:
    LabResult run_one(const Scenario& s);
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

// Why the simulator does not run this lab (it is then reported as skipped), or nullopt.
std::optional<std::string> sim_skip_reason(const Scenario& s);
// FNV-1a (64 bit) of the trial's history as JSON lines, its final rows and its stream.
uint64_t trial_fingerprint(const TrialOutcome& t);
// The trial number whose seed under lab_seed is trial_seed, looking at trials 1..limit.
std::optional<int> trial_of_seed(uint64_t lab_seed, uint64_t trial_seed, int limit = 1'000'000);

}  // namespace relab
