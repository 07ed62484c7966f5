#include "backend_real/real_backend.h"

#include <algorithm>
#include <csignal>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "history/file_history.h"
#include "ports/seeded_rng.h"
#include "process/child_process.h"
#include "clients/cluster_client.h"
#include "servers/redis_cluster.h"
#include "util/interrupt.h"
#include "servers/lab_redis.h"
#include "clients/pg_client.h"
#include "process/reaper.h"
#include "clients/redis_client.h"
#include "process/temp_dir.h"
#include "roles/roles.h"
#include "servers/cluster_prefetch.h"
#include "servers/prefetch.h"
#include "families/idem_cluster.h"
#include "families/probe.h"
#include "families/skip_reasons.h"
#include "report/shard_facts.h"
#include "engine/family.h"
#include "engine/trial_loop.h"
#include "clients/order_table.h"
#include "backend_real/program_roles.h"
#include "backend_real/real_control.h"
#include "backend_real/shard_cluster.h"
#include "process/pg_schema_guard.h"
#include "process/role_process.h"
#include "engine/supervisor.h"
#include "engine/timeouts.h"

namespace relab {

namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;


}  // namespace

// What a lab starts for each of its trials with its own redis-server, if anything: a stream or
// idempotency-client lab with "servers": {"own": true}.
std::optional<LabServers> own_redis_of(const Scenario& s) {
    if (kind_row(s.kind).runs_roles && s.servers.own) return s.servers;
    return std::nullopt;
}

// The settings of the PostgreSQL a stream lab starts for each of its trials, if it does.
std::optional<std::map<std::string, std::string>> own_pg_of(const Scenario& s) {
    if (has_stream(s.kind) && s.servers.postgres) return s.servers.postgres_config;
    return std::nullopt;
}

namespace {

// The TrialStore port on the trial's PostgreSQL schema and Redis namespace (or the lab's cluster).
class RealTrialStore : public TrialStore {
public:
    // `pg` gives the session of the trial's database: the run's, or one on the lab's own server
    // (opened again after a fault restarted it).
    // `redis` gives the lab's primary now (another one after a failover).
    RealTrialStore(std::function<PgSession&()> pg, bool own_pg, RealControl& control,
                   std::function<RedisEndpoint()> redis, std::string prefix, bool cluster)
        : m_pg(std::move(pg)), m_own_pg(own_pg), m_control(control), m_redis(std::move(redis)),
          m_prefix(std::move(prefix)), m_cluster(cluster) {}

    ~RealTrialStore() override {
        try {
            if (m_placed) drop_order_table(m_pg());
        } catch (...) {
        }
    }

    void reset_orders(const std::vector<OrderRow>& initial, Tables tables) override {
        PgSession& pg = m_pg();
        // One transaction, and its commit not waiting for the WAL flush: the run's PostgreSQL is
        // never crashed, and a lab's own one is checkpointed below.
        pg.exec("BEGIN");
        try {
            pg.exec("SET LOCAL synchronous_commit TO off");
            reset_orders_table(pg, initial);
            if (tables.inbox) reset_inbox_table(pg);
            if (tables.source) reset_source_tables(pg, initial);
            if (tables.side_effects) reset_side_effects_table(pg);
            pg.exec("COMMIT");
        } catch (...) {
            (void)pg.run("ROLLBACK");  // the run's session stays usable
            throw;
        }
        // A database that has run for a while has a recent checkpoint: crash recovery then replays
        // the trial's changes, not the new database's creation.
        if (m_own_pg) pg.exec("CHECKPOINT");
    }
    void create_group(const std::string& stream, const std::string& group) override {
        const std::string key = m_prefix + stream;
        const std::vector<std::string> argv{"XGROUP", "CREATE", key, group, "$", "MKSTREAM"};
        if (m_cluster)
            m_control.cluster().call(key, argv);
        else
            m_control.admin().call(argv);
    }
    std::vector<OrderRow> rows() override { return RealOrderStore(m_pg()).rows(); }
    std::vector<SideEffectRow> side_effects() override { return RealOrderStore(m_pg()).side_effects(); }
    std::vector<StreamEntry> xrange(const std::string& stream) override {
        if (m_cluster) return ClusterStream(m_control.cluster()).xrange(stream);
        RedisClient reader(m_redis());
        return RealStream(reader, RedisNamespace{m_prefix}, m_prefix + "reader-").xrange(stream);
    }
    void reset_placed_orders(bool layer4) override {
        reset_order_table(m_pg(), layer4);
        m_placed = true;
    }
    std::vector<PlacedOrder> placed_orders() override { return RealOrderTable(m_pg()).orders(); }

private:
    std::function<PgSession&()> m_pg;
    bool m_own_pg;
    RealControl& m_control;
    std::function<RedisEndpoint()> m_redis;
    std::string m_prefix;
    bool m_cluster;
    bool m_placed = false;  // the idempotency labs' orders table, dropped with the store
};

// Each role prints "peak_rss_kb=N" to its <actor>.out as it ends (a crashed one does not).
std::map<std::string, int64_t> role_peak_rss_kb(const std::string& dir) {
    std::map<std::string, int64_t> out;
    std::error_code ec;
    for (const auto& f : std::filesystem::directory_iterator(dir, ec)) {
        if (f.path().extension() != ".out") continue;
        std::ifstream in(f.path());
        std::string line;
        while (std::getline(in, line))
            if (line.rfind("peak_rss_kb=", 0) == 0) try {
                    auto& kb = out[f.path().stem().string()];
                    kb = std::max<int64_t>(kb, std::stoll(line.substr(12)));
                } catch (const std::exception&) {
                }
    }
    return out;
}

}  // namespace

