#include "backend_real/shard_cluster.h"

#include <algorithm>

#include <fmt/format.h>

#include "clients/cluster_slot.h"
#include "clients/redis_client.h"
#include "fault/fault_spec.h"
#include "process/reaper.h"

namespace relab {

RedisClusterOptions shard_cluster_options(const ShardSpec& shard) {
    RedisClusterOptions o;
    o.replicas = shard.cluster.replicas;
    o.node_timeout = std::chrono::milliseconds(shard.cluster.node_timeout_ms);
    if (!shard.cluster.require_full_coverage) o.config["cluster-require-full-coverage"] = "no";
    return o;
}

bool ShardCluster::faulted(const Scenario& s) {
    return std::any_of(s.faults.begin(), s.faults.end(), [](const FaultSpec& f) { return f.target.shard >= 0; });
}

void ShardCluster::take(const Scenario& s) {
    if (!m_servers.cluster_seeds.empty()) return take_user(s);
    try {
        m_cluster.reset();
        m_used = false;
        m_cluster = m_clusters.take(shard_cluster_options(s.flow().shard));
        m_masters = m_cluster->endpoints();
    } catch (const EnvironmentError& e) {
        throw EnvironmentError(fmt::format("{} shards its stream over a Redis Cluster of its own, which could "
                                           "not be formed: {}",
                                           s.id, e.what()));
    }
}

void ShardCluster::take_user(const Scenario& s) {
    try {
        ClusterClient map(m_servers.cluster_seeds, ClusterClientOptions::refusing());
        for (size_t i = 0; i < map.size(); ++i) m_masters.push_back(map.endpoint(i));
    } catch (const RedisError& e) {
        throw EnvironmentError(fmt::format("{} shards its stream over your Redis Cluster {}, whose slot map could "
                                           "not be read: {}",
                                           s.id, m_servers.redis_url_display, e.what()));
    }
    for (const auto& ep : m_masters) reaper::watch_redis_prefix(ep, m_run_prefix);
}

void ShardCluster::before_trial(const Scenario& s) {
    if (!m_cluster || !faulted(s)) return;
    if (m_used) take(s);  // the last trial killed one of its masters
    m_used = true;
}

void ShardCluster::release() {
    for (const auto& ep : m_masters)
        if (!m_cluster) reaper::forget_redis_prefix(ep, m_run_prefix);
    m_masters.clear();
    m_cluster.reset();
}

void ShardCluster::remove_keys(const std::string& prefix) const noexcept {
    for (const auto& ep : m_masters) try {
            RedisClient c(ep);
            delete_keys_with_prefix(c, prefix);
        } catch (...) {
        }
}

HistoryRecord ShardCluster::shard_note(const Scenario& s, ClusterClient& c, int trial,
                                       const std::string& prefix) const {
    nlohmann::json shard_map = nlohmann::json::array();
    std::string text;
    for (const auto& key : lab_stream_keys(s.flow().stream, s.flow().shard)) {
        const std::string real = prefix + key;
        const std::string node = c.owner_address(real);
        shard_map.push_back({{"stream", key}, {"slot", key_slot(real)}, {"node", node}});
        text += fmt::format("{}{} → slot {} on {}", text.empty() ? "" : ", ", key, key_slot(real), node);
    }
    return HistoryRecord{trial, 0, "relab", Op::observe,
                         {{"text", "shards on the Redis Cluster: " + text},
                          {"masters", m_masters.size()},
                          {"streams", shard_map}}};
}

}  // namespace relab
