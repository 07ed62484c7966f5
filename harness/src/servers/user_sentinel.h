// The faults of the failover lab on a primary and replica the user owns behind their own Sentinel
// (--redis-url redis+sentinel://… --allow-server-faults): relab cannot signal a process on someone
// else's machine, so it acts through the servers' own commands. A pause is DEBUG SLEEP, a kill is
// SHUTDOWN NOSAVE; the user's supervisor (systemd, Docker's restart policy) starts the primary again,
// and relab then moves the primary back where it was (SENTINEL FAILOVER).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

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

// The replica's server held still by back-to-back DEBUG SLEEPs on a connection of its own (a remote
// SIGSTOP: it answers no one, its sentinels and its primary included) until resume(), which
// returns once the last sleep has ended. Between two sleeps the server runs its event loop once,
// where it could reconnect to its primary; a sleep of half a second leaves no such moment in the
// failover lab, whose primary dies 450 ms after the pause.
class RemotePause {
public:
    explicit RemotePause(const RedisEndpoint& server);
    ~RemotePause();
    RemotePause(const RemotePause&) = delete;
    RemotePause& operator=(const RemotePause&) = delete;
    void resume() noexcept;

    static constexpr std::chrono::milliseconds kSlice{500};

private:
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
};

// Whether the server takes DEBUG (enable-debug-command): "" if it does, else why not.
std::string debug_refused(const RedisEndpoint& server);

// SHUTDOWN NOSAVE (NOW FORCE where the server knows them): the process ends at once, without a
// final save, and every connection closes, as with SIGKILL. Returns once the port refuses.
void shut_down(const RedisEndpoint& server);

// After a failover of the lab: waits for the user's supervisor to start the old primary and for
// Sentinel to make it a linked replica, then has Sentinel promote it back (SENTINEL FAILOVER), so
// the topology is as relab found it. Throws EnvironmentError after `timeout` at any step.
void fail_back(SentinelSet& sentinels, const RedisEndpoint& original, std::chrono::milliseconds timeout);

}  // namespace relab