struct RealBackend::Impl {
    // The next sharded lab's cluster, formed while this lab runs, and the next trial's own
    // redis-server (with its replica and Sentinels), started while this trial runs. Declared
    // first, so they outlive every server their threads started (those die with the thread).
    ClusterPrefetch clusters;
    Prefetch<LabRedis, LabServers> own_redis_ahead{
        [this](const LabServers& spec) { return std::make_unique<LabRedis>(spec, servers.redis); }};
    std::optional<LabServers> next_lab_own_redis;  // what the lab after this one starts per trial
    // The next trial's own PostgreSQL (initdb and start: about 0.7 s), likewise.
    using PgConfig = std::map<std::string, std::string>;
    Prefetch<EmbeddedPostgres, PgConfig> own_pg_ahead{[](const PgConfig& config) {
        PgOptions o;
        o.config = config;
        return std::make_unique<EmbeddedPostgres>(o);
    }};
    std::optional<PgConfig> next_lab_own_pg;
    const ServerSet& servers;
    BackendOptions opts;
    RedisClient admin;
    RedisFeatures features;
    std::string schema;
    PgSchemaGuard schema_guard;
    std::unique_ptr<PgSession> pg;
    TempDir run_dir{"relab-run-"};
    std::string pg_version;
    // Forks every trial's roles; started by the first trial, from the thread that runs the labs.
    RoleSpawner spawner{opts.relab_exe};

    Impl(const ServerSet& s, BackendOptions o)
        : servers(s),
          opts(std::move(o)),
          admin(s.redis),
          features(detect_redis_features(admin)),
          schema("relab_" + opts.run_id),
          schema_guard(s.pg, schema),
          pg(std::make_unique<PgSession>(s.pg, schema)) {
        pg_version = pg->server_version();
        reaper::watch_redis_prefix(servers.redis, run_prefix());
    }

    ~Impl() {
        try {
            RedisClient now(servers.redis);  // admin's connection is gone if a failover lab shut its server down
            delete_keys_with_prefix(now, run_prefix());
            reaper::forget_redis_prefix(servers.redis, run_prefix());
        } catch (...) {
        }
    }

    // The lab's own servers (s.servers.own: a primary, maybe a replica and sentinels) while a trial
    // runs, and a client of its primary (dropped when a fault takes the primary away).
    std::unique_ptr<LabRedis> own_redis;
    RedisEndpoint lab_redis() const { return own_redis ? own_redis->primary() : servers.redis; }

    // The lab's own PostgreSQL (s.servers.postgres: a fault target) while a trial runs; the run's
    // server is never faulted.
    std::unique_ptr<EmbeddedPostgres> own_pg;
    // S2's sharded labs: a 3-master Redis Cluster of the lab's own, formed once for all its trials
    // (forming takes over 2 s), or the user's.
    ShardCluster shard{servers, clusters, run_prefix()};
    // The failover lab on the user's primary, replica and sentinels (redis+sentinel://) rather than
    // servers of its own: a stream lab whose own servers are a primary with a replica.
    bool on_user_sentinel(const Scenario& s) const {
        return !servers.sentinels.empty() && has_stream(s.kind) && s.servers.own && s.servers.replica;
    }
    // What the lab starts per trial that can be started ahead: nothing on the user's Sentinel.
    std::optional<LabServers> own_redis_ahead_of(const Scenario& s) const {
        return on_user_sentinel(s) ? std::nullopt : own_redis_of(s);
    }
    bool user_cluster() const { return !servers.cluster_seeds.empty(); }
    PgEndpoint lab_pg() const { return own_pg ? own_pg->endpoint() : servers.pg; }

