// Runs the idempotency-key workload labs (article 002) on real servers: per trial the orders
// table, the lab's own redis-server(s) when it needs settings or faults, one process per client,
// the start barrier, the faults at their times, then the counts from the orders table and the
// answers.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "check/outcome.h"
#include "servers/servers.h"
#include "process/role_spawner.h"
#include "scenario/scenario.h"

namespace relab {

class ClusterPrefetch;
class LabRedis;
template <class T, class Spec>
class Prefetch;

struct IdemRunContext {
    const ServerSet& servers;
    std::string schema;      // the run's PostgreSQL schema
    std::string run_prefix;  // the run's key prefix, "relab:<run id>:"
    std::string relab_exe;   // spawned as `relab role --config FILE`
    std::string work_dir;    // role configs and histories go below it
    std::optional<uint64_t> seed;
    std::optional<int> runs;
    std::function<void(const std::string&, int, int)> progress;  // lab id, trial, trials
    ClusterPrefetch* clusters = nullptr;  // the cluster lab's cluster, maybe formed ahead; null: formed here
    // Each trial's own servers ("servers": {"own": true}), maybe started while the trial before ran;
    // null: started by the trial. next_lab_own_redis: what the lab after this one starts per trial.
    Prefetch<LabRedis, IdemServers>* own_redis = nullptr;
    std::optional<IdemServers> next_lab_own_redis;
    RoleSpawner* spawner = nullptr;  // forks the clients; null: each is exec'd
};

// Every trial of an idem_clients lab. The caller summarizes. (The benchmark and the cluster lab
// have runners of their own: idem_benchmark.h, idem_cluster.h.)
LabResult run_idem_lab(const Scenario& s, const IdemRunContext& ctx);

// Why a lab that runs on the run's Redis cannot run on one of this version: SET with NX and GET
// together came in Redis 7.0 (the middleware's claim, and Redis steps that use it). nullopt: it can.
// Labs on their own servers use the machine's redis-server and are not judged here.
std::optional<std::string> idem_skip_reason(const Scenario& s, const std::string& redis_version);

}  // namespace relab
