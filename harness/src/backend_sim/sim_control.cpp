#include "backend_sim/sim_control.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "fault/fault_spec.h"
#include "roles/idem_client.h"

namespace relab::sim_backend_detail {

namespace {

// How long the simulated redis-server takes to come back after a restart fault: about what a real
// one on loopback takes in 08i-restart-*.
constexpr Millis kRedisRestart{20};
constexpr Millis kFailoverTime{1'600};
// How long the simulated PostgreSQL takes to come back after a restart fault: the kill, then
// crash recovery until it accepts connections, about what a real one on loopback takes in
// 08j-outbox-pg-restart (checkpointed before the trial, recovery_init_sync_method syncfs).
constexpr Millis kPostgresRestart{200};

}  // namespace

void SimControl::wait(Phase phase, std::optional<Nanos> until) {
    sim::Scheduler& sched = m_trial.world.scheduler();
    if (until) {
        sched.sleep_until(std::max(*until, now()));
        return;
    }
    if (phase == Phase::draining) {
        // A group that never drains changes nothing: the watchdog wakes the supervisor so
        // that it can end the trial once nothing moves (Control::wait's promise).
        const uint64_t wait = ++m_trial.quiet_wait;
        sched.at_last(now() + Millis{m_s.flow().stream.quiet_ms}, &SimTrial::quiet_watchdog, &m_trial, wait);
        m_trial.world.wait_stream_change();
        ++m_trial.quiet_wait;
        return;
    }
    if (phase == Phase::clients) {
        for (size_t i = 0; i < m_roles.size(); ++i)
            if (!m_roles.finished(i)) {
                sched.join(m_roles.fiber(i));
                return;
            }
        return;
    }
    for (size_t i = 0; i < m_roles.size(); ++i) {
        const bool consuming = m_roles.launch(i).role == "consumer" || m_roles.launch(i).role == "reaper";
        if (consuming == (phase == Phase::stopping) && !m_roles.finished(i)) {
            sched.join(m_roles.fiber(i));
            return;
        }
    }
}

bool SimControl::finished(const Target& t) {
    switch (t.kind) {
        case FaultTarget::role: return m_roles.finished(m_roles.index(t.actor));
        case FaultTarget::redis: return !m_trial.world.redis().up();
        case FaultTarget::postgres: return !m_trial.world.postgres().up();
        case FaultTarget::redis_cluster_master:  // sim_skip_reason: no cluster model
        case FaultTarget::redis_cluster_replica:
        case FaultTarget::redis_replica:
        case FaultTarget::redis_cache:
        case FaultTarget::clients: return false;
    }
    return false;
}

void SimControl::kill(const Target& t) {
    switch (t.kind) {
        case FaultTarget::redis: return m_trial.world.kill_redis();
        case FaultTarget::postgres: return m_trial.world.postgres().kill();
        case FaultTarget::role: return m_roles.kill(m_roles.index(t.actor));
        case FaultTarget::redis_cluster_master:
        case FaultTarget::redis_cluster_replica:
        case FaultTarget::redis_replica:
        case FaultTarget::redis_cache:
        case FaultTarget::clients: break;
    }
    not_modelled("kill", t);
}

// sim_skip_reason: the primary and PostgreSQL models are never paused.
void SimControl::pause(const Target& t) {
    if (t.kind == FaultTarget::redis_replica) return m_trial.world.redis().pause_replica();
    if (!t.is_role()) not_modelled("pause", t);
    m_roles.pause(m_roles.index(t.actor));
}

void SimControl::resume(const Target& t) {
    if (t.kind == FaultTarget::redis_replica) return m_trial.world.redis().resume_replica();
    if (!t.is_role()) not_modelled("resume", t);
    m_roles.resume(m_roles.index(t.actor));
}

bool SimControl::paused(const Target& t) {
    if (t.kind == FaultTarget::redis_replica) return m_trial.world.redis().replica_paused();
    if (!t.is_role()) return false;
    return m_roles.paused(m_roles.index(t.actor));
}

void SimControl::start(const Target& t) {
    switch (t.kind) {
        case FaultTarget::postgres:
            // As a real restart: down for its crash recovery, then up with every committed row.
            m_trial.world.scheduler().sleep_for(kPostgresRestart);
            return m_trial.world.postgres().start();
        case FaultTarget::redis: {
            // As a real restart (about 20 ms on loopback): down, then up with what it kept.
            m_trial.world.scheduler().sleep_for(kRedisRestart);
            return m_trial.world.redis().start(appendonly());
        }
        case FaultTarget::role: return m_roles.start(m_roles.index(t.actor));
        case FaultTarget::redis_cluster_master:
        case FaultTarget::redis_cluster_replica:
        case FaultTarget::redis_replica:  // sim_skip_reason keeps a rejoin on the real backend
        case FaultTarget::redis_cache:
        case FaultTarget::clients: break;
    }
    not_modelled("start", t);
}

int64_t SimControl::drop_links(const Target& t) {
    // The link comes back at once unless the replica is paused, whose state is frozen then.
    if (t.kind == FaultTarget::redis_replica) return 1;
    if (t.kind != FaultTarget::clients && !t.is_role()) not_modelled("drop_links", t);
    int64_t closed = 0;
    for (size_t i = 0; i < m_roles.size(); ++i) {
        if (t.is_role() && m_roles.launch(i).actor != t.actor) continue;
        if (m_roles.finished(i)) continue;
        closed += m_roles.drop_links(i);
    }
    return closed;
}

nlohmann::json SimControl::set_link(const Target& t, LinkServer server, const LinkMode& mode) {
    if (!t.is_role()) not_modelled("set_link", t);
    const int64_t released = m_roles.set_link(m_roles.index(t.actor), server, mode);
    return {{"released", released}, {"unit", "calls"}};
}

// Sentinel's election as it goes on loopback: down-after 500 ms, the vote, the promotion seen
// (kFailoverTime is within what real labs show).
nlohmann::json SimControl::promote(Nanos killed_at) {
    m_trial.world.scheduler().sleep_until(std::max(killed_at + kFailoverTime, now()));
    m_trial.world.redis().promote_replica();
    return {{"switch_ms", kFailoverTime.count()},
            {"text", fmt::format("the replica promoted after {} ms", kFailoverTime.count())}};
}

// sim_skip_reason keeps a shard_failover lab on the real backend: no cluster model.
nlohmann::json SimControl::shard_promote(const Target& master, Nanos) { not_modelled("shard_promote", master); }

// sim_skip_reason keeps labs that send a server commands (flood, snapshot) away from the
// simulator: its server models answer the roles' ports only.
std::vector<nlohmann::json> SimControl::commands(const Target& server, int64_t, const std::vector<Command>&) {
    not_modelled("commands", server);
}

Control::ServerState SimControl::describe(const Target&) {
    ServerState out;
    out.keys = m_trial.world.redis().up() ? m_trial.world.kv().size(now()) : 0;
    out.appendonly = appendonly();
    if (has_stream(m_s.kind)) out.last_delivered = last_delivered();
    return out;
}

bool SimControl::clients_ready() {
    for (size_t i = 0; i < m_roles.size(); ++i)
        if (!m_trial.world.kv().exists(kIdemReadyKey + m_roles.launch(i).actor, now())) return false;
    return true;
}

void SimControl::go(Nanos origin) {
    m_trial.world.kv().set(kIdemGoKey, std::to_string(origin.count()), sim::SetOptions{}, now());
}

std::vector<std::string> SimControl::present(const std::vector<std::string>& keys) {
    std::vector<std::string> out;
    for (const auto& k : keys)
        if (m_trial.world.kv().exists(k, now())) out.push_back(k);
    return out;
}

int64_t SimControl::pttl_ms(const std::string& key) { return m_trial.world.kv().pttl(key, now()); }

void SimControl::raise_flag(const std::string& name) {
    m_trial.world.kv().set(kIdemFaultDoneKey + name, "1", sim::SetOptions{}, now());
}

nlohmann::json SimControl::group_state() {
    if (m_s.flow().shard.enabled) throw std::logic_error("group_state: a sharded lab has a group per shard");
    auto& streams = m_trial.world.streams();
    const std::string& key = m_s.flow().stream.key;
    const bool group = streams.last_delivered(key, m_s.flow().stream.group).has_value();
    return {{"pending", streams.pending(key, m_s.flow().stream.group).size()},
            {"undelivered", streams.undelivered(key, m_s.flow().stream.group)},
            {"group", group || !streams.exists(key)}};
}

std::optional<std::vector<std::string>> SimControl::pel_ids() {
    if (m_s.flow().shard.enabled) return std::nullopt;
    std::vector<std::string> ids;
    for (const auto& p : m_trial.world.streams().pending(m_s.flow().stream.key, m_s.flow().stream.group)) ids.push_back(p.id);
    return ids;
}

void SimControl::raise_stop() { m_trial.world.kv().set(kStopKey, "1", sim::SetOptions{}, now()); }

void SimControl::poll_records(std::vector<HistoryRecord>& out) {
    const auto& all = m_trial.history.records();
    for (; m_seen < all.size(); ++m_seen)  // the supervisor's own records it has already
        if (all[m_seen].actor != "nemesis" && all[m_seen].actor != "relab") out.push_back(all[m_seen]);
}

void SimControl::not_modelled(const char* primitive, const Target& t) {
    throw std::logic_error(fmt::format("the simulator does not model the {} primitive on {}", primitive, target_name(t)));
}

bool SimControl::appendonly() const {
    const auto aof = m_s.servers.redis_config.find("appendonly");
    return aof != m_s.servers.redis_config.end() && aof->second == "yes";
}

std::string SimControl::last_delivered() {
    if (!m_trial.world.redis().up()) return "(down)";
    return m_trial.world.streams().last_delivered(m_s.flow().stream.key, m_s.flow().stream.group).value_or("(no group)");
}

}  // namespace relab::sim_backend_detail
