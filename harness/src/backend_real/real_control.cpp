#include "backend_real/real_control.h"

#include <cstring>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "backend_real/program_observer.h"
#include "backend_real/program_roles.h"
#include "fault/fault_spec.h"
#include "history/file_history.h"
#include "process/program_role.h"
#include "clients/cluster_client.h"
#include "clients/cluster_slot.h"
#include "servers/redis_cluster.h"
#include "process/child_process.h"
#include "util/interrupt.h"
#include "servers/lab_redis.h"
#include "process/link_proxy.h"
#include "process/proc_stat.h"
#include "servers/sentinel.h"
#include "servers/servers.h"
#include "roles/idem_client.h"
#include "ports/seeded_rng.h"
#include "engine/timeouts.h"
#include "util/numbers.h"

namespace relab {

namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

// XINFO GROUPS reply entry (a flat field/value array) -> value of one field.
const RedisReply* field_of(const RedisReply& flat, const std::string& name) {
    for (size_t i = 0; i + 1 < flat.elements.size(); i += 2)
        if (flat.elements[i].str == name) return &flat.elements[i + 1];
    return nullptr;
}

// A reply as Control::commands gives it: data, an error reply included.
nlohmann::json reply_data(const RedisReply& r) {
    switch (r.type) {
        case RedisReply::Type::nil: return nullptr;
        case RedisReply::Type::status:
        case RedisReply::Type::string: return r.str;
        case RedisReply::Type::error: return {{"error", r.str}};
        case RedisReply::Type::integer: return r.integer;
        case RedisReply::Type::array: {
            nlohmann::json out = nlohmann::json::array();
            for (const auto& e : r.elements) out.push_back(reply_data(e));
            return out;
        }
    }
    return nullptr;
}

// A primitive asked of a target it does not act on: fault/faults.cpp's table lets no fault get here.
[[noreturn]] void not_for(const char* primitive, const Target& t) {
    throw std::logic_error(fmt::format("the {} primitive does not act on {}", primitive, target_name(t)));
}

}  // namespace

struct RealControl::Role {
    RoleLaunch launch;
    RoleConfig config;  // the servers as they are; its process gets them through_links at each spawn
    std::unique_ptr<RoleProcess> process{};
    std::string stderr_path{};
    int incarnation = 1;
    bool killed = false;
    bool paused = false;
    size_t read_offset = 0;
};

struct RealControl::Impl {
    Env env;
    RedisNamespace ns;
    // A lab whose faults act on links: each role's proxies to Redis and PostgreSQL, by actor,
    // kept across its restarts; declared before `roles`, so the processes stop before the proxies.
    struct RoleLinks {
        std::unique_ptr<LinkProxy> redis, pg;
    };
    std::map<std::string, RoleLinks> links;
    std::vector<Role> roles;
    bool asked_ahead = false;
    // The next trial's roles forked and connected while this one runs, as many as this trial has
    // (RoleSpawner::open_ahead): k_ahead_after into the drain, when the jobs run and the labs'
    // races are decided (a receipt, a lock taken, 08c-s4b's skew of up to 30 ms), or when the trial
    // ends, if sooner. Not as the drain starts: forks and PostgreSQL backends starting beside the
    // consumers as they take the lock moved 08c-s4a from 3/60 to 16/60 wrong. Not for a lab on
    // PostgreSQL of its own (each trial gets a new one). A shell also connects to the run's Redis,
    // which a lab with a Redis of its own does not use.
    static constexpr milliseconds k_ahead_after{100};
    std::optional<SteadyClock::time_point> draining_since;
    void open_roles_ahead() {
        if (asked_ahead) return;
        asked_ahead = true;
        // Roles forked ahead connect to the servers themselves, around the link proxies; nor on the
        // user's Sentinel, whose primary (the run's Redis) the lab shuts down.
        if (!env.spawner || env.own_pg || roles.empty() || !links.empty() || (env.own && env.own->user())) return;
        const std::string key = role_ahead_key(roles.front().config);
        int count = 0;
        for (const auto& r : roles) count += role_ahead_key(r.config) == key ? 1 : 0;
        env.spawner->open_ahead(key, count, &env.run_redis);
    }
    std::vector<HistoryRecord> own_records;
    // What the servers show of the roles that are the user's programs; null: none is.
    std::unique_ptr<ProgramObserver> observer;
    bool stop_raised = false;
    std::unique_ptr<RedisClient> admin;
    // A flood's connections to the cache's instance or another database, by (cache, db).
    std::map<std::pair<bool, int64_t>, std::unique_ptr<RedisClient>> others;
    std::unique_ptr<ClusterClient> cluster_client;
    std::map<int, RedisEndpoint> killed_masters;  // shard -> the master a shard_failover killed
    bool redis_down = false;
    bool redis_paused = false;
    bool replica_paused = false;
    std::vector<std::string> raised_flags;  // kept written while the trial runs
    int64_t flags_written_ns = 0;

