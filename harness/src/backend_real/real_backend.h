// Runs labs on real servers: per trial a fresh namespace, role processes, the start barrier, the
// merge of their histories, and the final state read back for the checker.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "check/outcome.h"
#include "engine/seeds.h"
#include "servers/servers.h"
#include "scenario/scenario.h"

namespace relab {

struct BackendOptions {
    std::optional<uint64_t> seed;  // overrides every scenario's seed
    std::optional<int> runs;       // overrides every scenario's runs
    RunShard shard;                // --shard K/N: this runner's share of every lab's trials
    std::string relab_exe;         // `relab role --spawner`, which forks the roles (process/role_spawner.h)
    std::string run_id;            // names the run's key prefix and schema
    // --allow-server-faults: the failover lab may pause the replica and shut down the primary behind
    // the user's Sentinel (redis+sentinel://); without it the lab is skipped with the reason.
    bool allow_server_faults = false;
    // Called before each trial (lab id, trial, trials).
    std::function<void(const std::string&, int, int)> progress;
};

class RealBackend {
public:
    RealBackend(const ServerSet& servers, BackendOptions opts);
    ~RealBackend();
    RealBackend(const RealBackend&) = delete;
    RealBackend& operator=(const RealBackend&) = delete;

    ServerInfo server_info() const;
    LabResult run(const Scenario& s);
    // The lab that runs after the next run(): what it needs that takes long to start (a Redis
    // Cluster: its masters report ok only 2 s after they start) is started now, in the background.
    void upcoming(const Scenario& next);
    // The same, knowing every lab still to come (`later`, in order, after `next`): the next lab that
    // forms a Redis Cluster has its cluster formed from now on, even when labs without one come
    // between (a short lab before it would leave too little time to form it).
    void upcoming(const Scenario& next, std::span<const Scenario> later);
    // How many labs took a Redis Cluster formed ahead for them.
    int clusters_taken_ahead() const;

private:
    LabResult run_one(const Scenario& s);
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace relab
