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
#include "real/interrupt.h"
#include "real/lab_redis.h"
#include "real/pg_client.h"
#include "real/redis_client.h"
#include "real/temp_dir.h"
#include "roles/roles.h"
#include "run/idem_benchmark.h"
#include "run/idem_cluster.h"
#include "run/idem_runner.h"
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

// XINFO GROUPS reply entry (a flat field/value array) -> value of one field.
const RedisReply* field_of(const RedisReply& flat, const std::string& name) {
    for (size_t i = 0; i + 1 < flat.elements.size(); i += 2)
        if (flat.elements[i].str == name) return &flat.elements[i + 1];
    return nullptr;
}

}  // namespace

struct RealBackend::Impl {
    const ServerSet& servers;
    BackendOptions opts;
    RedisClient admin;
    RedisFeatures features;
    std::string schema;
    PgSchemaGuard schema_guard;
    std::unique_ptr<PgSession> pg;
    TempDir run_dir{"relab-run-"};
    std::string pg_version;

    Impl(const ServerSet& s, BackendOptions o)
        : servers(s),
          opts(std::move(o)),
          admin(s.redis),
          features(detect_redis_features(admin)),
          schema("relab_" + opts.run_id),
          schema_guard(s.pg, schema),
          pg(std::make_unique<PgSession>(s.pg, schema)) {
        pg_version = pg->server_version();
    }

    ~Impl() {
        try {
            delete_keys_with_prefix(admin, run_prefix());
        } catch (...) {
        }
    }

    // The lab's own servers (s.servers.own: a primary, maybe a replica and sentinels) while a trial
    // runs, and a client of its primary (dropped when a fault takes the primary away).
    std::unique_ptr<LabRedis> own_redis;
    std::unique_ptr<RedisClient> own_admin;
    RedisClient& lab_admin() {
        if (own_redis && !own_admin) own_admin = std::make_unique<RedisClient>(own_redis->primary());
        return own_redis ? *own_admin : admin;
    }
    RedisEndpoint lab_redis() const { return own_redis ? own_redis->primary() : servers.redis; }

    std::string run_prefix() const { return "relab:" + opts.run_id + ":"; }

    RoleConfig role_config(const Scenario& s, int trial, uint64_t seed, const std::string& prefix,
                           const std::string& dir) const {
        RoleConfig c;
        c.trial = trial;
        c.seed = seed;
        c.redis = lab_redis();
        if (own_redis && own_redis->sentinels()) {
            c.redis_sentinels = own_redis->sentinels()->endpoints();
            c.redis_master_name = own_redis->sentinels()->master_name();
        }
        c.pg = servers.pg;
        c.schema = schema;
        c.key_prefix = prefix;
        c.barrier_prefix = prefix;
        c.scenario = s.source;
        c.scenario_file = s.file;
        c.history_path = dir;
        return c;
    }

