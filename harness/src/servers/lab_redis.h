// The Redis a lab with servers of its own runs on, per trial: its primary with the lab's settings
// and, with "replica", a linked replica watched by 3 sentinels (Sentinel's election does the
// failover). Shared by the idempotency runner and the stream labs' real backend.
#pragma once

#include <signal.h>

#include <chrono>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "ports/ports.h"
#include "util/interrupt.h"
#include "clients/redis_client.h"
#include "servers/sentinel.h"
#include "servers/servers.h"
#include "servers/user_sentinel.h"
#include "scenario/lab_servers.h"

namespace relab {

// One field of a parsed INFO section (info_section), "" when absent; as a number, 0 when absent.
inline std::string field(const std::map<std::string, std::string>& info, const std::string& name) {
    const auto it = info.find(name);
    return it == info.end() ? "" : it->second;
}

inline int64_t int_field(const std::map<std::string, std::string>& info, const std::string& name) {
    const std::string v = field(info, name);
    return v.empty() ? 0 : std::stoll(v);
}

// One field of INFO <section> (one round trip); "" when absent.
inline std::string info_field(RedisClient& c, const std::string& section, const std::string& name) {
    return field(info_section(c, section), name);
}

inline int64_t info_int(RedisClient& c, const std::string& section, const std::string& name) {
    return int_field(info_section(c, section), name);
}


// Waits in short slices, answering Ctrl-C, until pred() or the timeout; false on timeout.
template <class Pred>
bool wait_until(Pred pred, std::chrono::milliseconds timeout, std::chrono::milliseconds slice = std::chrono::milliseconds(2)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        throw_if_interrupted();
        if (pred()) return true;
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(slice);
    }
}

// The trial's Redis: the run's own server, or the lab's primary (and replica, watched by three
// sentinels that fail over to it) with its settings.
class LabRedis {
public:
    LabRedis(const LabServers& servers, const RedisEndpoint& run_redis) {
        if (!servers.own) {
            m_primary_ep = run_redis;
            return;
        }
        RedisOptions o;
        o.config = servers.redis_config;
        m_primary = std::make_unique<EmbeddedRedis>(o);
        m_primary_ep = m_primary->endpoint();
        if (servers.cache) {
            RedisOptions c;
            c.config = servers.cache_config;
            m_cache = std::make_unique<EmbeddedRedis>(c);
        }
        if (!servers.replica) return;
        RedisOptions r = o;
        r.config["replicaof"] = fmt::format("127.0.0.1 {}", m_primary_ep.port);
        m_replica = std::make_unique<EmbeddedRedis>(r);
        RedisClient replica(m_replica->endpoint());
        if (!wait_until([&] { return info_field(replica, "replication", "master_link_status") == "up"; },
                        std::chrono::milliseconds(15000), std::chrono::milliseconds(10)))
            throw EnvironmentError("the replica on " + m_replica->endpoint().display() +
                                   " did not finish its first sync with the primary within 15 s");
        wait_replica_acks();
        m_sentinels = std::make_unique<SentinelSet>(m_primary_ep, 1);
    }
    // The user's primary and replica behind their sentinels (redis+sentinel:// with
    // --allow-server-faults), as the sentinels name them now. `prefix` is the trial's: the
    // replication check's key is under it.
    LabRedis(const UserSentinels& user, const RedisEndpoint& data, const std::string& prefix)
        : m_user(true), m_check_key(prefix + "replication-check") {
        m_sentinels = std::make_unique<SentinelSet>(user, data);
        const UserPair pair = wait_for_user_pair(*m_sentinels, kUserTopologyTimeout);
        m_primary_ep = pair.primary;
        m_replica_ep = pair.replica;
        wait_replica_acks();
    }
    ~LabRedis() {
        m_sentinels.reset();  // first: no election while the servers stop
        resume_replica();     // a stopped process would never act on SIGTERM
    }
    // How long relab waits for the user's topology to be whole again (Sentinel relinking the
    // demoted primary after its resync).
    static constexpr std::chrono::milliseconds kUserTopologyTimeout{60000};
    bool user() const { return m_user; }
    // The user's primary where it was before the trial (`original`), once Sentinel has relinked the
    // one the lab demoted: the rest of the run uses it.
    void restore_user_primary(const RedisEndpoint& original) {
        resume_replica();
        fail_back(*m_sentinels, original, kUserTopologyTimeout);
    }
    // The primary dies at once, without a final save (SIGKILL); the user's is demoted by Sentinel's
    // forced failover instead, which promotes the detached replica as it stands.
    void kill_primary() {
        if (m_user) return force_failover(*m_sentinels, m_replica_ep, kUserTopologyTimeout);
        own_primary().crash();
    }
    LabRedis(const LabRedis&) = delete;
    LabRedis& operator=(const LabRedis&) = delete;

