#include "backend_real/lab_connections.h"

#include <stdexcept>

#include "clients/cluster_client.h"
#include "servers/lab_redis.h"

namespace relab {

LabConnections::LabConnections(const RealControl::Env& env) : m_env(env) {}
LabConnections::~LabConnections() = default;

RedisEndpoint LabConnections::primary() const { return m_env.own ? m_env.own->primary() : m_env.run_redis; }

RedisClient& LabConnections::admin() {
    if (!m_admin) m_admin = std::make_unique<RedisClient>(primary());
    return *m_admin;
}

RedisClient& LabConnections::for_commands(bool cache, int64_t db) {
    if (!cache && (db < 0 || db == primary().db)) return admin();
    std::unique_ptr<RedisClient>& c = m_others[{cache, db}];
    if (!c) {
        if (cache && !m_env.own) throw std::logic_error("this lab has no redis-server of its own to fault");
        RedisEndpoint ep = cache ? m_env.own->cache() : primary();
        if (db >= 0) ep.db = static_cast<int>(db);
        c = std::make_unique<RedisClient>(ep);
    }
    return *c;
}

ClusterClient& LabConnections::cluster() {
    if (m_env.cluster.empty()) throw std::logic_error("this lab has no Redis Cluster");
    if (!m_cluster) {
        const auto options = ClusterClientOptions::following(RedisNamespace{m_env.prefix}, m_env.prefix);
        m_cluster = std::make_unique<ClusterClient>(m_env.cluster, options);
    }
    return *m_cluster;
}

void LabConnections::reconnect() {
    m_admin.reset();
    m_others.clear();
}

void LabConnections::drop_cluster() { m_cluster.reset(); }

}  // namespace relab