    explicit Impl(Env e) : env(std::move(e)), ns{env.prefix} {
        std::set<std::string> programs;
        for (const auto& r : trial_roles(env.s))
            if (env.s.exec.of(r.role)) programs.insert(r.actor);
        if (!programs.empty()) observer = std::make_unique<ProgramObserver>(env.s, env.prefix, programs);
    }
    const ExecSpec* program_of(const Role& r) const { return env.s.exec.of(r.launch.role); }

    RedisEndpoint primary() const { return env.own ? env.own->primary() : env.run_redis; }
    RedisClient& client() {
        if (!admin) admin = std::make_unique<RedisClient>(primary());
        return *admin;
    }
    // The cluster slot of shard k's stream, which names its master (and that master's replica).
    int shard_slot(int shard) const { return key_slot(env.prefix + shard_stream_key(env.s.shard, shard)); }
    // SIGSTOP (`stop`) or SIGCONT: a pause of `t`, or its resume.
    void stop_or_continue(const Target& t, bool stop) {
        switch (t.kind) {
            case FaultTarget::postgres: return stop ? postgres().pause() : postgres().resume();
            case FaultTarget::redis:
                ::kill(server().own_primary().pid(), stop ? SIGSTOP : SIGCONT);
                redis_paused = stop;
                return;
            case FaultTarget::redis_replica:
                if (stop)
                    server().pause_replica();
                else
                    server().resume_replica();
                replica_paused = stop;
                return;
            case FaultTarget::role: {
                Role& r = role(t.actor);
                r.process->signal(stop ? SIGSTOP : SIGCONT);
                r.paused = stop;
                if (stop) wait_for_state(r, 'T', "SIGSTOP");
                return;
            }
            case FaultTarget::redis_cluster_replica: {
                if (!env.cluster_servers) break;
                if (stop)
                    env.cluster_servers->pause_replica_of(shard_slot(t.shard));
                else
                    env.cluster_servers->resume_replica_of(shard_slot(t.shard));
                return;
            }
            case FaultTarget::redis_cluster_master:
            case FaultTarget::redis_cache:
            case FaultTarget::clients: break;
        }
        not_for(stop ? "pause" : "resume", t);
    }
    // The primary changed or restarted: the harness's connections to it are gone.
    void reconnect() {
        admin.reset();
        others.clear();
    }
    // A connection for Control::commands: the control's own, or one of its own for the cache's
    // instance or another database, so that the control's stays where it is.
    RedisClient& server_client(const Target& server, int64_t db) {
        if (server.kind != FaultTarget::redis && server.kind != FaultTarget::redis_cache) not_for("commands", server);
        const bool cache = server.kind == FaultTarget::redis_cache;
        if (!cache && (db < 0 || db == primary().db)) return client();
        std::unique_ptr<RedisClient>& c = others[{cache, db}];
        if (!c) {
            RedisEndpoint ep = cache ? this->server().cache() : primary();
            if (db >= 0) ep.db = static_cast<int>(db);
            c = std::make_unique<RedisClient>(ep);
        }
        return *c;
    }
    // The primary started again on its port, data directory and settings: it loads what it kept.
    void restart_primary() {
        server().own_primary().restart();
        reconnect();
        const auto deadline = SteadyClock::now() + timeouts::kServerRestart;
        while (info_section(client(), "persistence")["loading"] != "0") {
            if (SteadyClock::now() > deadline)
                throw std::runtime_error(fmt::format("redis-server still loading its data {} ms after the restart",
                                                     timeouts::kServerRestart.count()));
            std::this_thread::sleep_for(milliseconds(10));
        }
        redis_down = false;
    }
    LabRedis& server() {
        if (!env.own) throw std::logic_error("this lab has no redis-server of its own to fault");
        return *env.own;
    }
    EmbeddedPostgres& postgres() {
        if (!env.own_pg) throw std::logic_error("this lab has no PostgreSQL of its own to fault");
        return *env.own_pg;
    }
    Role& role(const std::string& actor) {
        for (auto& r : roles)
            if (r.launch.actor == actor) return r;
        throw std::logic_error("no role " + actor + " in this trial");
    }
    void spawn(Role& r) {
        // Derived at every spawn, so a restart's new seed reaches the process; the proxies are the actor's own.
        const RoleConfig launched = through_links(r.config);
        // Each incarnation its own stderr file, so a restart keeps the first one's last words.
        r.stderr_path = r.incarnation == 1 ? fmt::format("{}/{}.err", env.dir, r.launch.actor)
                                           : fmt::format("{}/{}.{}.err", env.dir, r.launch.actor, r.incarnation);
        if (const ExecSpec* e = program_of(r)) {
            const std::string trace = fmt::format("{}/{}.trace", env.dir, r.launch.actor);
            if (r.launch.role == "consumer" && env.s.kind == LabKind::stream)
                observer->install_write_log(r.config.pg, r.config.schema);
            if (e->trace) observer->watch_trace(r.launch.actor, trace);
            r.process = start_program_role(env.s, launched, *e, env.dir, r.stderr_path, trace);
            return;
        }
        r.process = spawn_role_process(env.spawner, env.relab_exe, launched, env.dir, r.stderr_path);
    }
    // In a lab whose faults act on links, the config a role's process gets: a proxy of its own on
    // loopback in front of each server, which the link faults then hang, slow or heal.
    RoleConfig through_links(RoleConfig c) {
        if (!faults_act_on_links(env.s.faults)) return c;
        if (!c.redis_sentinels.empty() || !c.redis_cluster.empty())
            throw HarnessError(fmt::format("{}: a link fault needs the roles to reach Redis through relab's proxy; "
                                           "with Sentinel or a Redis Cluster they find the servers themselves",
                                           env.s.id));
        RoleLinks& l = links[c.actor];
        if (!l.redis) l.redis = std::make_unique<LinkProxy>(c.redis.host, c.redis.port);
        if (!l.pg) l.pg = std::make_unique<LinkProxy>(c.pg.host, c.pg.port);
        c.redis.host = c.pg.host = "127.0.0.1";
        c.redis.port = l.redis->port();
        c.pg.port = l.pg->port();
        return c;
    }
    // What is known of a consumer the start barrier did not see: it exited, and what it said.
    std::string why_not_reading(const std::string& actor) {
        Role& r = role(actor);
        if (r.process->running()) return "running, but not blocked in XREADGROUP on a connection of that name";
        return fmt::format("exited with status {}: {}", r.process->exit_code().value_or(-1), tail_of_file(r.stderr_path, 500));
    }
    // Programs' consumers must meet the start barrier; a program producer starts only then, as
    // relab's own producer publishes only then, and the trial's origin is that moment.
    void program_barrier() {
        if (!observer || env.s.kind != LabKind::stream) return;
        const bool program_producer = env.s.exec.of("producer") != nullptr;
        if (!env.s.exec.of("consumer") && !program_producer) return;
        // relab's own producer waits for the readers itself and publishes at once: once it did, the
        // consumers are busy with jobs and no longer all blocked, and the barrier is behind us.
        const std::string stream = env.prefix + env.s.stream.key;
        const auto published = [&] {
            // A program that exited before it read: said now, not at the barrier's timeout.
            for (auto& r : roles)
                if (r.process && program_of(r) && !r.process->running())
                    throw std::runtime_error(fmt::format(
                        "{} of {} (the program `{}`) exited with status {} before it read the group{}", r.launch.actor,
                        env.s.id, program_text(program_of(r)->argv), r.process->exit_code().value_or(-1),
                        tail_of_file(r.stderr_path, 500).empty() ? "" : ": " + tail_of_file(r.stderr_path, 500)));
            return !program_producer && client().call({"XLEN", stream}).integer > 0;
        };
        wait_for_readers(client(), env.s, env.prefix, [this](const std::string& a) { return why_not_reading(a); },
                         published);
        if (!program_producer) return;
        for (auto& r : roles) {
            if (r.process) continue;
            own_records.push_back(HistoryRecord{0, SteadyClock::now().time_since_epoch().count(), "relab", Op::start});
            spawn(r);
            r.process->started();
        }
    }
    // /proc/PID/stat's state letter, once the signal has taken effect.
    void wait_for_state(Role& r, char state, const char* signal) {
        const auto deadline = SteadyClock::now() + timeouts::kSignalTakesEffect;
        for (;;) {
            const auto s = proc_stat(r.process->pid());
            if (s && s->state == state) return;
            if (SteadyClock::now() > deadline)
                throw std::runtime_error(fmt::format("{} (pid {}) not stopped {} ms after {}", r.launch.actor,
                                                     r.process->pid(), timeouts::kSignalTakesEffect.count(), signal));
            std::this_thread::sleep_for(milliseconds(1));
        }
    }
    // XINFO GROUPS' last-delivered-id of the lab's group, or why it cannot be read.
    std::string last_delivered() {
        try {
            RedisClient c(primary(), milliseconds(1000));
            const auto groups = c.call({"XINFO", "GROUPS", ns.key(env.s.stream.key)});
            for (const auto& g : groups.elements) {
                const auto* name = field_of(g, "name");
                const auto* delivered = field_of(g, "last-delivered-id");
                if (name && delivered && name->str == env.s.stream.group) return delivered->str;
            }
            return "(no group)";
        } catch (const KvError& e) {
            return std::string("(unreadable: ") + e.what() + ")";
        }
    }
    ClusterClient& cluster() {
        if (env.cluster.empty()) throw std::logic_error("this lab has no Redis Cluster");
        if (!cluster_client)
            cluster_client =
                std::make_unique<ClusterClient>(env.cluster, ClusterClientOptions::following(ns, env.prefix));
        return *cluster_client;
    }
    // Every entry now in the stream delivered and acknowledged. A stream that is gone (a server
    // restarted without persistence, nothing added since) has nothing left to deliver; a group
    // that is gone may yet be created again by the consumers, so it is not drained.
    bool group_drained() {
        const Scenario& s = env.s;
        if (!env.cluster.empty()) {
            ClusterStream streams(cluster());
            for (const auto& key : lab_stream_keys(s.stream, s.shard))
                if (!streams.group_drained(key, s.stream.group)) return false;
            return true;
        }
        RedisClient& a = client();
        if (a.call({"EXISTS", ns.key(s.stream.key)}).integer == 0) return true;
        const auto last = a.call({"XREVRANGE", ns.key(s.stream.key), "+", "-", "COUNT", "1"});
        const auto groups = a.call({"XINFO", "GROUPS", ns.key(s.stream.key)});
        for (const auto& g : groups.elements) {
            const auto* name = field_of(g, "name");
            if (!name || name->str != s.stream.group) continue;
            const auto* pending = field_of(g, "pending");
            const auto* delivered = field_of(g, "last-delivered-id");
            if (!pending || pending->integer != 0) return false;
            return last.elements.empty() || (delivered && delivered->str == last.elements[0].elements[0].str);
        }
        return false;
    }
    // Under maxmemory with allkeys-lru the flags are keys like any other: the clients' writes can
    // evict one (the LRU clock ticks once a second, so a fresh flag ties with a flood's keys).
    // Written again every 20 ms; a failed write (the server restarting, OOM) means "next time".
    void refresh_flags() {
        if (raised_flags.empty()) return;
        const int64_t now = SteadyClock::now().time_since_epoch().count();
        if (now - flags_written_ns < 20'000'000) return;
        flags_written_ns = now;
        for (const auto& name : raised_flags) {
            try {
                (void)client().command({"SET", ns.key(kIdemFaultDoneKey + name), "1"});
            } catch (const std::exception&) {
                admin.reset();
            }
        }
    }
};