    void start_own_postgres(const Scenario& s) {
        PgOptions o;
        o.config = s.servers.postgres_config;
        try {
            own_pg = own_pg_ahead.take(o.config);
        } catch (const EnvironmentError& e) {
            throw EnvironmentError(fmt::format(
                "{} faults PostgreSQL, so each of its trials runs on a PostgreSQL of its own, started by relab (the "
                "run's {} is never faulted), and that one could not start: {}",
                s.id, servers.pg_external ? "server at " + servers.pg.display() : "embedded server", e.what()));
        }
        PgSession(own_pg->endpoint(), "").exec("CREATE SCHEMA " + schema);  // thrown away with the server
    }

    std::string run_prefix() const { return "relab:" + opts.run_id + ":"; }

    RoleConfig role_config(const RoleSettings& settings, int trial, uint64_t seed, const std::string& prefix,
                           const std::string& dir) const {
        RoleConfig c;
        c.trial = trial;
        c.seed = seed;
        c.redis = lab_redis();
        if (own_redis && own_redis->sentinels()) {
            c.redis_sentinels = own_redis->sentinels()->endpoints();
            c.redis_master_name = own_redis->sentinels()->master_name();
        }
        if (shard.on()) c.redis_cluster = shard.masters();
        c.pg = lab_pg();
        c.schema = schema;
        c.key_prefix = prefix;
        c.barrier_prefix = prefix;
        c.settings = settings;
        c.history_path = dir;
        return c;
    }

    // One trial of a role family (engine/family.h): the lab's own servers when it has them, its
    // data prepared, a process per role under the family's supervisor, then its outcome.
    TrialOutcome run_role_trial(const LabFamily& family, const Scenario& s, int trial, uint64_t seed) {
        const std::string prefix = fmt::format("{}{}:t{}:", run_prefix(), s.id, trial);
        const std::string dir = fmt::format("{}/{}-t{}", run_dir.path(), s.id, trial);
        std::filesystem::create_directories(dir);
        // Fresh own servers for every trial (also when the run's server is external).
        struct OwnServers {
            Impl& impl;
            ~OwnServers() {
                impl.own_session.reset();
                impl.own_redis.reset();
                impl.own_pg.reset();  // resumed first if paused, then stopped, its directory removed
            }
        } own_servers{*this};
        if (s.servers.own)
            own_redis = on_user_sentinel(s) ? std::make_unique<LabRedis>(
                                                  UserSentinels{servers.sentinels, servers.sentinel_master}, servers.redis, prefix)
                                            : own_redis_ahead.take(s.servers);
        shard.before_trial(s);
        if (s.servers.postgres) start_own_postgres(s);

        const std::vector<RoleLaunch> roles = family.roles(s);
        // Before the control, so that it runs after the control's end has stopped the roles: a role
        // still running would write a key again once it is deleted.
        struct ClusterKeysGone {
            const ShardCluster& shard;
            std::string prefix;
            ~ClusterKeysGone() { shard.remove_keys(prefix); }
        } cluster_keys_gone{shard, prefix};
        RealControl control(RealControl::Env{s, prefix, dir, opts.relab_exe, own_redis.get(), servers.redis, own_pg.get(),
                                             shard.masters(), &spawner, shard.own()});
        RealTrialStore store([this]() -> PgSession& { return trial_pg(); }, own_pg != nullptr, control,
                             [this] { return lab_redis(); }, prefix, shard.on());
        family.prepare(s, store);
        spawn_roles(s, roles, control, trial, seed, prefix, dir);
        std::vector<HistoryRecord> history = supervise(family, s, roles, control, trial);
        if (shard.on()) history.push_back(shard.shard_note(s, control.cluster(), trial, prefix));
        for (auto& r : shard_outage_records(s, history)) history.push_back(std::move(r));
        restore_own_postgres();  // the final rows are what the lab's PostgreSQL committed
        TrialOutcome out = family.finish(s, trial, seed, std::move(history), store);
        if (!shard.on() && (!own_redis || own_redis->user())) delete_keys_with_prefix(control.admin(), prefix);
        if (own_redis && own_redis->user()) own_redis->restore_user_primary(servers.redis);
        out.role_peak_rss_kb = role_peak_rss_kb(dir);
        std::filesystem::remove_all(dir);
        return out;
    }