    const RedisEndpoint& primary() const { return m_primary_ep; }
    // The cache's own instance ("servers": {"cache": {...}}).
    RedisEndpoint cache() const {
        if (!m_cache) throw std::logic_error("this lab has no cache instance");
        return m_cache->endpoint();
    }
    // The sentinels clients ask for the primary; null when the lab has no replica.
    const SentinelSet* sentinels() const { return m_sentinels.get(); }
    SentinelSet* sentinel_set_or_null() { return m_sentinels.get(); }
    SentinelSet& sentinel_set() {
        if (!m_sentinels) throw std::logic_error("this lab has no sentinels");
        return *m_sentinels;
    }
    EmbeddedRedis& own_primary() {
        if (m_user) throw std::logic_error("the failover lab on the user's Sentinel only detaches the replica and fails the primary over");
        if (!m_primary) throw std::logic_error("this lab runs on the run's Redis, not its own");
        return *m_primary;
    }
    EmbeddedRedis& replica() {
        if (!m_replica) throw std::logic_error("this lab has no replica");
        return *m_replica;
    }
    void pause_replica() {
        if (m_user)
            m_detached = std::make_unique<DetachedReplica>(m_replica_ep, m_primary_ep);
        else
            ::kill(replica().pid(), SIGSTOP);
        m_paused = true;
    }
    void resume_replica() noexcept {
        m_detached.reset();
        if (m_paused && m_replica) ::kill(m_replica->pid(), SIGCONT);
        m_paused = false;
    }
    // Sentinel promoted the replica at `promoted` (its +switch-master): it is the primary from now on.
    void replica_promoted(const RedisEndpoint& promoted) {
        if (m_user) {
            if (promoted.host != m_replica_ep.host || promoted.port != m_replica_ep.port)
                throw HarnessError(fmt::format("Sentinel promoted {}, which is not the replica ({})", promoted.display(),
                                               m_replica_ep.display()));
            m_primary_ep = promoted;
            return;
        }
        if (!m_replica || promoted.port != m_replica->endpoint().port)
            throw HarnessError(fmt::format("Sentinel promoted {}, which is not the lab's replica ({})",
                                           promoted.display(), m_replica ? m_replica->endpoint().display() : "none"));
        m_dead_primary = std::move(m_primary);
        m_primary = std::move(m_replica);
        m_primary_ep = m_primary->endpoint();
    }
    // The dead primary starts again (empty: it had no persistence of its own here) as a master
    // with no replica; Sentinel sees it and makes it a replica of the new primary (+convert-to-slave).
    // Returns once its first sync with the new primary is done.
    bool has_old_primary() const { return m_dead_primary != nullptr; }
    void rejoin_old_primary() {
        if (!m_dead_primary) throw std::logic_error("no old primary to rejoin");
        m_dead_primary->restart();
        const RedisEndpoint old = m_dead_primary->endpoint();
        // Sentinel's reconfiguration ends with CLIENT KILL TYPE normal: a broken connection here
        // only means "connect again".
        std::unique_ptr<RedisClient> c;
        std::string last;
        const bool linked = wait_until(
            [&] {
                try {
                    if (!c) c = std::make_unique<RedisClient>(old, std::chrono::milliseconds(1000));
                    const auto info = info_section(*c, "replication");
                    last = fmt::format("role {}, master_port {}, master_link_status {}", field(info, "role"),
                                       field(info, "master_port"), field(info, "master_link_status"));
                    return field(info, "role") == "slave" && field(info, "master_port") == std::to_string(m_primary_ep.port) &&
                           field(info, "master_link_status") == "up";
                } catch (const RedisError& e) {
                    c.reset();
                    last = e.what();
                    return false;
                }
            },
            std::chrono::milliseconds(20000), std::chrono::milliseconds(10));
        if (!linked)
            throw EnvironmentError(fmt::format("Sentinel did not make the old primary {} a linked replica of {} within "
                                               "20 s (last: {}):{}",
                                               old.display(), m_primary_ep.display(), last, m_sentinels->log_tail()));
        m_replica = std::move(m_dead_primary);
        wait_replica_acks();
    }

    // A replica can be linked and still slow to acknowledge for a moment after its sync; the lab
    // starts (or goes on) once a write is acknowledged by it, so WAIT measures the fault, not that.
    void wait_replica_acks() {
        RedisClient primary(m_primary_ep);
        const bool acked = wait_until(
            [&] {
                primary.call({"SET", m_check_key, "1"});
                return primary.call({"WAIT", "1", "200"}).integer >= 1;
            },
            std::chrono::milliseconds(15000), std::chrono::milliseconds(10));
        primary.call({"DEL", m_check_key});
        if (!acked) throw EnvironmentError("the replica did not acknowledge a write within 15 s");
    }

private:
    RedisEndpoint m_primary_ep;
    std::unique_ptr<EmbeddedRedis> m_primary;
    std::unique_ptr<EmbeddedRedis> m_replica;
    std::unique_ptr<EmbeddedRedis> m_dead_primary;
    std::unique_ptr<EmbeddedRedis> m_cache;
    std::unique_ptr<SentinelSet> m_sentinels;
    bool m_paused = false;
    // The user's servers (redis+sentinel://): endpoints only, faulted through their commands.
    bool m_user = false;
    std::string m_check_key = "relab:replication-check";
    RedisEndpoint m_replica_ep;
    std::unique_ptr<DetachedReplica> m_detached;
};

}  // namespace relab
