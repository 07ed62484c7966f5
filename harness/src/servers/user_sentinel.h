// The faults of the failover lab on a primary and replica the user owns behind their own Sentinel
// (--redis-url redis+sentinel://… --allow-server-faults): relab cannot signal a process on someone
// else's machine, so it acts through the servers' own commands. A pause detaches the replica
// (REPLICAOF), a kill is SHUTDOWN NOSAVE; the user's supervisor (systemd, Docker's restart policy)
// starts the primary again, and relab then moves the primary back where it was (SENTINEL FAILOVER).
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

// SHUTDOWN NOSAVE (NOW FORCE where the server knows them): the process ends at once, without a
// final save, and every connection closes, as with SIGKILL. Returns once the port refuses.
void shut_down(const RedisEndpoint& server);

// After a failover of the lab: waits for the user's supervisor to start the old primary and for
// Sentinel to make it a linked replica, then has Sentinel promote it back (SENTINEL FAILOVER), so
// the topology is as relab found it. Throws EnvironmentError after `timeout` at any step.
void fail_back(SentinelSet& sentinels, const RedisEndpoint& original, std::chrono::milliseconds timeout);

}  // namespace relab
