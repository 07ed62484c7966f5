// The faults of the failover lab on a primary and replica the user owns behind their own Sentinel
// (--redis-url redis+sentinel://… --allow-server-faults): relab cannot signal a process on someone
// else's machine, so it acts through the servers' own commands. A pause detaches the replica
// (REPLICAOF); the primary's death is Sentinel's forced failover (SENTINEL FAILOVER), which promotes
// the stale replica and demotes the primary, closing its clients' connections; relab then moves the
// primary back where it was (SENTINEL FAILOVER again). No server of the user's stops.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "servers/sentinel.h"
#include "servers/servers.h"

namespace relab {

// A primary and a linked replica, as the user's sentinels name them.
struct UserPair {
    RedisEndpoint primary;
    RedisEndpoint replica;
};

// Waits until the sentinels name a primary that answers ROLE master with a replica whose link is up
// and every sentinel agrees; throws EnvironmentError after `timeout`, naming what is missing.
UserPair wait_for_user_pair(const SentinelSet& sentinels, std::chrono::milliseconds timeout);

// The replica detached from its primary while "paused": REPLICAOF a closed port (127.0.0.1:1), so
// it keeps its data and takes no more writes, as a stopped process would, until resume() points it
// back at its primary. Slices of DEBUG SLEEP would leave the replica's event loop a moment between
// two, enough for it to reconnect and resync on a busy machine. Sentinel puts a replica whose
// master is wrong back only after its failover-timeout (+fix-slave-config), longer than the lab's
// window; a promotion (REPLICAOF NO ONE) ends the detachment too.
class DetachedReplica {
public:
    DetachedReplica(const RedisEndpoint& replica, const RedisEndpoint& primary);
    ~DetachedReplica();
    DetachedReplica(const DetachedReplica&) = delete;
    DetachedReplica& operator=(const DetachedReplica&) = delete;
    // REPLICAOF its primary again; after a failover, when Sentinel has promoted it, nothing.
    void resume() noexcept;

private:
    RedisEndpoint m_replica;
    RedisEndpoint m_primary;
    bool m_attached = false;
};

// The lab's failover on the user's servers: SENTINEL FAILOVER while `replica` is detached, so the
// sentinels promote it as it is and demote the primary, which resyncs from it (what it answered OK
// since the detachment is gone) after Sentinel closes its clients' connections. Returns once
// `replica` answers ROLE master; throws EnvironmentError after `timeout`.
void force_failover(SentinelSet& sentinels, const RedisEndpoint& replica, std::chrono::milliseconds timeout);

// After a failover of the lab: waits for Sentinel to make the old primary a linked replica, then
// has Sentinel promote it back (SENTINEL FAILOVER), so the topology is as relab found it. Throws
// EnvironmentError after `timeout` at any step.
void fail_back(SentinelSet& sentinels, const RedisEndpoint& original, std::chrono::milliseconds timeout);

}  // namespace relab