RealControl::RealControl(Env env) : m(std::make_unique<Impl>(std::move(env))) {}
RealControl::~RealControl() = default;

void RealControl::add(const RoleLaunch& launch, RoleConfig config) {
    m->roles.push_back(Role{launch, std::move(config)});
    // A program producer waits for the start barrier (program_barrier).
    if (launch.role == "producer" && m->env.s.exec.of("producer")) return;
    m->spawn(m->roles.back());
}

void RealControl::open_roles_ahead() { m->open_roles_ahead(); }

void RealControl::roles_started() {
    for (auto& r : m->roles)
        if (r.process) r.process->started();
    m->program_barrier();
}

RedisClient& RealControl::admin() { return m->client(); }

ClusterClient& RealControl::cluster() { return m->cluster(); }

Nanos RealControl::now() { return std::chrono::duration_cast<Nanos>(SteadyClock::now().time_since_epoch()); }

void RealControl::wait(Phase phase, std::optional<Nanos> until) {
    throw_if_interrupted();
    m->refresh_flags();
    if (m->observer && !m->redis_down && !m->redis_paused) try {
            m->observer->poll_stream(m->client());
        } catch (const KvError&) {
            m->reconnect();  // a server fault of the lab: the next look connects again
        }
    if (phase == Phase::draining) {
        if (!m->draining_since) m->draining_since = SteadyClock::now();
        if (SteadyClock::now() - *m->draining_since >= Impl::k_ahead_after) m->open_roles_ahead();
    }
    Nanos d = milliseconds(2);
    if (until) d = std::min(d, std::max(Nanos{0}, *until - now()));
    // Stopping: what is awaited is the roles' exits, which the spawner reports as they happen.
    if (phase == Phase::stopping && m->env.spawner)
        m->env.spawner->wait_for_news(std::chrono::duration_cast<milliseconds>(d));
    else
        std::this_thread::sleep_for(d);
}

