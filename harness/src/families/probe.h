// A probe family's lab on real servers: the scripted sessions, the idempotency benchmark and the
// Redis Cluster lab measure the servers themselves instead of running roles under a supervisor. The
// real backend opens the lab once (what its trials share: a formed cluster), runs each trial of
// the engine's loop through it, then lets it add the lab's figures.
#pragma once

#include <memory>
#include <string>

#include "engine/trial_loop.h"
#include "servers/servers.h"

namespace relab {

class ClusterPrefetch;

// What the real backend gives a probe: the run's servers and namespace.
struct ProbeEnv {
    const ServerSet& servers;
    std::string schema;      // the run's PostgreSQL schema
    std::string run_prefix;  // the run's key prefix, "relab:<run id>:"
    std::string work_dir;    // the run's temp directory; a probe's files go below it
    ClusterPrefetch* clusters = nullptr;  // a cluster maybe formed ahead for the lab; null: formed here
};

class ProbeLab {
public:
    virtual ~ProbeLab() = default;
    virtual TrialResult trial(int trial, uint64_t seed) = 0;
    // After the last trial: the lab's figures beside the article's (lab.measurements), cleanup.
    virtual void finish(LabResult&) {}
};

std::unique_ptr<ProbeLab> open_sessions_probe(const Scenario& s, ProbeEnv& env);
std::unique_ptr<ProbeLab> open_benchmark_probe(const Scenario& s, ProbeEnv& env);
std::unique_ptr<ProbeLab> open_cluster_probe(const Scenario& s, ProbeEnv& env);

}  // namespace relab
