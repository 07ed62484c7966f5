// A throwaway Redis Cluster of embedded redis-servers, and a client that routes each command to the
// master owning its key's slot (hiredis 0.14 has no cluster support).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "clients/cluster_slot.h"
#include "clients/redis_client.h"
#include "servers/servers.h"

namespace relab {

struct RedisClusterOptions {
    int masters = 3;                                // 1..16, no replicas
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

    size_t size() const;
    std::vector<RedisEndpoint> endpoints() const;  // in slot order: node 1 owns slot 0
    const EmbeddedRedis& node(size_t i) const;
    SlotRange slots(size_t i) const;                // the range the node was given
    std::chrono::milliseconds formed_after() const;  // from the first start to cluster_state:ok everywhere
    void stop();                                      // every node; idempotent

private:
    std::vector<std::unique_ptr<EmbeddedRedis>> m_nodes;
    std::vector<SlotRange> m_slots;
    std::chrono::milliseconds m_formed_after{0};
};

// A reply that sends the client elsewhere: MOVED (the slot lives on another node) or ASK (it is
// migrating). The lab's cluster never moves a slot, so relab routed wrong or the cluster changed
// under the lab; the message says which key, which slot and where the cluster sent it.
class ClusterRedirectError : public RedisError {
public:
    using RedisError::RedisError;
};

// Sends each command to the master owning its key's slot, by the slot map read once from CLUSTER
// SLOTS. Redirections are never followed: MOVED and ASK throw ClusterRedirectError. Every other
// reply, errors included (CROSSSLOT is something a lab wants to see), is returned.
class RedisClusterClient {
public:
    // Connects to every node and reads CLUSTER SLOTS from the first. Throws RedisError when the
    // map leaves a slot unserved or names a node that is not in `nodes`.
    explicit RedisClusterClient(const std::vector<RedisEndpoint>& nodes);
    ~RedisClusterClient();
    RedisClusterClient(const RedisClusterClient&) = delete;
    RedisClusterClient& operator=(const RedisClusterClient&) = delete;

    size_t size() const { return m_nodes.size(); }
    const RedisEndpoint& endpoint(size_t node) const;
    RedisClient& node(size_t i);
    size_t node_of_slot(int slot) const;
    size_t node_of_key(std::string_view key) const { return node_of_slot(key_slot(key)); }

    // argv sent to the owner of key's slot (for a multi-key command: its first key).
    RedisReply command(const std::string& key, const std::vector<std::string>& argv);
    // commands[i] goes to the owner of keys[i]; one pipeline per node; replies in the commands' order.
    std::vector<RedisReply> pipeline(const std::vector<std::string>& keys,
                                     const std::vector<std::vector<std::string>>& commands);

private:
    void throw_if_redirect(const std::string& key, const std::vector<std::string>& argv, size_t node,
                           const RedisReply& reply) const;

    std::vector<std::unique_ptr<RedisClient>> m_nodes;
    std::vector<size_t> m_owner;  // per slot: the index into m_nodes
};

// "MOVED 3999 127.0.0.1:6381" or "ASK ..." (the error reply's text).
bool is_redirect(const RedisReply& reply);

}  // namespace relab