bool RealControl::finished(const Target& t) {
    switch (t.kind) {
        case FaultTarget::role: {
            Role& r = m->role(t.actor);
            return r.killed || !r.process->running();
        }
        case FaultTarget::redis: return m->redis_down;
        case FaultTarget::postgres: return !m->postgres().running();
        case FaultTarget::redis_cluster_master: return m->killed_masters.count(t.shard) > 0;
        case FaultTarget::redis_cluster_replica:
        case FaultTarget::redis_replica:
        case FaultTarget::redis_cache:
        case FaultTarget::clients: return false;
    }
    return false;
}

void RealControl::check_roles() {
    for (auto& r : m->roles) {
        if (r.killed || r.process->running()) continue;
        const auto code = r.process->exit_code();
        if (!code || *code == 0) continue;
        // Not a fault the lab scheduled: the trial has no outcome, and the run none for this lab.
        const std::string how = *code > 128 && *code < 160
                                    ? fmt::format("was killed by signal {} ({}) from outside relab", *code - 128,
                                                  ::strsignal(*code - 128))
                                    : fmt::format("exited with status {}", *code);
        const std::string tail = tail_of_file(r.stderr_path);
        const ExecSpec* e = m->program_of(r);
        // The runner names the lab and trial and makes it a HarnessError.
        throw std::runtime_error(fmt::format("role {}{} {}, which no fault of the lab did{}{}", r.launch.actor,
                                             e ? " (the program `" + program_text(e->argv) + "`)" : "", how,
                                             tail.empty() ? "" : ": ", tail));
    }
    for (auto& r : m->roles) {
        const ExecSpec* e = m->program_of(r);
        if (!e || r.killed || m->stop_raised || r.launch.role != "consumer" || r.process->running()) continue;
        throw std::runtime_error(fmt::format(
            "consumer {} (the program `{}`) exited with status 0 before the trial's end: a consumer reads until "
            "$RELAB_STOP_KEY is set and its read comes back empty (docs/your-code.md){}",
            r.launch.actor, program_text(e->argv), tail_of_file(r.stderr_path, 500).empty() ? "" : ": " + tail_of_file(r.stderr_path, 500)));
    }
}

