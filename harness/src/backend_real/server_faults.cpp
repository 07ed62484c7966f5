#include "backend_real/server_faults.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "clients/cluster_slot.h"
#include "engine/timeouts.h"
#include "fault/fault_spec.h"
#include "servers/lab_redis.h"
#include "servers/redis_cluster.h"
#include "servers/sentinel.h"
#include "servers/servers.h"

namespace relab {

namespace {

using SteadyClock = std::chrono::steady_clock;

Nanos steady_nanos() { return std::chrono::duration_cast<Nanos>(SteadyClock::now().time_since_epoch()); }

}  // namespace

void primitive_not_for(const char* primitive, const Target& t) {
    throw std::logic_error(fmt::format("the {} primitive does not act on {}", primitive, target_name(t)));
}

LabRedis& ServerFaults::server() {
    if (!m_env.own) throw std::logic_error("this lab has no redis-server of its own to fault");
    return *m_env.own;
}

EmbeddedPostgres& ServerFaults::postgres() {
    if (!m_env.own_pg) throw std::logic_error("this lab has no PostgreSQL of its own to fault");
    return *m_env.own_pg;
}

int ServerFaults::shard_slot(int shard) const {
    return key_slot(m_env.prefix + shard_stream_key(m_env.s.flow().shard, shard));
}

bool ServerFaults::finished(const Target& t) {
    switch (t.kind) {
        case FaultTarget::redis: return m_redis_down;
        case FaultTarget::postgres: return !postgres().running();
        case FaultTarget::redis_cluster_master: return m_killed_masters.count(t.shard) > 0;
        case FaultTarget::role:
        case FaultTarget::redis_cluster_replica:
        case FaultTarget::redis_replica:
        case FaultTarget::redis_cache:
        case FaultTarget::clients: return false;
    }
    return false;
}

void ServerFaults::kill(const Target& t) {
    switch (t.kind) {
        case FaultTarget::postgres: return postgres().crash();  // the postmaster and every backend, as `docker kill`
        case FaultTarget::redis:
            server().kill_primary();  // SIGKILL, as `docker kill` (the user's: SENTINEL FAILOVER): no final save
            m_connections.reconnect();
            m_redis_down = true;
            m_redis_paused = false;
            return;
        case FaultTarget::redis_cluster_master: {
            if (!m_env.cluster_servers) primitive_not_for("kill", t);
            const int slot = shard_slot(t.shard);
            m_killed_masters[t.shard] = m_env.cluster_servers->crash_master_of(slot);
            return;
        }
        case FaultTarget::role:
        case FaultTarget::redis_replica:
        case FaultTarget::redis_cluster_replica:
        case FaultTarget::redis_cache:
        case FaultTarget::clients: break;
    }
    primitive_not_for("kill", t);
}

void ServerFaults::stop_or_continue(const Target& t, bool stop) {
    switch (t.kind) {
        case FaultTarget::postgres: return stop ? postgres().pause() : postgres().resume();
        case FaultTarget::redis:
            ::kill(server().own_primary().pid(), stop ? SIGSTOP : SIGCONT);
            m_redis_paused = stop;
            return;
        case FaultTarget::redis_replica:
            if (stop)
                server().pause_replica();
            else
                server().resume_replica();
            m_replica_paused = stop;
            return;
        case FaultTarget::redis_cluster_replica: {
            if (!m_env.cluster_servers) break;
            if (stop)
                m_env.cluster_servers->pause_replica_of(shard_slot(t.shard));
            else
                m_env.cluster_servers->resume_replica_of(shard_slot(t.shard));
            return;
        }
        case FaultTarget::role:
        case FaultTarget::redis_cluster_master:
        case FaultTarget::redis_cache:
        case FaultTarget::clients: break;
    }
    primitive_not_for(stop ? "pause" : "resume", t);
}

bool ServerFaults::paused(const Target& t) {
    switch (t.kind) {
        case FaultTarget::redis: return m_redis_paused;
        case FaultTarget::redis_replica: return m_replica_paused;
        case FaultTarget::postgres: return postgres().paused();
        case FaultTarget::redis_cluster_replica:
            return m_env.cluster_servers && m_env.cluster_servers->replica_paused(shard_slot(t.shard));
        case FaultTarget::role:
        case FaultTarget::redis_cluster_master:
        case FaultTarget::redis_cache:
        case FaultTarget::clients: return false;
    }
    return false;
}

void ServerFaults::start(const Target& t) {
    switch (t.kind) {
        case FaultTarget::postgres:
            // Same port and data directory: crash recovery replays the WAL; returns once it accepts
            // connections again.
            return postgres().restart();
        case FaultTarget::redis_replica:
            if (!server().has_old_primary())
                throw std::runtime_error("no old primary to bring back: restart \"redis-replica\" after a failover");
            server().rejoin_old_primary();
            m_connections.reconnect();  // Sentinel's reconfiguration ends with CLIENT KILL TYPE normal
            return;
        case FaultTarget::redis: return restart_primary();
        case FaultTarget::role:
        case FaultTarget::redis_cluster_master:
        case FaultTarget::redis_cluster_replica:
        case FaultTarget::redis_cache:
        case FaultTarget::clients: break;
    }
    primitive_not_for("start", t);
}

void ServerFaults::restart_primary() {
    server().own_primary().restart();
    m_connections.reconnect();
    const auto deadline = SteadyClock::now() + timeouts::kServerRestart;
    while (info_section(m_connections.admin(), "persistence")["loading"] != "0") {
        if (SteadyClock::now() > deadline)
            throw std::runtime_error(fmt::format("redis-server still loading its data {} ms after the restart",
                                                 timeouts::kServerRestart.count()));
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    m_redis_down = false;
}

int64_t ServerFaults::drop_replica_links(const Target& t) {
    if (t.kind == FaultTarget::redis_replica)
        return m_connections.admin().call({"CLIENT", "KILL", "TYPE", "replica"}).integer;
    if (t.kind != FaultTarget::redis_cluster_replica || !m_env.cluster_servers) primitive_not_for("drop_links", t);
    return m_env.cluster_servers->drop_replica_links_of(shard_slot(t.shard));
}

// Sentinel's election: the three sentinels notice the dead primary, agree (quorum 2), elect a
// leader, which promotes the replica and publishes +switch-master; done once every sentinel names
// the new primary, so that a client asking one that lags is not sent to the dead one.
nlohmann::json ServerFaults::promote(Nanos killed_at) {
    LabRedis& lab = server();
    SentinelSet& sentinels = lab.sentinel_set();
    const RedisEndpoint old = lab.primary();
    const SteadyClock::time_point since{std::chrono::duration_cast<SteadyClock::duration>(killed_at)};
    const MasterSwitch sw = sentinels.wait_for_switch_master(old, timeouts::kFailover, since);
    lab.replica_promoted(sw.primary);
    sentinels.wait_until_all_name(sw.primary, timeouts::kFailover);
    m_redis_down = false;
    const std::string role = m_connections.admin().call({"ROLE"}).elements.at(0).str;
    if (role != "master")
        throw std::runtime_error(fmt::format("Sentinel switched to {}, which answers ROLE {}", sw.primary.display(), role));
    const SentinelOptions& so = sentinels.options();
    nlohmann::json out = {{"election", lab.user() ? "sentinel failover" : "sentinel"},
                {"sentinels", so.sentinels},
                {"quorum", so.quorum},
                {"down_after_ms", so.down_after.count()},
                {"old_primary", old.display()},
                {"new_primary", sw.primary.display()},
                {"switch_ms", std::lround(sw.ms)},
                {"seen_by", sw.method + " on sentinel " + sw.sentinel}};
    if (lab.user()) {
        out["primary_fault"] = "demoted by your sentinels (SENTINEL FAILOVER, the replica still detached)";
        out["text"] = fmt::format("your sentinels promoted {}: +switch-master {:.0f} ms after SENTINEL FAILOVER ({} on {})",
                                  sw.primary.display(), sw.ms, sw.method, sw.sentinel);
        return out;
    }
    out["text"] = fmt::format("Sentinel's election ({} sentinels, quorum {}, down-after-milliseconds {}) promoted {}: "
                              "+switch-master {:.0f} ms after the kill ({} on {})",
                              so.sentinels, so.quorum, so.down_after.count(), sw.primary.display(), sw.ms, sw.method,
                              sw.sentinel);
    return out;
}

// The cluster's own failover: the killed master's replica sees it unreachable for
// cluster-node-timeout, the masters flag it FAIL, the replica wins their vote and takes its slots.
nlohmann::json ServerFaults::shard_promote(const Target& master, Nanos killed_at) {
    const auto killed = m_killed_masters.find(master.shard);
    if (!m_env.cluster_servers || killed == m_killed_masters.end())
        throw std::logic_error("shard_promote: no master of this shard was killed");
    const int64_t timeout_ms = m_env.s.flow().shard.cluster.node_timeout_ms * 10 + timeouts::kFailover.count();
    const int slot = shard_slot(master.shard);
    std::optional<RedisEndpoint> promoted;
    const bool done = wait_until(
        [&] {
            promoted = m_env.cluster_servers->serving_master(slot);
            return promoted && promoted->port != killed->second.port;
        },
        std::chrono::milliseconds(timeout_ms), std::chrono::milliseconds(5));
    const int64_t switch_ms = (steady_nanos() - killed_at) / std::chrono::milliseconds(1);
    if (!done)
        throw std::runtime_error(fmt::format("the cluster did not promote a replica of {} (shard {}, slot {}) within "
                                             "{} ms of the kill",
                                             killed->second.display(), master.shard, slot, timeout_ms));
    m_connections.drop_cluster();  // its map names the dead master; the next use reads the new one
    const int64_t node_timeout = m_env.s.flow().shard.cluster.node_timeout_ms;
    return {{"election", "cluster"},
            {"node_timeout_ms", node_timeout},
            {"slot", slot},
            {"old_master", killed->second.display()},
            {"new_master", promoted->display()},
            {"switch_ms", switch_ms},
            {"text", fmt::format("the cluster's own failover (cluster-node-timeout {} ms) promoted its replica {} to "
                                 "master of slot {} {} ms after the kill",
                                 node_timeout, promoted->display(), slot, switch_ms)}};
}

void ServerFaults::fail_on_unscheduled_failover() {
    SentinelSet* sentinels = m_env.own ? m_env.own->sentinel_set_or_null() : nullptr;
    if (!sentinels) return;
    const auto all = sentinels->switches();
    const size_t scheduled = static_cast<size_t>(std::count_if(
        m_env.s.faults.begin(), m_env.s.faults.end(), [](const FaultSpec& f) { return f.action == FaultAction::failover; }));
    if (all.size() <= scheduled) return;
    std::string list;
    for (const auto& w : all) list += " '" + w + "'";
    throw HarnessError(fmt::format("Sentinel failed over {} time(s), the lab scheduled {}:{} — a primary did not answer "
                                   "for down-after-milliseconds ({} ms), the machine may be overloaded:{}",
                                   all.size(), scheduled, list, sentinels->options().down_after.count(),
                                   sentinels->log_tail()));
}

}  // namespace relab
