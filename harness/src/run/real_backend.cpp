#include "run/real_backend.h"

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
#include "real/child_process.h"
#include "real/cluster_link.h"
#include "real/cluster_slot.h"
#include "real/redis_cluster.h"
#include "real/interrupt.h"
#include "real/lab_redis.h"
#include "real/pg_client.h"
#include "real/reaper.h"
#include "real/redis_client.h"
#include "real/temp_dir.h"
#include "roles/roles.h"
#include "run/idem_benchmark.h"
#include "run/cluster_prefetch.h"
#include "run/prefetch.h"
#include "run/idem_cluster.h"
#include "run/idem_runner.h"
#include "run/real_control.h"
#include "run/role_process.h"
#include "run/supervisor.h"
#include "run/timeouts.h"
#include "run/session_runner.h"

namespace relab {

std::string new_run_id() {
    std::random_device rd;
    return fmt::format("{:08x}", rd());
}

uint64_t lab_seed(const Scenario& s, const std::optional<uint64_t>& override_seed) {
    return override_seed ? derive_seed(*override_seed, s.id) : s.seed;
}

uint64_t trial_seed(uint64_t lab_seed_value, int trial) {
    return derive_seed(lab_seed_value, static_cast<uint64_t>(trial));
}

namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;


}  // namespace

// What a lab starts for each of its trials with its own redis-server, if anything: a stream or
// idempotency-client lab with "servers": {"own": true}.
std::optional<IdemServers> own_redis_of(const Scenario& s) {
    if ((s.kind == LabKind::stream || s.kind == LabKind::idem_clients) && s.servers.own) return s.servers;
    return std::nullopt;
}

// The settings of the PostgreSQL a stream lab starts for each of its trials, if it does.
std::optional<std::map<std::string, std::string>> own_pg_of(const Scenario& s) {
    if (s.kind == LabKind::stream && s.servers.postgres) return s.servers.postgres_config;
    return std::nullopt;
}

