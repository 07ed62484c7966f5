// The harness's own connections to a trial's Redis: a client of the lab's current primary, others
// for Control::commands on the cache's instance or another database, and its client of the lab's
// Redis Cluster. A fault that takes a server away drops them; the next use connects again.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>

#include "backend_real/real_control.h"

namespace relab {

class LabConnections {
public:
    explicit LabConnections(const RealControl::Env& env);
    ~LabConnections();
    LabConnections(const LabConnections&) = delete;
    LabConnections& operator=(const LabConnections&) = delete;

    // The lab's primary now (another one after a failover): its own, or the run's server.
    RedisEndpoint primary() const;
    // A client of the lab's current primary.
    RedisClient& admin();
    // A connection for Control::commands ("redis" or "redis-cache", db -1: the lab's own): the
    // admin client, or one of its own for the cache's instance or another database, so that the
    // admin's stays where it is.
    RedisClient& for_commands(bool cache, int64_t db);
    // S2: a client of the lab's Redis Cluster (keys under the trial's prefix; MOVED and ASK followed).
    ClusterClient& cluster();

    // The primary changed or restarted: the harness's connections to it are gone.
    void reconnect();
    // The admin client failed (its server unreachable): the next use connects again.
    void drop_admin() { m_admin.reset(); }
    // The cluster's slot map names a dead master: the next use reads the new one.
    void drop_cluster();

private:
    const RealControl::Env& m_env;
    std::unique_ptr<RedisClient> m_admin;
    // A flood's connections to the cache's instance or another database, by (cache, db).
    std::map<std::pair<bool, int64_t>, std::unique_ptr<RedisClient>> m_others;
    std::unique_ptr<ClusterClient> m_cluster;
};

}  // namespace relab
