// A sharded stream lab's Redis Cluster while the lab runs (S2): one of relab's own, formed ahead
// (servers/cluster_prefetch.h) and formed again for each trial after one whose fault changed it,
// or the user's (redis+cluster://), whose masters its slot map names. Every trial's keys are under
// its own prefix and removed after it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "clients/cluster_client.h"
#include "ports/ports.h"
#include "scenario/scenario.h"
#include "servers/cluster_prefetch.h"
#include "servers/redis_cluster.h"
#include "servers/servers.h"

namespace relab {

// S2's cluster as the lab's "shard" describes it: masters for its shards, replicas, node timeout.
RedisClusterOptions shard_cluster_options(const ShardSpec& shard);

class ShardCluster {
public:
    // `clusters`: where a cluster of relab's own is formed ahead; `run_prefix`: the run's keys,
    // which the reaper removes from the user's masters should relab be killed.
    ShardCluster(const ServerSet& servers, ClusterPrefetch& clusters, std::string run_prefix)
        : m_servers(servers), m_clusters(clusters), m_run_prefix(std::move(run_prefix)) {}

    // The lab starts on a cluster: its own, taken formed, or the user's; throws EnvironmentError
    // naming the lab when it cannot be had.
    void take(const Scenario& s);
    // A trial of the lab starts: one after a trial whose fault changed the cluster gets a new one.
    void before_trial(const Scenario& s);
    // The lab ended, however it ended: its cluster goes.
    void release();
    // The trial's keys (under `prefix`) removed from every master; never throws.
    void remove_keys(const std::string& prefix) const noexcept;
    // Where each shard's stream lives: its hash tag's slot and the master that owns it, as read
    // through `c`; a record of the trial's.
    HistoryRecord shard_note(const Scenario& s, ClusterClient& c, int trial, const std::string& prefix) const;

    // The lab runs on a cluster: its masters, in slot order; empty: it does not.
    const std::vector<RedisEndpoint>& masters() const { return m_masters; }
    bool on() const { return !m_masters.empty(); }
    // The cluster relab formed for the lab (a fault acts on its servers); null: none.
    EmbeddedRedisCluster* own() const { return m_cluster.get(); }

    // A lab that kills a shard's master (or pauses its replica) leaves a cluster changed for good:
    // each trial forms its own.
    static bool faulted(const Scenario& s);

private:
    // redis+cluster://: the lab routes by the user's slot map (its masters as CLUSTER SLOTS names
    // them); the reaper removes the run's keys from each should relab be killed.
    void take_user(const Scenario& s);

    const ServerSet& m_servers;
    ClusterPrefetch& m_clusters;
    std::string m_run_prefix;
    std::unique_ptr<EmbeddedRedisCluster> m_cluster;
    bool m_used = false;  // a trial ran on it (one that kills a master leaves it changed)
    std::vector<RedisEndpoint> m_masters;
};

}  // namespace relab