void RealControl::kill(const Target& t) {
    switch (t.kind) {
        case FaultTarget::postgres: return m->postgres().crash();  // the postmaster and every backend, as `docker kill`
        case FaultTarget::redis:
            m->server().kill_primary();  // SIGKILL, as `docker kill` (the user's: SENTINEL FAILOVER): no final save
            m->reconnect();
            m->redis_down = true;
            m->redis_paused = false;
            return;
        case FaultTarget::role: {
            Role& r = m->role(t.actor);
            r.process->signal(SIGKILL);
            if (!r.process->wait_for(timeouts::kSignalTakesEffect))
                throw std::runtime_error(fmt::format("{} (pid {}) did not die within {} ms of SIGKILL", t.actor,
                                                     r.process->pid(), timeouts::kSignalTakesEffect.count()));
            r.killed = true;
            r.paused = false;
            return;
        }
        case FaultTarget::redis_cluster_master: {
            if (!m->env.cluster_servers) not_for("kill", t);
            const int slot = m->shard_slot(t.shard);
            m->killed_masters[t.shard] = m->env.cluster_servers->crash_master_of(slot);
            return;
        }
        case FaultTarget::redis_replica:
        case FaultTarget::redis_cluster_replica:
        case FaultTarget::redis_cache:
        case FaultTarget::clients: break;
    }
    not_for("kill", t);
}

void RealControl::pause(const Target& t) { m->stop_or_continue(t, true); }

nlohmann::json RealControl::set_link(const Target& t, LinkServer server, const LinkMode& mode) {
    const auto it = m->links.find(t.actor);
    if (!t.is_role() || it == m->links.end())
        throw std::logic_error(fmt::format("no link proxy for {}: its lab's faults act on no link", target_name(t)));
    LinkProxy& proxy = server == LinkServer::redis ? *it->second.redis : *it->second.pg;
    return {{"released", proxy.set(mode)}, {"unit", "bytes"}};
}

void RealControl::resume(const Target& t) { m->stop_or_continue(t, false); }

bool RealControl::paused(const Target& t) {
    switch (t.kind) {
        case FaultTarget::role: return m->role(t.actor).paused;
        case FaultTarget::redis: return m->redis_paused;
        case FaultTarget::redis_replica: return m->replica_paused;
        case FaultTarget::postgres: return m->postgres().paused();
        case FaultTarget::redis_cluster_replica:
            return m->env.cluster_servers && m->env.cluster_servers->replica_paused(m->shard_slot(t.shard));
        case FaultTarget::redis_cluster_master:
        case FaultTarget::redis_cache:
        case FaultTarget::clients: return false;
    }
    return false;
}

void RealControl::start(const Target& t) {
    switch (t.kind) {
        case FaultTarget::postgres:
            // Same port and data directory: crash recovery replays the WAL; returns once it accepts
            // connections again.
            return m->postgres().restart();
        case FaultTarget::redis_replica:
            if (!m->server().has_old_primary())
                throw std::runtime_error("no old primary to bring back: restart \"redis-replica\" after a failover");
            m->server().rejoin_old_primary();
            m->reconnect();  // Sentinel's reconfiguration ends with CLIENT KILL TYPE normal
            return;
        case FaultTarget::redis: return m->restart_primary();
        case FaultTarget::role: {
            Role& r = m->role(t.actor);
            if (!finished(t)) throw std::logic_error(t.actor + " is still running");
            ++r.incarnation;
            // A new process draws its own randomness, as the simulator's restarted fiber does.
            r.config.seed = derive_seed(r.config.seed, fmt::format("restart:{}:{}", t.actor, r.incarnation));
            r.killed = false;
            m->spawn(r);
            r.process->started();
            return;
        }
        case FaultTarget::redis_cluster_master:
        case FaultTarget::redis_cluster_replica:
        case FaultTarget::redis_cache:
        case FaultTarget::clients: break;
    }
    not_for("start", t);
}