struct RealBackend::Impl {
    // The next sharded lab's cluster, formed while this lab runs, and the next trial's own
    // redis-server (with its replica and Sentinels), started while this trial runs. Declared
    // first, so they outlive every server their threads started (those die with the thread).
    ClusterPrefetch clusters;
    Prefetch<LabRedis, IdemServers> own_redis_ahead{
        [this](const IdemServers& spec) { return std::make_unique<LabRedis>(spec, servers.redis); }};
    std::optional<IdemServers> next_lab_own_redis;  // what the lab after this one starts per trial
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
            delete_keys_with_prefix(admin, run_prefix());
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
    // (forming takes over 2 s); every trial's keys are under its own prefix and removed after it.
    std::unique_ptr<EmbeddedRedisCluster> cluster;
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
        if (cluster) c.redis_cluster = cluster->endpoints();
        c.pg = lab_pg();
        c.schema = schema;
        c.key_prefix = prefix;
        c.barrier_prefix = prefix;
        c.settings = settings;
        c.history_path = dir;
        return c;
    }

    TrialOutcome run_trial(const Scenario& s, int trial, uint64_t seed) {
        const std::string prefix = fmt::format("{}{}:t{}:", run_prefix(), s.id, trial);
        const RedisNamespace ns{prefix};
        const std::string dir = fmt::format("{}/{}-t{}", run_dir.path(), s.id, trial);
        std::filesystem::create_directories(dir);
        // A lab with servers of its own (a fault target): fresh ones for every trial, as the
        // idempotency labs have (also when the run's server is external).
        struct OwnServers {
            Impl& impl;
            ~OwnServers() {
                impl.own_redis.reset();
                impl.own_pg.reset();  // resumed first if paused, then stopped, its directory removed
            }
        } own_servers{*this};
        if (s.servers.own) own_redis = own_redis_ahead.take(s.servers);
        if (s.servers.postgres) start_own_postgres(s);

        const std::vector<OrderRow> initial = initial_order_rows(s);
        {
            std::unique_ptr<PgSession> own = own_pg ? std::make_unique<PgSession>(lab_pg(), schema) : nullptr;
            PgSession& trial_pg = own ? *own : *pg;
            // One transaction, and its commit not waiting for the WAL flush (an fsync): the run's
            // PostgreSQL is never crashed, and a lab's own one is checkpointed below.
            trial_pg.exec("BEGIN");
            try {
                trial_pg.exec("SET LOCAL synchronous_commit TO off");
                reset_orders_table(trial_pg, initial);
                if (s.write.dedupe != WriteDedupe::none) reset_inbox_table(trial_pg);
                if (s.dispatcher.enabled) reset_source_tables(trial_pg, initial);
                if (s.write.side_effect) reset_side_effects_table(trial_pg);
                trial_pg.exec("COMMIT");
            } catch (...) {
                (void)trial_pg.run("ROLLBACK");  // the run's session stays usable
                throw;
            }
            // A database that has run for a while has a recent checkpoint: crash recovery then
            // replays the trial's changes, not the new database's creation, which takes longer.
            if (own) own->exec("CHECKPOINT");
        }
        // Consumers first, the publishing role last: it waits at the start barrier for them.
        const std::vector<RoleLaunch> roles = trial_roles(s);
        RealControl control(RealControl::Env{s, prefix, dir, opts.relab_exe, own_redis.get(), servers.redis, own_pg.get(),
                                             cluster ? cluster->endpoints() : std::vector<RedisEndpoint>{}, &spawner});
        // S2: whatever happens below, the trial's keys go from every node of the cluster.
        struct ClusterKeysGone {
            Impl& impl;
            std::string prefix;
            ~ClusterKeysGone() {
                if (!impl.cluster) return;
                for (const auto& ep : impl.cluster->endpoints()) try {
                        RedisClient c(ep);
                        delete_keys_with_prefix(c, prefix);
                    } catch (...) {
                    }
            }
        } cluster_keys_gone{*this, prefix};
        // Where each shard's stream lives: its hash tag's slot and the master that owns it.
        nlohmann::json shard_map = nlohmann::json::array();
        std::string shard_text;
        if (cluster) {
            for (const auto& key : lab_stream_keys(s.stream, s.shard)) {
                const std::string real = ns.key(key);
                control.cluster().call(real, {"XGROUP", "CREATE", real, s.stream.group, "$", "MKSTREAM"});
                const std::string node = control.cluster().owner_address(real);
                shard_map.push_back({{"stream", key}, {"slot", key_slot(real)}, {"node", node}});
                shard_text += fmt::format("{}{} → slot {} on {}", shard_text.empty() ? "" : ", ", key, key_slot(real), node);
            }
        } else {
            control.admin().call({"XGROUP", "CREATE", ns.key(s.stream.key), s.stream.group, "$", "MKSTREAM"});
        }
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
        try {
            supervise_stream_trial(s, roles, control);
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
        rebase_on_start(history);
        if (cluster)
            history.push_back(HistoryRecord{trial, 0, "relab", Op::observe,
                                            {{"text", "shards on the Redis Cluster: " + shard_text},
                                             {"masters", cluster->size()},
                                             {"streams", shard_map}}});

        // The lab's PostgreSQL as its last fault left it: the final rows are what it committed.
        std::unique_ptr<PgSession> own;
        if (own_pg) {
            own_pg->resume();
            if (!own_pg->running()) own_pg->restart();
            own = std::make_unique<PgSession>(lab_pg(), schema);
        }
        RealOrderStore store(own ? *own : *pg);
        std::vector<StreamEntry> entries;
        if (cluster) {
            ClusterStream stream(control.cluster());
            for (const auto& key : lab_stream_keys(s.stream, s.shard)) {
                auto part = stream.xrange(key);
                entries.insert(entries.end(), part.begin(), part.end());
            }
        } else {
            RedisClient reader(lab_redis());
            RealStream stream(reader, ns, prefix + "reader-");
            entries = stream.xrange(s.stream.key);
        }
        auto rows = store.rows();
        if (s.write.side_effect) check_side_effects_recorded(history, store.side_effects());
        if (!cluster) delete_keys_with_prefix(control.admin(), prefix);
        const std::map<std::string, int64_t> peaks = role_peak_rss_kb(dir);
        std::filesystem::remove_all(dir);
        TrialOutcome out = check_trial(s, trial, seed, std::move(history), std::move(rows), std::move(entries));
        out.role_peak_rss_kb = peaks;
        if (out.history.size() > k_max_kept_records) {
            // A load lab's trial: its accounting, load figures and verdict stay; its timeline (tens of
            // MB of JSON, unreadable as text) is not kept, as the simulator drops long runs' timelines.
            out.history = {};
            out.stream = {};
        }
        return out;
    }
    static constexpr size_t k_max_kept_records = 20000;

    // Each role prints "peak_rss_kb=N" to its <actor>.out as it ends (a crashed one does not).
    static std::map<std::string, int64_t> role_peak_rss_kb(const std::string& dir) {
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

    LabResult run_workload(const Scenario& s) {
        LabResult lab;
        lab.scenario = s;
        const uint64_t seed = lab_seed(s, opts.seed);
        const int runs = opts.runs.value_or(s.runs);
        // The cluster goes when the lab ends, however it ends.
        struct ClusterGone {
            Impl& impl;
            ~ClusterGone() { impl.cluster.reset(); }
        } cluster_gone{*this};
        if (s.shard.enabled) {
            try {
                cluster = clusters.take(RedisClusterOptions{});
            } catch (const EnvironmentError& e) {
                throw EnvironmentError(fmt::format("{} shards its stream over a Redis Cluster of its own, which could "
                                                   "not be formed: {}",
                                                   s.id, e.what()));
            }
        }
        if (s.lock.enabled) {
            RedisNamespace ns{run_prefix()};
            RealKv kv(admin, ns, features.delex);
            lab.lock_release_method = kv.delete_if_equals_method();
        }
        // The sequential rule of a racy lab (expect.until_wrong): more trials while too few went wrong.
        int wrong = 0;
        for (int t = 1; t <= runs || s.expect.wants_more(wrong, t - 1); ++t) {
            throw_if_interrupted();
            if (opts.progress) opts.progress(s.id, t, std::max(runs, t));
            // The trial after this one starts its own servers while this one runs.
            own_redis_ahead.want_next(t < runs ? own_redis_of(s) : next_lab_own_redis);
            own_pg_ahead.want_next(t < runs ? own_pg_of(s) : next_lab_own_pg);
            lab.trials.push_back(run_trial(s, t, trial_seed(seed, t)));
            if (lab.trials.back().wrong) ++wrong;
        }
        return lab;
    }

    LabResult run_sessions(const Scenario& s) {
        LabResult lab;
        lab.scenario = s;
        int k = 0;
        for (const auto& c : s.cases) {
            throw_if_interrupted();
            if (opts.progress) opts.progress(s.id, ++k, static_cast<int>(s.cases.size()));
            // Redis sessions: each case under its own prefix, removed after it.
            const bool exact = c.exact_keys && !servers.redis_external;
            RedisSessionTarget redis{servers.redis, exact ? "" : fmt::format("{}{}:c{}:", run_prefix(), s.id, k),
                                     !servers.redis_external};
            lab.cases.push_back(run_session_case(c, servers.pg, schema, &redis));
            if (!redis.prefix.empty()) delete_keys_with_prefix(admin, redis.prefix);
        }
        PgSession cleanup(servers.pg, schema);
        cleanup.exec("DROP TABLE IF EXISTS tmp_orders");
        return lab;
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
std::optional<RedisClusterOptions> cluster_of(const Scenario& s) {
    if (s.kind == LabKind::stream && s.shard.enabled) return RedisClusterOptions{};
    if (s.kind == LabKind::idem_cluster) return idem_cluster_options(s);
    return std::nullopt;
}

}  // namespace

void RealBackend::upcoming(const Scenario& next) {
    m_impl->clusters.want_next(cluster_of(next));
    m_impl->next_lab_own_redis = own_redis_of(next);
    m_impl->next_lab_own_pg = own_pg_of(next);
}

int RealBackend::clusters_taken_ahead() const { return m_impl->clusters.taken_ahead(); }

void RealBackend::upcoming(const Scenario& next, std::span<const Scenario> later) {
    upcoming(next);
    if (cluster_of(next)) return;
    for (const auto& s : later)
        if (const auto c = cluster_of(s)) {
            m_impl->clusters.want_next(c);
            return;
        }
}

LabResult RealBackend::run(const Scenario& s) {
    const auto started = SteadyClock::now();
    // A lab with a cluster or trial servers of its own starts the next one's once it has its own
    // (take()); any other starts them now.
    if (!cluster_of(s)) m_impl->clusters.start_next();
    if (!own_redis_of(s)) {
        m_impl->own_redis_ahead.want_next(m_impl->next_lab_own_redis);
        m_impl->own_redis_ahead.start_next();
    }
    if (!own_pg_of(s)) {
        m_impl->own_pg_ahead.want_next(m_impl->next_lab_own_pg);
        m_impl->own_pg_ahead.start_next();
    }
    LabResult lab;
    std::optional<std::string> missing;
    for (const auto& feature : s.needs_features) {
        const auto& f = m_impl->features;
        const bool has = feature == "DELEX" ? f.delex : feature == "XADD IDMP" ? f.xadd_idmp : false;
        if (!has && !missing)
            missing = fmt::format("needs {} (Redis {}); this server is {}: run it against Redis >= {} with --redis-url "
                                  "(docker-compose.yml's Redis 8.8)",
                                  feature == "DELEX" ? "DELEX IFEQ" : feature, feature == "DELEX" ? "8.4" : "8.6",
                                  f.version, feature == "DELEX" ? "8.4" : "8.6");
    }
    if (!missing) missing = idem_skip_reason(s, m_impl->features.version);
    if (auto reason = missing) {
        lab.scenario = s;
        lab.skipped = true;
        lab.skip_reason = *reason;
    } else {
        const Impl& i = *m_impl;
        const IdemRunContext idem{i.servers,    i.schema,          i.run_prefix(),
                                  i.opts.relab_exe, i.run_dir.path(), i.opts.seed,
                                  i.opts.runs,  i.opts.progress,   &m_impl->clusters,
                                  &m_impl->own_redis_ahead, m_impl->next_lab_own_redis,
                                  &m_impl->spawner};
        lab.scenario = s;
        // The lab's runner, by its kind: the one place the real backend decides it.
        switch (s.kind) {
            case LabKind::stream: lab = m_impl->run_workload(s); break;
            case LabKind::sessions: lab = m_impl->run_sessions(s); break;
            case LabKind::idem_clients: lab = run_idem_lab(s, idem); break;
            case LabKind::idem_benchmark: run_idem_benchmark(s, idem, lab); break;
            case LabKind::idem_cluster: run_idem_cluster(s, idem, lab); break;
        }
    }
    lab.backend = "real";
    lab.elapsed_s = std::chrono::duration<double>(SteadyClock::now() - started).count();
    summarize(lab);
    return lab;
}

}  // namespace relab
