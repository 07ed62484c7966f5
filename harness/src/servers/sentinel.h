// Redis Sentinel for the failover labs: three `redis-server --sentinel` children on free loopback
// ports that monitor one primary, elect a leader when it dies and promote its replica, as in
// production. Owned like EmbeddedRedis: destroying the set stops every sentinel (SIGTERM, then
// SIGKILL, always followed by wait()) and removes its directory.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "servers/servers.h"

namespace relab {

struct SentinelOptions {
    std::string master_name = "relab";
    int sentinels = 3;
    int quorum = 2;
    // sentinel.conf: how long a silent primary takes to be subjectively down, and the failover
    // timeout (also the wait before a failed election is tried again: twice this).
    std::chrono::milliseconds down_after{500};
    std::chrono::milliseconds failover_timeout{4000};
    // SENTINEL DEBUG (Redis >= 7.0; not settable in sentinel.conf; Redis's own sentinel tests use
    // it the same way): INFO to every instance each info_period (default 10 s), hello messages each
    // publish_period (default 2 s), PING (and reconnecting a lost link) each ping_period (default
    // 1 s). A primary that comes back after a failover is made a replica 4 × publish_period after
    // it reported its role (+convert-to-slave): 8 s with the defaults. A ping period shorter than
    // down_after keeps a link that a promotion's CLIENT KILL dropped from reading as "down"; it
    // must stay above 200 ms: a replica is a candidate only if its INFO (every 1 s, fixed, while
    // the primary is down) is younger than 5 × ping_period (else -failover-abort-no-good-slave).
    std::chrono::milliseconds info_period{250};
    std::chrono::milliseconds publish_period{250};
    std::chrono::milliseconds ping_period{250};
    std::chrono::milliseconds start_timeout{15000};
};

// One +switch-master event, or what get-master-addr-by-name answered once it changed.
struct MasterSwitch {
    RedisEndpoint primary;    // the new primary (password and db copied from the old endpoint)
    double ms = 0;            // from `since` (the kill) to the event's arrival
    std::string sentinel;     // "127.0.0.1:26xxx": the sentinel whose message came first
    std::string method;       // how it was seen: "SUBSCRIBE +switch-master"
    std::string message;      // the event's payload: "<name> <old ip> <old port> <new ip> <new port>"
};

// Sentinels relab did not start (a user's, from redis+sentinel://) and the name they watch a
// primary by.
struct UserSentinels {
    std::vector<RedisEndpoint> sentinels;
    std::string master_name;
};

class SentinelSet {
public:
    // Attaches to the user's sentinels: starts nothing, reads the quorum and down-after of the
    // primary they watch (SENTINEL MASTER) into options(), and subscribes to +switch-master on each,
    // as the constructor below does. stop() and the destructor only close the subscriptions.
    // Throws EnvironmentError when a sentinel does not answer or does not watch `master_name`.
    SentinelSet(const UserSentinels& user, const RedisEndpoint& primary);
    // Starts opts.sentinels sentinels monitoring `primary` (its password as auth-pass) and returns
    // once every one sees the primary, `replicas` linked replicas and every other sentinel; then
    // subscribes to +switch-master on every sentinel, so a failover after the constructor is seen.
    // Throws EnvironmentError (quoting the sentinels' logs) when they do not come up or agree.
    SentinelSet(const RedisEndpoint& primary, int replicas, const SentinelOptions& opts = {});
    ~SentinelSet();
    SentinelSet(const SentinelSet&) = delete;
    SentinelSet& operator=(const SentinelSet&) = delete;

    const std::vector<RedisEndpoint>& endpoints() const;
    const std::string& master_name() const;
    const SentinelOptions& options() const;
    std::vector<int> pids() const;
    const std::string& dir() const;  // the temp dir holding every sentinel's config and log

    // SENTINEL get-master-addr-by-name from the first sentinel that answers. Throws EnvironmentError
    // when none does.
    RedisEndpoint master_addr() const;
    // Waits until every sentinel's get-master-addr-by-name names `primary` (the leader switches
    // first, the others learn it from its hello messages). Throws EnvironmentError after `timeout`.
    void wait_until_all_name(const RedisEndpoint& primary, std::chrono::milliseconds timeout) const;
    // Waits for the +switch-master of the primary at `old` (the subscriptions made by the
    // constructor) and returns the new primary. Throws EnvironmentError after `timeout`.
    MasterSwitch wait_for_switch_master(const RedisEndpoint& old, std::chrono::milliseconds timeout,
                                        std::chrono::steady_clock::time_point since);
    // Every distinct +switch-master payload the subscriptions have received so far (reads what
    // arrived, does not wait): one per failover, whichever sentinels published it.
    std::vector<std::string> switches();
    // The last lines of every sentinel's log, for an error message.
    std::string log_tail(size_t max_lines = 12) const;
    void stop();  // idempotent

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace relab