    // Every entry now in the stream delivered and acknowledged. A stream that is gone (a server
    // restarted without persistence, nothing added since) has nothing left to deliver; a group that
    // is gone may yet be created again by the consumers, so it is not drained.
    bool group_drained(const Scenario& s, const RedisNamespace& ns) {
        RedisClient& a = lab_admin();
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

    void unblock_readers(const std::string& barrier_prefix) {
        RedisClient& admin = lab_admin();
        const auto list = admin.call({"CLIENT", "LIST"});
        std::istringstream lines(list.str);
        std::string line;
        while (std::getline(lines, line)) {
            const auto name_at = line.find(" name=" + barrier_prefix);
            const auto id_at = line.find("id=");
            if (name_at == std::string::npos || id_at != 0) continue;
            const std::string id = line.substr(3, line.find(' ') - 3);
            admin.command({"CLIENT", "UNBLOCK", id});
        }
    }

    // The Control port over role processes, signals and the trial's Redis namespace.
    class RealControl : public Control {
    public:
        RealControl(Impl& impl, const Scenario& s, const RedisNamespace& ns, std::string dir)
            : m_impl(impl), m_s(s), m_ns(ns), m_dir(std::move(dir)) {}

        void add(const RoleLaunch& launch, RoleConfig config) {
            m_roles.push_back(Role{launch, std::move(config)});
            spawn(m_roles.back());
        }

        Nanos now() override { return std::chrono::duration_cast<Nanos>(SteadyClock::now().time_since_epoch()); }

        void wait(Phase, std::optional<Nanos> until) override {
            throw_if_interrupted();
            Nanos d = milliseconds(2);
            if (until) d = std::min(d, std::max(Nanos{0}, *until - now()));
            std::this_thread::sleep_for(d);
        }

        bool finished(const std::string& actor) override {
            if (actor == kRedis) return m_redis_down;
            if (actor == kReplica) return false;
            Role& r = role(actor);
            return r.killed || !r.process->running();
        }

        void check_roles() override {
            for (auto& r : m_roles) {
                if (r.killed || r.process->running()) continue;
                const auto code = r.process->exit_code();
                if (code && *code != 0)
                    throw std::runtime_error(fmt::format("role {} exited with status {}: {}", r.launch.actor, *code,
                                                         tail_of_file(r.stderr_path)));
            }
        }

        void kill(const std::string& actor) override {
            if (actor == kRedis) {
                server().own_primary().crash();  // SIGKILL, as `docker kill`: no final save
                m_impl.own_admin.reset();
                m_redis_down = true;
                m_redis_paused = false;
                return;
            }
            Role& r = role(actor);
            r.process->signal(SIGKILL);
            if (!r.process->wait_for(timeouts::kSignalTakesEffect))
                throw std::runtime_error(fmt::format("{} (pid {}) did not die within {} ms of SIGKILL", actor,
                                                     r.process->pid(), timeouts::kSignalTakesEffect.count()));
            r.killed = true;
            r.paused = false;
        }

        void pause(const std::string& actor) override {
            if (actor == kRedis) {
                ::kill(server().own_primary().pid(), SIGSTOP);
                m_redis_paused = true;
                return;
            }
            if (actor == kReplica) {
                server().pause_replica();
                m_replica_paused = true;
                return;
            }
            Role& r = role(actor);
            r.process->signal(SIGSTOP);
            r.paused = true;
            wait_for_state(r, 'T', "SIGSTOP");
        }

        void resume(const std::string& actor) override {
            if (actor == kRedis) {
                ::kill(server().own_primary().pid(), SIGCONT);
                m_redis_paused = false;
                return;
            }
            if (actor == kReplica) {
                server().resume_replica();
                m_replica_paused = false;
                return;
            }
            Role& r = role(actor);
            r.process->signal(SIGCONT);
            r.paused = false;
        }

        bool paused(const std::string& actor) override {
            if (actor == kReplica) return m_replica_paused;
            return actor == kRedis ? m_redis_paused : role(actor).paused;
        }

        std::string failover(const std::string&) override {
            LabRedis& lab = server();
            SentinelSet& sentinels = lab.sentinel_set();
            const RedisEndpoint old = lab.primary();
            const std::string before = last_delivered();
            const auto t0 = SteadyClock::now();
            lab.own_primary().crash();
            m_impl.own_admin.reset();
            m_redis_down = true;
            lab.resume_replica();  // stale as it is: it cannot reach the dead primary any more
            m_replica_paused = false;
            const MasterSwitch sw = sentinels.wait_for_switch_master(old, timeouts::kFailover, t0);
            lab.replica_promoted(sw.primary);
            sentinels.wait_until_all_name(sw.primary, timeouts::kFailover);
            m_redis_down = false;
            const double ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
            return fmt::format("primary {} killed (SIGKILL); Sentinel promoted {} ({:.0f} ms, +switch-master); the "
                               "group's last-delivered-id {} before, {} after",
                               old.display(), sw.primary.display(), ms, before, last_delivered());
        }

        std::string drop_link(const std::string&) override {
            const int64_t dropped = m_impl.lab_admin().call({"CLIENT", "KILL", "TYPE", "replica"}).integer;
            return fmt::format("the primary dropped {} replication link(s) (CLIENT KILL TYPE replica)", dropped);
        }

        void start(const std::string& actor) override {
            if (actor == kRedis) {
                server().own_primary().restart();  // same port, data directory and settings: it loads what it kept
                m_impl.own_admin.reset();
                const auto deadline = SteadyClock::now() + timeouts::kServerRestart;
                while (info_section(m_impl.lab_admin(), "persistence")["loading"] != "0") {
                    if (SteadyClock::now() > deadline)
                        throw std::runtime_error(fmt::format("redis-server still loading its data {} ms after the restart",
                                                             timeouts::kServerRestart.count()));
                    std::this_thread::sleep_for(milliseconds(10));
                }
                m_redis_down = false;
                return;
            }
            Role& r = role(actor);
            if (!finished(actor)) throw std::logic_error(actor + " is still running");
            ++r.incarnation;
            r.killed = false;
            spawn(r);
        }

        bool drained() override {
            if (m_redis_down || m_redis_paused) return false;
            try {
                return m_impl.group_drained(m_s, m_ns);
            } catch (const KvError& e) {
                // Only a lab that takes its server down may find it unreachable; elsewhere it is
                // the harness's failure.
                if (!redis_faults_scheduled(m_s) || e.kind() == KvError::Kind::unexpected) throw;
                m_impl.own_admin.reset();
                return false;
            }
        }
        void raise_stop() override { m_impl.lab_admin().call({"SET", m_ns.key(kStopKey), "1"}); }
        void unblock_readers() override { m_impl.unblock_readers(m_ns.prefix); }

        // New complete lines of every role's history file since the last look.
        void poll_records(std::vector<HistoryRecord>& out) override {
            for (auto& r : m_roles) {
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

        void record(HistoryRecord r) override { m_nemesis.push_back(std::move(r)); }

        // Every role's history file and the nemesis's records, unsorted (the checker sorts).
        std::vector<HistoryRecord> history() {
            std::vector<HistoryRecord> out = m_nemesis;
            for (auto& r : m_roles) {
                auto part = read_history_file(r.config.history_path);
                out.insert(out.end(), part.begin(), part.end());
            }
            return out;
        }

    private:
        struct Role {
            RoleLaunch launch;
            RoleConfig config;
            std::unique_ptr<ChildProcess> process{};
            std::string stderr_path{};
            int incarnation = 1;
            bool killed = false;
            bool paused = false;
            size_t read_offset = 0;
        };

        static inline const std::string kRedis = "redis";
        static inline const std::string kReplica = "redis-replica";

        LabRedis& server() {
            if (!m_impl.own_redis) throw std::logic_error("this lab has no redis-server of its own to fault");
            return *m_impl.own_redis;
        }

        // XINFO GROUPS' last-delivered-id of the lab's group, or why it cannot be read.
        std::string last_delivered() {
            try {
                RedisClient c(m_impl.lab_redis(), milliseconds(1000));
                const auto groups = c.call({"XINFO", "GROUPS", m_ns.key(m_s.stream.key)});
                for (const auto& g : groups.elements) {
                    const auto* name = field_of(g, "name");
                    const auto* delivered = field_of(g, "last-delivered-id");
                    if (name && delivered && name->str == m_s.stream.group) return delivered->str;
                }
                return "(no group)";
            } catch (const KvError& e) {
                return std::string("(unreadable: ") + e.what() + ")";
            }
        }

        Role& role(const std::string& actor) {
            for (auto& r : m_roles)
                if (r.launch.actor == actor) return r;
            throw std::logic_error("no role " + actor + " in this trial");
        }

        void spawn(Role& r) {
            // Each incarnation its own stderr file, so a restart keeps the first one's last words.
            r.stderr_path = r.incarnation == 1 ? fmt::format("{}/{}.err", m_dir, r.launch.actor)
                                               : fmt::format("{}/{}.{}.err", m_dir, r.launch.actor, r.incarnation);
            r.process = spawn_role_process(m_impl.opts.relab_exe, r.config, m_dir, r.stderr_path);
        }

        // /proc/PID/stat's state letter, once the signal has taken effect.
        void wait_for_state(Role& r, char state, const char* signal) {
            const auto deadline = SteadyClock::now() + timeouts::kSignalTakesEffect;
            for (;;) {
                std::ifstream stat(fmt::format("/proc/{}/stat", r.process->pid()));
                std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
                const auto paren = text.rfind(')');
                if (paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == state) return;
                if (SteadyClock::now() > deadline)
                    throw std::runtime_error(fmt::format("{} (pid {}) not stopped {} ms after {}", r.launch.actor,
                                                         r.process->pid(), timeouts::kSignalTakesEffect.count(), signal));
                std::this_thread::sleep_for(milliseconds(1));
            }
        }

        Impl& m_impl;
        const Scenario& m_s;
        const RedisNamespace& m_ns;
        std::string m_dir;
        std::vector<Role> m_roles;
        std::vector<HistoryRecord> m_nemesis;
        bool m_redis_down = false;
        bool m_redis_paused = false;
        bool m_replica_paused = false;
    };

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
                impl.own_admin.reset();
                impl.own_redis.reset();
            }
        } own_servers{*this};
        if (s.servers.own) own_redis = std::make_unique<LabRedis>(s.servers, servers.redis);

        std::vector<OrderRow> initial;
        for (const auto& o : s.orders) initial.push_back(OrderRow{o.id, o.initial_status, o.initial_version});
        reset_orders_table(*pg, initial);
        if (s.dispatcher.enabled) reset_source_tables(*pg, initial);
        lab_admin().call({"XGROUP", "CREATE", ns.key(s.stream.key), s.stream.group, "$", "MKSTREAM"});

        // Consumers first, the publishing role last: it waits at the start barrier for them.
        const std::vector<RoleLaunch> roles = trial_roles(s);
        RealControl control(*this, s, ns, dir);
        uint64_t index = 0;
        for (const auto& launch : roles) {
            RoleConfig c = role_config(s, trial, derive_seed(seed, index++), prefix, "");
            c.role = launch.role;
            c.actor = launch.actor;
            c.history_path = dir + "/" + c.actor + ".jsonl";
            control.add(launch, std::move(c));
        }
        supervise_stream_trial(s, roles, control);

        std::vector<HistoryRecord> history = control.history();
        rebase_on_start(history);

        RealOrderStore store(*pg);
        RedisClient reader(lab_redis());
        RealStream stream(reader, ns, prefix + "reader-");
        auto entries = stream.xrange(s.stream.key);
        auto rows = store.rows();
        delete_keys_with_prefix(lab_admin(), prefix);
        std::filesystem::remove_all(dir);
        return check_trial(s, trial, seed, std::move(history), std::move(rows), std::move(entries));
    }

    LabResult run_workload(const Scenario& s) {
        LabResult lab;
        lab.scenario = s;
        const uint64_t seed = lab_seed(s, opts.seed);
        const int runs = opts.runs.value_or(s.runs);
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

LabResult RealBackend::run(const Scenario& s) {
    const auto started = SteadyClock::now();
    LabResult lab;
    if (auto reason = idem_skip_reason(s, m_impl->features.version)) {
        lab.scenario = s;
        lab.skipped = true;
        lab.skip_reason = *reason;
    } else {
        const Impl& i = *m_impl;
        const IdemRunContext idem{i.servers,   i.schema,    i.run_prefix(),  i.opts.relab_exe, i.run_dir.path(),
                                  i.opts.seed, i.opts.runs, i.opts.progress};
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