    // The trial's database session: the run's, or one on the lab's own PostgreSQL.
    std::unique_ptr<PgSession> own_session;
    PgSession& trial_pg() {
        if (!own_pg) return *pg;
        if (!own_session) own_session = std::make_unique<PgSession>(lab_pg(), schema);
        return *own_session;
    }
    // The lab's PostgreSQL as its last fault left it, running, read on a new session.
    void restore_own_postgres() {
        if (!own_pg) return;
        own_pg->resume();
        if (!own_pg->running()) own_pg->restart();
        own_session.reset();
    }

    // Consumers first, the publishing role last: it waits at the start barrier for them.
    void spawn_roles(const Scenario& s, const std::vector<RoleLaunch>& roles, RealControl& control, int trial,
                     uint64_t seed, const std::string& prefix, const std::string& dir) {
        const RoleSettings settings = role_settings(s);  // resolved once; every role process gets it
        uint64_t index = 0;
        for (const auto& launch : roles) {
            RoleConfig c = role_config(settings, trial, derive_seed(seed, index++), prefix, "");
            c.role = launch.role;
            c.actor = launch.actor;
            c.history_path = dir + "/" + c.actor + ".jsonl";
            control.add(launch, std::move(c));
        }
        control.roles_started();
        control.prepare_flags();
    }

    // The family's supervisor to the trial's end; the history with times from its origin.
    static std::vector<HistoryRecord> supervise(const LabFamily& family, const Scenario& s,
                                                const std::vector<RoleLaunch>& roles, RealControl& control, int trial) {
        std::optional<Nanos> origin;
        try {
            origin = family.supervise(s, roles, control);
            control.open_roles_ahead();
            control.fail_on_unscheduled_failover();
        } catch (const HarnessError&) {
            throw;
        } catch (const Interrupted&) {
            throw;
        } catch (const EnvironmentError&) {
            throw;
        } catch (const std::runtime_error& e) {
            // A role or server that failed with no fault of the lab behind it: no verdict.
            throw HarnessError(fmt::format("lab {} trial {}: {}", s.id, trial, e.what()));
        }
        std::vector<HistoryRecord> history = control.history();
        for (auto& r : history) r.trial = trial;
        if (!origin) {
            rebase_on_start(history);
        } else {
            for (auto& r : history) r.t_ns -= origin->count();
        }
        return history;
    }


    // Every trial of a lab through the engine's loop: a role family's on processes, a probe's
    // through the lab it opened.
    LabResult run_lab(const LabFamily& family, const Scenario& s) {
        LabResult lab;
        lab.scenario = s;
        LoopPlan plan;
        plan.trials = family.planned_trials(s, opts.runs);
        plan.seed = opts.seed;
        plan.progress = opts.progress;
        plan.shard = opts.shard;
        lab.planned_trials = plan.trials;
        if (!shard_has_trials(s, plan)) return lab;  // this shard has none of its trials
        // The lab's cluster goes when the lab ends, however it ends.
        struct ClusterGone {
            ShardCluster& shard;
            ~ClusterGone() { shard.release(); }
        } cluster_gone{shard};
        const StreamLab* flow = s.flow_if();
        if (flow && flow->shard.enabled) shard.take(s);
        if (flow && flow->lock.enabled) {
            RealKv kv(admin, RedisNamespace{run_prefix()}, features.delex);
            lab.lock_release_method = kv.delete_if_equals_method();
        }
        ProbeEnv env{servers, schema, run_prefix(), run_dir.path(), &clusters};
        std::unique_ptr<ProbeLab> probe = family.open_probe ? family.open_probe(s, env) : nullptr;
        run_trial_loop(s, plan, lab, [&](int t, uint64_t seed) -> TrialResult {
            // The trial after this one starts its own servers while this one runs.
            own_redis_ahead.want_next(t < plan.trials ? own_redis_ahead_of(s) : next_lab_own_redis);
            own_pg_ahead.want_next(t < plan.trials ? own_pg_of(s) : next_lab_own_pg);
            if (probe) return probe->trial(t, seed);
            return run_role_trial(family, s, t, seed);
        });
        if (probe) probe->finish(lab);
        if (family.after_trials) family.after_trials(lab);
        return lab;
    }

    // The first Redis feature the lab needs that this server lacks, as a skip reason.
    std::optional<std::string> missing_feature(const Scenario& s) const {
        for (const auto& feature : s.needs_features) {
            const bool delex = feature == "DELEX";
            const bool has = delex ? features.delex : feature == "XADD IDMP" ? features.xadd_idmp : false;
            if (!has)
                return fmt::format("needs {} (Redis {}); this server is {}: run it against Redis >= {} with --redis-url "
                                   "(docker-compose.yml's Redis 8.8)",
                                   delex ? "DELEX IFEQ" : feature, delex ? "8.4" : "8.6", features.version,
                                   delex ? "8.4" : "8.6");
        }
        return std::nullopt;
    }

};