// The roles' connections are named "<trial prefix><actor>" (RedisLink); the harness's own are not,
// so they stay.
int64_t RealControl::drop_links(const Target& t) {
    if (t.kind == FaultTarget::redis_replica) return m->client().call({"CLIENT", "KILL", "TYPE", "replica"}).integer;
    if (t.kind == FaultTarget::redis_cluster_replica) {
        if (!m->env.cluster_servers) not_for("drop_links", t);
        return m->env.cluster_servers->drop_replica_links_of(m->shard_slot(t.shard));
    }
    if (t.kind != FaultTarget::clients && t.kind != FaultTarget::role) not_for("drop_links", t);
    const bool every_role = t.kind == FaultTarget::clients;
    if (!every_role) m->role(t.actor);  // a role of this trial
    RedisClient& a = m->client();
    std::istringstream lines(a.call({"CLIENT", "LIST"}).str);
    int64_t closed = 0;
    const std::string own = m->env.prefix + t.actor;
    for (std::string line; std::getline(lines, line);) {
        const auto name_at = line.find(" name=");
        if (line.rfind("id=", 0) != 0 || name_at == std::string::npos) continue;
        const std::string name = line.substr(name_at + 6, line.find(' ', name_at + 6) - name_at - 6);
        // A role's tasks (S3's workers, "<actor>.w1", ...) are part of its process: theirs close too.
        const bool its_own = name == own || name.rfind(own + ".", 0) == 0;
        if (every_role ? name.rfind(m->env.prefix, 0) != 0 : !its_own) continue;
        closed += a.call({"CLIENT", "KILL", "ID", line.substr(3, line.find(' ') - 3)}).integer;
    }
    return closed;
}

