// A throwaway Redis Cluster of embedded redis-servers; relab's client for it is clients/cluster_client.h.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clients/cluster_slot.h"
#include "servers/servers.h"

namespace relab {

struct RedisClusterOptions {
    int masters = 3;                                // 1..16
    int replicas = 0;                               // per master: 0 or 1 (CLUSTER REPLICATE)
    std::chrono::milliseconds node_timeout{5000};   // cluster-node-timeout
    // From the first node's start until every node reports cluster_state:ok. A master waits 2 s
    // after its start before it reports ok (CLUSTER_WRITABLE_DELAY), so less than that never works.
    std::chrono::milliseconds form_timeout{30000};
    std::map<std::string, std::string> config;      // more redis-server settings for every node
    bool operator==(const RedisClusterOptions&) const = default;
};

// `masters` redis-servers in cluster mode on free loopback ports, each its own temp dir. The
// constructor forms the cluster as `redis-cli --cluster create` would, without redis-cli: each node
// takes its config epoch (CLUSTER SET-CONFIG-EPOCH) and its share of the slots (split_slots, CLUSTER
// ADDSLOTSRANGE), the first node meets the others (CLUSTER MEET with their bus ports), and it
// returns once CLUSTER INFO says cluster_state:ok and knows every node on every node. Throws
// EnvironmentError (Redis before 7.0, a node that does not start, a cluster that does not form in
// time); the nodes started so far are stopped and their directories removed, as on destruction.
class EmbeddedRedisCluster {
public:
    explicit EmbeddedRedisCluster(const RedisClusterOptions& opts = {});
    ~EmbeddedRedisCluster();
    EmbeddedRedisCluster(const EmbeddedRedisCluster&) = delete;
    EmbeddedRedisCluster& operator=(const EmbeddedRedisCluster&) = delete;

    size_t size() const;                            // masters
    std::vector<RedisEndpoint> endpoints() const;  // the masters, in slot order: node 1 owns slot 0
    std::vector<RedisEndpoint> all_endpoints() const;  // the masters, then their replicas
    const EmbeddedRedis& node(size_t i) const;
    SlotRange slots(size_t i) const;                // the range the node was given
    std::chrono::milliseconds formed_after() const;  // from the first start to cluster_state:ok everywhere
    void stop();                                      // every node; idempotent

    // A shard's master killed for the cluster's own failover: SIGKILL (as `docker kill`) to the
    // node that serves `slot` now; returns its address. Throws std::logic_error when none serves it.
    RedisEndpoint crash_master_of(int slot);
    // The node every live node's CLUSTER SLOTS names as `slot`'s master, when that node says it is
    // one (ROLE); nullopt while they disagree or name a dead node (the failover is not done).
    std::optional<RedisEndpoint> serving_master(int slot) const;
    // The replica that follows the master serving `slot` now (its ROLE names that master), stopped
    // with SIGSTOP: it keeps its connections and replicates nothing until resumed. Returns its
    // address. Throws std::logic_error when the slot's master has no live replica.
    RedisEndpoint pause_replica_of(int slot);
    // SIGCONT to the replica pause_replica_of(slot) stopped, found by the slot even once its master
    // is dead; no-op when none is paused for it.
    void resume_replica_of(int slot) noexcept;
    bool replica_paused(int slot) const { return m_paused.count(slot) > 0; }
    // CLIENT KILL TYPE replica on the master serving `slot`: it keeps answering writes that reach no
    // replica. Returns the number of links it dropped.
    int64_t drop_replica_links_of(int slot);

private:
    void add_replicas(const RedisClusterOptions& opts);
    void resume_replicas() noexcept;  // every replica a pause stopped: a stopped node ignores SIGTERM
    bool is_paused(size_t node) const;
    void wait_formed(const RedisClusterOptions& opts, std::chrono::steady_clock::time_point started);

    std::vector<std::unique_ptr<EmbeddedRedis>> m_nodes;     // masters, then replicas (replica i of master i)
    size_t m_masters = 0;
    std::vector<SlotRange> m_slots;
    std::map<int, size_t> m_paused;  // slot -> the node pause_replica_of stopped; serving_master skips it
    std::chrono::milliseconds m_formed_after{0};
};

}  // namespace relab