RealBackend::RealBackend(const ServerSet& servers, BackendOptions opts)
    : m_impl(std::make_unique<Impl>(servers, std::move(opts))) {}

RealBackend::~RealBackend() = default;

ServerInfo RealBackend::server_info() const {
    ServerInfo i;
    i.redis_version = m_impl->features.version;
    i.pg_version = m_impl->pg_version;
    i.redis_external = m_impl->servers.redis_external;
    i.pg_external = m_impl->servers.pg_external;
    i.delex = m_impl->features.delex;
    i.xadd_idmp = m_impl->features.xadd_idmp;
    return i;
}

namespace {

// The Redis Cluster a lab forms for itself, if any.
// None for a sharded stream lab when the user gave a cluster of theirs (redis+cluster://).
std::optional<RedisClusterOptions> cluster_of(const Scenario& s, bool user_cluster) {
    if (const StreamLab* flow = s.flow_if(); flow && flow->shard.enabled)
        return user_cluster ? std::nullopt : std::optional<RedisClusterOptions>(shard_cluster_options(flow->shard));
    if (kind_row(s.kind).forms_cluster) return idem_cluster_options(s);
    return std::nullopt;
}

}  // namespace

void RealBackend::upcoming(const Scenario& next) {
    m_impl->clusters.want_next(cluster_of(next, m_impl->user_cluster()));
    m_impl->next_lab_own_redis = m_impl->own_redis_ahead_of(next);
    m_impl->next_lab_own_pg = own_pg_of(next);
}

int RealBackend::clusters_taken_ahead() const { return m_impl->clusters.taken_ahead(); }

void RealBackend::upcoming(const Scenario& next, std::span<const Scenario> later) {
    upcoming(next);
    if (cluster_of(next, m_impl->user_cluster())) return;
    for (const auto& s : later)
        if (const auto c = cluster_of(s, m_impl->user_cluster())) {
            m_impl->clusters.want_next(c);
            return;
        }
}

LabResult RealBackend::run(const Scenario& s) {
    return run_with_beside(s, [this](const Scenario& x) { return run_one(x); });
}

LabResult RealBackend::run_one(const Scenario& s) {
    const auto started = SteadyClock::now();
    // A lab with a cluster or trial servers of its own starts the next one's once it has its own
    // (take()); any other starts them now.
    if (!cluster_of(s, m_impl->user_cluster())) m_impl->clusters.start_next();
    if (!m_impl->own_redis_ahead_of(s)) {
        m_impl->own_redis_ahead.want_next(m_impl->next_lab_own_redis);
        m_impl->own_redis_ahead.start_next();
    }
    if (!own_pg_of(s)) {
        m_impl->own_pg_ahead.want_next(m_impl->next_lab_own_pg);
        m_impl->own_pg_ahead.start_next();
    }
    const LabFamily& family = family_of(s.kind);
    LabResult lab;
    std::optional<std::string> missing = m_impl->missing_feature(s);
    if (!missing && s.only_backend == "sim") missing = "runs on the simulator only: " + s.only_backend_why;
    if (!missing) missing = family.real_skip_reason(s, m_impl->features.version);
    if (!missing && m_impl->on_user_sentinel(s) && !m_impl->opts.allow_server_faults)
        missing = fmt::format("fails over the primary behind your Sentinel ({}): it detaches your replica (REPLICAOF) "
                              "and has your sentinels fail your primary over to it (SENTINEL FAILOVER), which discards what the "
                              "primary took meanwhile; pass --allow-server-faults to run it there, or drop the "
                              "redis+sentinel URL to let "
                              "relab start servers of its own",
                              m_impl->servers.redis_url_display);
    if (!missing && m_impl->user_cluster() && ShardCluster::faulted(s))
        missing = fmt::format("kills a master of its cluster or pauses a replica, which relab does only to a cluster it "
                              "forms for the trial, never to yours ({}); drop the redis+cluster URL to run it",
                              m_impl->servers.redis_url_display);
    if (!missing) missing = program_skip_reason(s);  // an interpreter this machine lacks
    if (auto reason = missing) {
        lab.scenario = s;
        lab.skipped = true;
        lab.skip_reason = *reason;
    } else {
        lab = m_impl->run_lab(family, s);
    }
    lab.backend = "real";
    lab.elapsed_s = std::chrono::duration<double>(SteadyClock::now() - started).count();
    summarize(lab);
    return lab;
}

}  // namespace relab
