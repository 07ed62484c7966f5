#include "backend_real/real_control.h"

#include <chrono>
#include <thread>

#include "backend_real/idem_keys.h"
#include "backend_real/lab_connections.h"
#include "backend_real/redis_replies.h"
#include "backend_real/role_history_files.h"
#include "backend_real/role_link_proxies.h"
#include "backend_real/role_processes.h"
#include "backend_real/server_faults.h"
#include "backend_real/trial_group.h"
#include "servers/lab_redis.h"
#include "util/interrupt.h"

namespace relab {

namespace {

using ControlClock = std::chrono::steady_clock;

}  // namespace

// The parts, each on its own concept; declared so that the roles' processes stop before their
// link proxies close.
struct RealControl::Impl {
    Env env;
    RedisNamespace ns;
    RoleLinkProxies links;
    LabConnections connections;
    RoleProcesses roles;
    RoleHistoryFiles histories;
    std::vector<HistoryRecord> own_records;  // the supervisor's
    bool stop_raised = false;
    ServerFaults servers;
    TrialGroup group;
    IdemKeys idem;

    explicit Impl(Env e)
        : env(std::move(e)),
          ns{env.prefix},
          links(env.s),
          connections(env),
          roles(env, links, connections),
          servers(env, connections),
          group(env, connections),
          idem(env, connections) {}
};

RealControl::RealControl(Env env) : m(std::make_unique<Impl>(std::move(env))) {}
RealControl::~RealControl() = default;

void RealControl::add(const RoleLaunch& launch, RoleConfig config) {
    m->histories.add(config.history_path);
    m->roles.add(launch, std::move(config));
}

void RealControl::open_roles_ahead() { m->roles.open_ahead(); }

void RealControl::roles_started() { m->roles.started(m->own_records); }

RedisClient& RealControl::admin() { return m->connections.admin(); }

ClusterClient& RealControl::cluster() { return m->connections.cluster(); }

Nanos RealControl::now() { return std::chrono::duration_cast<Nanos>(ControlClock::now().time_since_epoch()); }

void RealControl::wait(Phase phase, std::optional<Nanos> until) {
    throw_if_interrupted();
    m->idem.refresh_flags();
    if (ProgramObserver* observer = m->roles.observer(); observer && !m->servers.primary_out()) try {
            observer->poll_stream(m->connections.admin());
        } catch (const KvError&) {
            m->connections.reconnect();  // a server fault of the lab: the next look connects again
        }
    if (phase == Phase::draining) m->roles.draining();
    Nanos d = std::chrono::milliseconds(2);
    if (until) d = std::min(d, std::max(Nanos{0}, *until - now()));
    // Stopping: what is awaited is the roles' exits, which the spawner reports as they happen.
    if (phase == Phase::stopping && m->env.spawner)
        m->env.spawner->wait_for_news(std::chrono::duration_cast<std::chrono::milliseconds>(d));
    else
        std::this_thread::sleep_for(d);
}

bool RealControl::finished(const Target& t) {
    return t.is_role() ? m->roles.finished(t.actor) : m->servers.finished(t);
}

void RealControl::check_roles() { m->roles.check(m->stop_raised); }

void RealControl::kill(const Target& t) { t.is_role() ? m->roles.kill(t.actor) : m->servers.kill(t); }

void RealControl::pause(const Target& t) {
    t.is_role() ? m->roles.stop_or_continue(t.actor, true) : m->servers.stop_or_continue(t, true);
}

void RealControl::resume(const Target& t) {
    t.is_role() ? m->roles.stop_or_continue(t.actor, false) : m->servers.stop_or_continue(t, false);
}

bool RealControl::paused(const Target& t) { return t.is_role() ? m->roles.paused(t.actor) : m->servers.paused(t); }

void RealControl::start(const Target& t) { t.is_role() ? m->roles.restart(t.actor) : m->servers.start(t); }

nlohmann::json RealControl::set_link(const Target& t, LinkServer server, const LinkMode& mode) {
    return m->links.set(t, server, mode);
}

// The roles' connections are named "<trial prefix><actor>" (RedisLink); the harness's own are not,
// so they stay.
int64_t RealControl::drop_links(const Target& t) {
    if (t.kind != FaultTarget::clients && t.kind != FaultTarget::role) return m->servers.drop_replica_links(t);
    const bool every_role = t.kind == FaultTarget::clients;
    if (!every_role) m->roles.require(t.actor);  // a role of this trial
    RedisClient& a = m->connections.admin();
    int64_t closed = 0;
    const std::string own = m->env.prefix + t.actor;
    for (const auto& c : named_clients(a.call({"CLIENT", "LIST"}).str)) {
        // A role's tasks (S3's workers, "<actor>.w1", ...) are part of its process: theirs close too.
        const bool its_own = c.name == own || c.name.rfind(own + ".", 0) == 0;
        if (every_role ? c.name.rfind(m->env.prefix, 0) != 0 : !its_own) continue;
        closed += a.call({"CLIENT", "KILL", "ID", c.id}).integer;
    }
    return closed;
}

nlohmann::json RealControl::promote(Nanos killed_at) { return m->servers.promote(killed_at); }

nlohmann::json RealControl::shard_promote(const Target& master, Nanos killed_at) {
    return m->servers.shard_promote(master, killed_at);
}

std::vector<nlohmann::json> RealControl::commands(const Target& server, int64_t db, const std::vector<Command>& batch) {
    throw_if_interrupted();
    if (server.kind != FaultTarget::redis && server.kind != FaultTarget::redis_cache)
        primitive_not_for("commands", server);
    const bool cache = server.kind == FaultTarget::redis_cache;
    const std::vector<RedisReply> replies = m->connections.for_commands(cache, db).pipeline(batch);
    std::vector<nlohmann::json> out;
    out.reserve(replies.size());
    for (const auto& r : replies) out.push_back(reply_data(r));
    return out;
}

Control::ServerState RealControl::describe(const Target&) {
    RedisClient& a = m->connections.admin();
    ServerState out;
    out.keys = a.call({"DBSIZE"}).integer;
    out.appendonly = info_field(a, "persistence", "aof_enabled") == "1";
    if (has_stream(m->env.s.kind)) out.last_delivered = m->group.last_delivered();
    return out;
}

std::string RealControl::server_key(const std::string& logical) { return m->ns.key(logical); }

bool RealControl::drained() { return m->group.drained(m->servers.primary_out()); }

nlohmann::json RealControl::group_state() { return m->group.state(); }

std::optional<std::vector<std::string>> RealControl::pel_ids() { return m->group.pel_ids(m->servers.primary_out()); }

void RealControl::raise_stop() {
    m->stop_raised = true;
    m->group.raise_stop();
    m->roles.wake_for_trial_end();
    m->roles.open_ahead();
}

void RealControl::unblock_readers() { m->group.unblock_readers(); }

bool RealControl::clients_ready() { return m->idem.clients_ready(m->roles.actors()); }

void RealControl::go(Nanos origin) { m->idem.go(origin); }

std::vector<std::string> RealControl::present(const std::vector<std::string>& keys) { return m->idem.present(keys); }

int64_t RealControl::pttl_ms(const std::string& key) { return m->idem.pttl_ms(key); }

void RealControl::prepare_flags() { m->idem.prepare_flags(); }

void RealControl::raise_flag(const std::string& name) { m->idem.raise_flag(name); }

void RealControl::fail_on_unscheduled_failover() { m->servers.fail_on_unscheduled_failover(); }

// New complete lines of every role's history file since the last look, after what the servers
// showed of the programs.
void RealControl::poll_records(std::vector<HistoryRecord>& out) {
    if (ProgramObserver* observer = m->roles.observer()) observer->new_records(out);
    m->histories.poll(out);
}

void RealControl::record(HistoryRecord r) { m->own_records.push_back(std::move(r)); }

// The bytes of every role's history file and the supervisor's own records: a stat per role, no read.
int64_t RealControl::activity() { return static_cast<int64_t>(m->own_records.size()) + m->histories.bytes(); }

std::vector<HistoryRecord> RealControl::history() {
    std::vector<HistoryRecord> out = m->own_records;
    if (ProgramObserver* observer = m->roles.observer()) {
        for (auto& r : observer->records(m->connections.admin())) out.push_back(std::move(r));
        m->roles.program_outputs(out, ControlClock::now().time_since_epoch().count());
    }
    m->histories.read_all(out);
    return out;
}

}  // namespace relab