// Sentinel's election: the three sentinels notice the dead primary, agree (quorum 2), elect a
// leader, which promotes the replica and publishes +switch-master; done once every sentinel names
// the new primary, so that a client asking one that lags is not sent to the dead one.
nlohmann::json RealControl::promote(Nanos killed_at) {
    LabRedis& lab = m->server();
    SentinelSet& sentinels = lab.sentinel_set();
    const RedisEndpoint old = lab.primary();
    const SteadyClock::time_point since{std::chrono::duration_cast<SteadyClock::duration>(killed_at)};
    const MasterSwitch sw = sentinels.wait_for_switch_master(old, timeouts::kFailover, since);
    lab.replica_promoted(sw.primary);
    sentinels.wait_until_all_name(sw.primary, timeouts::kFailover);
    m->redis_down = false;
    const std::string role = m->client().call({"ROLE"}).elements.at(0).str;
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
nlohmann::json RealControl::shard_promote(const Target& master, Nanos killed_at) {
    const auto killed = m->killed_masters.find(master.shard);
    if (!m->env.cluster_servers || killed == m->killed_masters.end())
        throw std::logic_error("shard_promote: no master of this shard was killed");
    const int64_t timeout_ms = m->env.s.shard.cluster.node_timeout_ms * 10 + timeouts::kFailover.count();
    const int slot = m->shard_slot(master.shard);
    std::optional<RedisEndpoint> promoted;
    const bool done = wait_until(
        [&] {
            promoted = m->env.cluster_servers->serving_master(slot);
            return promoted && promoted->port != killed->second.port;
        },
        std::chrono::milliseconds(timeout_ms), std::chrono::milliseconds(5));
    const int64_t switch_ms = (now() - killed_at) / std::chrono::milliseconds(1);
    if (!done)
        throw std::runtime_error(fmt::format("the cluster did not promote a replica of {} (shard {}, slot {}) within "
                                             "{} ms of the kill",
                                             killed->second.display(), master.shard, slot, timeout_ms));
    m->cluster_client.reset();  // its map names the dead master; the next use reads the new one
    const int64_t node_timeout = m->env.s.shard.cluster.node_timeout_ms;
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

std::vector<nlohmann::json> RealControl::commands(const Target& server, int64_t db, const std::vector<Command>& batch) {
    throw_if_interrupted();
    const std::vector<RedisReply> replies = m->server_client(server, db).pipeline(batch);
    std::vector<nlohmann::json> out;
    out.reserve(replies.size());
    for (const auto& r : replies) out.push_back(reply_data(r));
    return out;
}

Control::ServerState RealControl::describe(const Target&) {
    RedisClient& a = m->client();
    ServerState out;
    out.keys = a.call({"DBSIZE"}).integer;
    out.appendonly = info_field(a, "persistence", "aof_enabled") == "1";
    if (m->env.s.kind == LabKind::stream) out.last_delivered = m->last_delivered();
    return out;
}

std::string RealControl::server_key(const std::string& logical) { return m->ns.key(logical); }

bool RealControl::drained() {
    if (m->redis_down || m->redis_paused) return false;
    try {
        return m->group_drained();
    } catch (const KvError& e) {
        // Only a lab that takes its server down may find it unreachable; elsewhere it is the
        // harness's failure.
        if (!redis_faults_scheduled(m->env.s) || e.kind() == KvError::Kind::unexpected) throw;
        m->admin.reset();
        return false;
    }
}

nlohmann::json RealControl::group_state() {
    if (!m->env.cluster.empty()) throw std::logic_error("group_state: a sharded lab has a group per shard");
    const Scenario& s = m->env.s;
    RedisClient& a = m->client();
    const std::string key = m->ns.key(s.stream.key);
    if (a.call({"EXISTS", key}).integer == 0) return {{"pending", 0}, {"undelivered", 0}, {"group", false}};
    std::string from = "-";  // the first entry the group has not been given
    int64_t pending = 0;
    bool group = false;
    for (const auto& g : a.call({"XINFO", "GROUPS", key}).elements) {
        const auto* name = field_of(g, "name");
        if (!name || name->str != s.stream.group) continue;
        group = true;
        if (const auto* p = field_of(g, "pending")) pending = p->integer;
        if (const auto* d = field_of(g, "last-delivered-id"); d && d->str != "0-0") from = "(" + d->str;
    }
    // Counted by pages of XRANGE: XINFO's lag is not kept after every kind of change to a stream.
    int64_t undelivered = 0;
    for (;;) {
        const auto page = a.call({"XRANGE", key, from, "+", "COUNT", "10000"});
        undelivered += static_cast<int64_t>(page.elements.size());
        if (page.elements.size() < 10000) break;
        from = "(" + page.elements.back().elements.at(0).str;
    }
    return {{"pending", pending}, {"undelivered", undelivered}, {"group", group}};
}

std::optional<std::vector<std::string>> RealControl::pel_ids() {
    if (!m->env.cluster.empty() || m->redis_down || m->redis_paused) return std::nullopt;
    const Scenario& s = m->env.s;
    try {
        RedisClient& a = m->client();
        const std::string key = m->ns.key(s.stream.key);
        if (a.call({"EXISTS", key}).integer == 0) return std::vector<std::string>{};
        std::vector<std::string> ids;
        // XPENDING's extended form, a page at a time: each element is [id, consumer, idle, deliveries].
        std::string from = "-";
        for (;;) {
            const auto page = a.call({"XPENDING", key, s.stream.group, from, "+", "10000"});
            for (const auto& e : page.elements) ids.push_back(e.elements.at(0).str);
            if (page.elements.size() < 10000) break;
            from = "(" + ids.back();
        }
        return ids;
    } catch (const KvError& e) {
        // The group gone (NOGROUP's reply) or the server unreachable in a lab that takes it down:
        // the history's account stands alone. A reply relab cannot read is its own bug.
        if (e.kind() == KvError::Kind::unexpected) throw;
        m->admin.reset();
        return std::nullopt;
    }
}

void RealControl::raise_stop() {
    m->stop_raised = true;
    const std::string key = m->ns.key(kStopKey);
    if (!m->env.cluster.empty())
        m->cluster().call(key, {"SET", key, "1"});
    else
        m->client().call({"SET", key, "1"});
    // A role asleep (a reaper between rounds) sees the key now rather than when it wakes.
    for (auto& r : m->roles)
        if (!r.killed && !r.paused && r.process->running()) r.process->wake_for_trial_end();
    m->open_roles_ahead();
}

void RealControl::unblock_readers() {
    if (!m->env.cluster.empty()) {
        for (ClusterClient::Node* n : m->cluster().nodes()) unblock_named(*n->client, m->env.prefix);
        return;
    }
    unblock_named(m->client(), m->env.prefix);
}

void RealControl::unblock_named(RedisClient& a, const std::string& prefix) {
    const auto list = a.call({"CLIENT", "LIST"});
    std::istringstream lines(list.str);
    std::string line;
    while (std::getline(lines, line)) {
        const auto name_at = line.find(" name=" + prefix);
        const auto id_at = line.find("id=");
        if (name_at == std::string::npos || id_at != 0) continue;
        const std::string id = line.substr(3, line.find(' ') - 3);
        a.command({"CLIENT", "UNBLOCK", id});
    }
}

bool RealControl::clients_ready() {
    std::vector<std::string> keys;
    for (const auto& r : m->roles) keys.push_back(kIdemReadyKey + r.launch.actor);
    return present(keys).size() == keys.size();
}

void RealControl::go(Nanos origin) { m->client().call({"SET", m->ns.key(kIdemGoKey), std::to_string(origin.count())}); }

// One EXISTS each, in one pipeline. An error reply throws (exists_reply): it never counts as absent.
std::vector<std::string> RealControl::present(const std::vector<std::string>& keys) {
    std::vector<std::vector<std::string>> commands;
    for (const auto& k : keys) commands.push_back({"EXISTS", m->ns.key(k)});
    const std::vector<RedisReply> replies = m->client().pipeline(commands);
    std::vector<std::string> out;
    for (size_t i = 0; i < keys.size(); ++i)
        if (exists_reply(replies[i], commands[i])) out.push_back(keys[i]);
    return out;
}

int64_t RealControl::pttl_ms(const std::string& key) { return m->client().call({"PTTL", m->ns.key(key)}).integer; }

void RealControl::prepare_flags() {
    for (const auto& f : m->env.s.faults)
        if (!f.name.empty()) m->client().call({"SET", m->ns.key(kIdemFaultDoneKey + f.name + ":ready"), "1"});
}

// Under maxmemory-policy noeviction a SET is refused with OOM once a flood has filled the server,
// but RENAME (not a "denyoom" command) is not: the flag written ahead is renamed into place.
void RealControl::raise_flag(const std::string& name) {
    const std::string key = m->ns.key(kIdemFaultDoneKey + name);
    const RedisReply r = m->client().command({"SET", key, "1"});
    if (is_oom_error(r)) {
        const RedisReply renamed = m->client().command({"RENAME", key + ":ready", key});
        if (renamed.is_error())
            throw HarnessError(fmt::format("the server refused the fault flag {} (OOM) and the flag prepared before "
                                           "the lab was gone: {}",
                                           key, renamed.str));
    } else if (r.is_error()) {
        throw HarnessError(fmt::format("SET {}: {}", key, r.str));
    }
    if (std::find(m->raised_flags.begin(), m->raised_flags.end(), name) == m->raised_flags.end())
        m->raised_flags.push_back(name);
}

void RealControl::fail_on_unscheduled_failover() {
    SentinelSet* sentinels = m->env.own ? m->env.own->sentinel_set_or_null() : nullptr;
    if (!sentinels) return;
    const auto all = sentinels->switches();
    const size_t scheduled = static_cast<size_t>(std::count_if(
        m->env.s.faults.begin(), m->env.s.faults.end(), [](const FaultSpec& f) { return f.action == FaultAction::failover; }));
    if (all.size() <= scheduled) return;
    std::string list;
    for (const auto& w : all) list += " '" + w + "'";
    throw HarnessError(fmt::format("Sentinel failed over {} time(s), the lab scheduled {}:{} — a primary did not answer "
                                   "for down-after-milliseconds ({} ms), the machine may be overloaded:{}",
                                   all.size(), scheduled, list, sentinels->options().down_after.count(),
                                   sentinels->log_tail()));
}

// New complete lines of every role's history file since the last look.
void RealControl::poll_records(std::vector<HistoryRecord>& out) {
    if (m->observer) m->observer->new_records(out);
    for (auto& r : m->roles) {
        std::ifstream in(r.config.history_path, std::ios::binary);
        if (!in) continue;
        in.seekg(static_cast<std::streamoff>(r.read_offset));
        std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const size_t end = chunk.rfind('\n');
        if (end == std::string::npos) continue;
        r.read_offset += end + 1;
        std::istringstream lines(chunk.substr(0, end + 1));
        for (std::string line; std::getline(lines, line);) {
            auto j = nlohmann::json::parse(line, nullptr, false);
            if (!j.is_discarded()) out.push_back(history_record_from_json(j));
        }
    }
}

void RealControl::record(HistoryRecord r) { m->own_records.push_back(std::move(r)); }

// The bytes of every role's history file and the supervisor's own records: a stat per role, no read.
int64_t RealControl::activity() {
    int64_t total = static_cast<int64_t>(m->own_records.size());
    for (const auto& r : m->roles) {
        std::error_code ec;
        const auto size = std::filesystem::file_size(r.config.history_path, ec);
        if (!ec) total += static_cast<int64_t>(size);
    }
    return total;
}

std::vector<HistoryRecord> RealControl::history() {
    std::vector<HistoryRecord> out = m->own_records;
    if (m->observer) {
        for (auto& r : m->observer->records(m->client())) out.push_back(std::move(r));
        const int64_t end = SteadyClock::now().time_since_epoch().count();
        for (const auto& r : m->roles)
            if (m->program_of(r))
                for (auto& o : program_output_records(r.launch.actor, m->env.dir + "/" + r.launch.actor + ".out",
                                                      r.stderr_path, end))
                    out.push_back(std::move(o));
    }
    for (auto& r : m->roles) {
        // Moved, not copied: a soak's consumer writes half a million records, and a copy of them
        // doubled relab's peak memory while the trial was read.
        auto part = read_history_file(r.config.history_path);
        if (out.empty()) {
            out = std::move(part);
            continue;
        }
        out.insert(out.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    }
    return out;
}

}  // namespace relab
