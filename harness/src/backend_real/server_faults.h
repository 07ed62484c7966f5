// The primitives of the Control port on a real lab's servers (every target but a role): its own
// redis-server (SIGKILL, as `docker kill`; SIGSTOP and SIGCONT; a restart on its port and data
// directory), the replica and Sentinel's election, its own PostgreSQL, and a Redis Cluster's shard
// masters and replicas. A role's are role_processes.h's.
#pragma once

#include <cstdint>
#include <map>

#include <nlohmann/json.hpp>

#include "backend_real/lab_connections.h"
#include "backend_real/real_control.h"

namespace relab {

// A primitive asked of a target it does not act on: fault/faults.cpp's table lets no fault get here.
[[noreturn]] void primitive_not_for(const char* primitive, const Target& t);

class ServerFaults {
public:
    ServerFaults(const RealControl::Env& env, LabConnections& connections) : m_env(env), m_connections(connections) {}

    // As Control's, for a server target.
    bool finished(const Target& t);
    void kill(const Target& t);
    // SIGSTOP (`stop`) or SIGCONT: a pause of `t`, or its resume.
    void stop_or_continue(const Target& t, bool stop);
    bool paused(const Target& t);
    void start(const Target& t);
    // "redis-replica": the primary's replication links; a shard's replica: its master's links to it.
    int64_t drop_replica_links(const Target& t);
    nlohmann::json promote(Nanos killed_at);
    nlohmann::json shard_promote(const Target& master, Nanos killed_at);
    // Throws when Sentinel failed over more often than the lab scheduled (RealControl's).
    void fail_on_unscheduled_failover();

    // The lab's primary is down or stopped: nothing is read from it now.
    bool primary_out() const { return m_redis_down || m_redis_paused; }

private:
    LabRedis& server();
    EmbeddedPostgres& postgres();
    // The cluster slot of shard k's stream, which names its master (and that master's replica).
    int shard_slot(int shard) const;
    // The primary started again on its port, data directory and settings: it loads what it kept.
    void restart_primary();

    const RealControl::Env& m_env;
    LabConnections& m_connections;
    std::map<int, RedisEndpoint> m_killed_masters;  // shard -> the master a shard_failover killed
    bool m_redis_down = false;
    bool m_redis_paused = false;
    bool m_replica_paused = false;
};

}  // namespace relab
