#include "backend_real/real_control.h"

#include <cstring>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "backend_real/program_observer.h"
#include "backend_real/program_roles.h"
#include "history/file_history.h"
#include "process/program_role.h"
#include "clients/cluster_client.h"
#include "process/child_process.h"
#include "util/interrupt.h"
#include "servers/lab_redis.h"
#include "process/proc_stat.h"
#include "servers/sentinel.h"
#include "servers/servers.h"
#include "roles/idem_client.h"
#include "engine/timeouts.h"
#include "util/numbers.h"

namespace relab {

namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

const std::string kRedis = "redis";
const std::string kReplica = "redis-replica";
const std::string kPostgres = "postgres";

// XINFO GROUPS reply entry (a flat field/value array) -> value of one field.
const RedisReply* field_of(const RedisReply& flat, const std::string& name) {
    for (size_t i = 0; i + 1 < flat.elements.size(); i += 2)
        if (flat.elements[i].str == name) return &flat.elements[i + 1];
    return nullptr;
}

std::string mb(int64_t bytes) { return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6); }

}  // namespace

struct RealControl::Role {
    RoleLaunch launch;
    RoleConfig config;
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
        if (!env.spawner || env.own_pg || roles.empty()) return;
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
    std::unique_ptr<ClusterClient> cluster_client;
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
        // Each incarnation its own stderr file, so a restart keeps the first one's last words.
        r.stderr_path = r.incarnation == 1 ? fmt::format("{}/{}.err", env.dir, r.launch.actor)
                                           : fmt::format("{}/{}.{}.err", env.dir, r.launch.actor, r.incarnation);
        if (const ExecSpec* e = program_of(r)) {
            const std::string trace = fmt::format("{}/{}.trace", env.dir, r.launch.actor);
            if (r.launch.role == "consumer" && env.s.kind == LabKind::stream)
                observer->install_write_log(r.config.pg, r.config.schema);
            if (e->trace) observer->watch_trace(r.launch.actor, trace);
            r.process = start_program_role(env.s, r.config, *e, env.dir, r.stderr_path, trace);
            return;
        }
        r.process = spawn_role_process(env.spawner, env.relab_exe, r.config, env.dir, r.stderr_path);
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
        wait_for_readers(client(), env.s, env.prefix, [this](const std::string& a) { return why_not_reading(a); });
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
            m->admin.reset();  // a server fault of the lab: the next look connects again
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

bool RealControl::finished(const std::string& actor) {
    if (actor == kRedis) return m->redis_down;
    if (actor == kPostgres) return !m->postgres().running();
    if (actor == kReplica) return false;
    Role& r = m->role(actor);
    return r.killed || !r.process->running();
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

void RealControl::kill(const std::string& actor) {
    if (actor == kPostgres) {
        m->postgres().crash();  // the postmaster and every backend: SIGKILL, as `docker kill`
        return;
    }
    if (actor == kRedis) {
        m->server().own_primary().crash();  // SIGKILL, as `docker kill`: no final save
        m->admin.reset();
        m->redis_down = true;
        m->redis_paused = false;
        return;
    }
    Role& r = m->role(actor);
    r.process->signal(SIGKILL);
    if (!r.process->wait_for(timeouts::kSignalTakesEffect))
        throw std::runtime_error(fmt::format("{} (pid {}) did not die within {} ms of SIGKILL", actor, r.process->pid(),
                                             timeouts::kSignalTakesEffect.count()));
    r.killed = true;
    r.paused = false;
}

void RealControl::pause(const std::string& actor) {
    if (actor == kPostgres) return m->postgres().pause();
    if (actor == kRedis) {
        ::kill(m->server().own_primary().pid(), SIGSTOP);
        m->redis_paused = true;
        return;
    }
    if (actor == kReplica) {
        m->server().pause_replica();
        m->replica_paused = true;
        return;
    }
    Role& r = m->role(actor);
    r.process->signal(SIGSTOP);
    r.paused = true;
    m->wait_for_state(r, 'T', "SIGSTOP");
}

void RealControl::resume(const std::string& actor) {
    if (actor == kPostgres) return m->postgres().resume();
    if (actor == kRedis) {
        ::kill(m->server().own_primary().pid(), SIGCONT);
        m->redis_paused = false;
        return;
    }
    if (actor == kReplica) {
        m->server().resume_replica();
        m->replica_paused = false;
        return;
    }
    Role& r = m->role(actor);
    r.process->signal(SIGCONT);
    r.paused = false;
}

bool RealControl::paused(const std::string& actor) {
    if (actor == kReplica) return m->replica_paused;
    if (actor == kPostgres) return m->postgres().paused();
    return actor == kRedis ? m->redis_paused : m->role(actor).paused;
}

void RealControl::start(const std::string& actor) {
    if (actor == kPostgres) {
        // Same port and data directory: crash recovery replays the WAL; returns once it accepts
        // connections again.
        m->postgres().restart();
        return;
    }
    if (actor == kReplica) {
        if (!m->server().has_old_primary())
            throw std::runtime_error("no old primary to bring back: restart \"redis-replica\" after a failover");
        m->server().rejoin_old_primary();
        m->admin.reset();  // Sentinel's reconfiguration ends with CLIENT KILL TYPE normal
        return;
    }
    if (actor == kRedis) {
        m->server().own_primary().restart();  // same port, data directory and settings: it loads what it kept
        m->admin.reset();
        const auto deadline = SteadyClock::now() + timeouts::kServerRestart;
        while (info_section(m->client(), "persistence")["loading"] != "0") {
            if (SteadyClock::now() > deadline)
                throw std::runtime_error(fmt::format("redis-server still loading its data {} ms after the restart",
                                                     timeouts::kServerRestart.count()));
            std::this_thread::sleep_for(milliseconds(10));
        }
        m->redis_down = false;
        return;
    }
    Role& r = m->role(actor);
    if (!finished(actor)) throw std::logic_error(actor + " is still running");
    ++r.incarnation;
    r.killed = false;
    m->spawn(r);
    r.process->started();
}

// Sentinel's failover: the primary is killed, the (paused) replica resumed, and the three
// sentinels notice, agree (quorum 2), elect a leader, which promotes the replica and publishes
// +switch-master; the fault is done once every sentinel names the new primary.
nlohmann::json RealControl::failover(const std::string&) {
    LabRedis& lab = m->server();
    SentinelSet& sentinels = lab.sentinel_set();
    const RedisEndpoint old = lab.primary();
    const bool stream = m->env.s.kind == LabKind::stream;
    const std::string before = stream ? m->last_delivered() : "";
    const auto t0 = SteadyClock::now();
    lab.own_primary().crash();
    m->admin.reset();
    m->redis_down = true;
    lab.resume_replica();  // stale as it is: it cannot reach the dead primary any more
    m->replica_paused = false;
    const MasterSwitch sw = sentinels.wait_for_switch_master(old, timeouts::kFailover, t0);
    lab.replica_promoted(sw.primary);
    // Every sentinel names it before the fault is done: a client asking one that lags must not
    // be sent to the dead primary.
    sentinels.wait_until_all_name(sw.primary, timeouts::kFailover);
    m->redis_down = false;
    const std::string role = m->client().call({"ROLE"}).elements.at(0).str;
    if (role != "master")
        throw std::runtime_error(fmt::format("Sentinel switched to {}, which answers ROLE {}", sw.primary.display(), role));
    const double ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
    const SentinelOptions& so = sentinels.options();
    std::string text = fmt::format("primary {} killed (SIGKILL), replica resumed; Sentinel's election ({} sentinels, "
                                   "quorum {}, down-after-milliseconds {}) promoted {}: +switch-master {:.0f} ms after "
                                   "the kill ({} on {})",
                                   old.display(), so.sentinels, so.quorum, so.down_after.count(), sw.primary.display(),
                                   sw.ms, sw.method, sw.sentinel);
    if (stream) text += fmt::format("; the group's last-delivered-id {} before, {} after", before, m->last_delivered());
    return {{"election", "sentinel"},
            {"sentinels", so.sentinels},
            {"quorum", so.quorum},
            {"down_after_ms", so.down_after.count()},
            {"new_primary", sw.primary.display()},
            {"switch_ms", std::lround(sw.ms)},
            {"done_ms", std::lround(ms)},
            {"seen_by", sw.method + " on sentinel " + sw.sentinel},
            {"text", text}};
}

nlohmann::json RealControl::drop_link(const std::string& target) {
    if (target == kReplica) {
        const int64_t dropped = m->client().call({"CLIENT", "KILL", "TYPE", "replica"}).integer;
        return {{"dropped", dropped},
                {"text", fmt::format("the primary dropped {} replication link(s) (CLIENT KILL TYPE replica): it now "
                                     "acknowledges writes no replica has",
                                     dropped)}};
    }
    // The roles' connections are named "<trial prefix><actor>" (RedisLink); the harness's own are
    // not, so they stay.
    const bool every_role = target == "clients";
    if (!every_role) m->role(target);  // a role of this trial
    RedisClient& a = m->client();
    std::istringstream lines(a.call({"CLIENT", "LIST"}).str);
    int64_t closed = 0;
    for (std::string line; std::getline(lines, line);) {
        const auto name_at = line.find(" name=");
        if (line.rfind("id=", 0) != 0 || name_at == std::string::npos) continue;
        const std::string name = line.substr(name_at + 6, line.find(' ', name_at + 6) - name_at - 6);
        // A role's tasks (S3's workers, "<actor>.w1", ...) are part of its process: theirs close too.
        const bool its_own = name == m->env.prefix + target || name.rfind(m->env.prefix + target + ".", 0) == 0;
        if (every_role ? name.rfind(m->env.prefix, 0) != 0 : !its_own) continue;
        closed += a.call({"CLIENT", "KILL", "ID", line.substr(3, line.find(' ') - 3)}).integer;
    }
    return {{"dropped", closed},
            {"text", fmt::format("closed {} Redis connection(s) of {} (CLIENT KILL ID)", closed,
                                 every_role ? std::string("the trial's roles") : target)}};
}

nlohmann::json RealControl::flood(const std::string& target, int64_t bytes, int64_t value_bytes, int64_t db) {
    // The cache's own instance, or another database of the same instance: a connection of its own,
    // so the control's stays where it is.
    const bool cache_instance = target == "redis-cache";
    std::optional<RedisClient> other;
    if (cache_instance || (db >= 0 && db != m->primary().db)) {
        RedisEndpoint ep = cache_instance ? m->server().cache() : m->primary();
        if (db >= 0) ep.db = static_cast<int>(db);
        other.emplace(ep);
    }
    RedisClient& a = other ? *other : m->client();
    const int64_t evicted_before = info_int(a, "stats", "evicted_keys");
    const int64_t n = std::max<int64_t>(1, bytes / value_bytes);
    const std::string value(static_cast<size_t>(value_bytes), 'c');
    int64_t oom = 0;
    std::string first_error;
    constexpr int64_t batch = 200;
    for (int64_t i = 0; i < n; i += batch) {
        throw_if_interrupted();
        std::vector<std::vector<std::string>> cmds;
        for (int64_t k = i; k < std::min(n, i + batch); ++k)
            cmds.push_back({"SET", fmt::format("{}cache:view:{}", m->env.prefix, k), value, "EX", "3600"});
        const std::vector<RedisReply> replies = a.pipeline(cmds);
        for (size_t k = 0; k < replies.size(); ++k) {
            const RedisReply& r = replies[k];
            if (!r.is_error()) continue;
            // The flood counts the server refusing writes for memory; any other error is not the
            // lab's to count.
            if (!is_oom_error(r))
                throw HarnessError(fmt::format("fault flood: {} got an error reply that is not an OOM refusal: {}",
                                               abbreviate_command(cmds[k]), r.str));
            ++oom;
            if (first_error.empty()) first_error = r.str;
        }
    }
    const int64_t evicted = info_int(a, "stats", "evicted_keys") - evicted_before;
    const auto memory = info_section(a, "memory");
    const std::string policy = field(memory, "maxmemory_policy");
    const int64_t flood_db = db >= 0 ? db : 0;
    return {{"target", target},
            {"evicted_keys", evicted},
            {"oom_errors", oom},
            {"policy", policy},
            {"db", flood_db},
            {"text", fmt::format("flood: {} cache keys × {} B = {}{} (maxmemory {}, {}) → evicted_keys +{}, OOM errors {}{}",
                                 with_thousands(n), value_bytes, mb(n * value_bytes),
                                 cache_instance ? std::string(" into the cache's own instance")
                                 : other        ? fmt::format(" into DB {}", db)
                                                : std::string{},
                                 mb(int_field(memory, "maxmemory")), policy, with_thousands(evicted),
                                 with_thousands(oom), first_error.empty() ? "" : " (" + first_error + ")")}};
}

nlohmann::json RealControl::snapshot(const std::string&) {
    RedisClient& a = m->client();
    // rdb_saves counts finished snapshots (rdb_last_save_time only has whole seconds).
    const int64_t before = info_int(a, "persistence", "rdb_saves");
    a.call({"BGSAVE"});
    const bool saved = wait_until(
        [&] {
            const auto persistence = info_section(a, "persistence");
            return int_field(persistence, "rdb_bgsave_in_progress") == 0 && int_field(persistence, "rdb_saves") > before;
        },
        milliseconds(10000), milliseconds(5));
    // A lab whose snapshot was not taken measures nothing it claims.
    if (!saved) throw HarnessError("fault snapshot: BGSAVE did not finish within 10 s");
    const int64_t keys = a.call({"DBSIZE"}).integer;
    return {{"keys", keys},
            {"text", fmt::format("BGSAVE: an RDB snapshot of {} keys (the one `save` would take on its schedule, "
                                 "taken now)",
                                 keys)}};
}

nlohmann::json RealControl::describe(const std::string&) {
    RedisClient& a = m->client();
    return {{"keys", a.call({"DBSIZE"}).integer},
            {"persistence", info_field(a, "persistence", "aof_enabled") == "1" ? "appendonly yes" : "appendonly no"}};
}

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
