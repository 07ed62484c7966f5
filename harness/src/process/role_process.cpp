#include "process/role_process.h"


#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "history/file_history.h"
#include "process/child_process.h"
#include "ports/seeded_rng.h"
#include "clients/redis_link.h"
#include "clients/cluster_client.h"
#include "clients/order_table.h"
#include "clients/pg_client.h"
#include "process/real_clock.h"
#include "clients/endpoint_json.h"
#include "clients/redis_client.h"
#include "roles/roles.h"

namespace relab {

nlohmann::json role_config_to_json(const RoleConfig& c) {
    nlohmann::json j = {{"role", c.role},
            {"actor", c.actor},
            {"trial", c.trial},
            {"seed", c.seed},
            {"redis", redis_endpoint_json(c.redis)},
            {"pg", pg_endpoint_json(c.pg)},
            {"schema", c.schema},
            {"key_prefix", c.key_prefix},
            {"barrier_prefix", c.barrier_prefix},
            {"settings", role_settings_to_json(c.settings)},
            {"history_path", c.history_path},
            {"barrier_timeout_ms", c.barrier_timeout_ms}};
    if (!c.redis_sentinels.empty()) {
        j["redis_sentinels"] = nlohmann::json::array();
        for (const auto& r : c.redis_sentinels)
            j["redis_sentinels"].push_back(redis_endpoint_json(r));
        j["redis_master_name"] = c.redis_master_name;
    }
    if (!c.redis_cluster.empty()) {
        j["redis_cluster"] = nlohmann::json::array();
        for (const auto& r : c.redis_cluster)
            j["redis_cluster"].push_back(redis_endpoint_json(r));
    }
    return j;
}

RoleConfig role_config_from_json(const nlohmann::json& j) {
    RoleConfig c;
    c.role = j.at("role");
    c.actor = j.at("actor");
    c.trial = j.at("trial");
    c.seed = j.at("seed");
    c.redis = redis_endpoint_from_json(j.at("redis"));
    c.pg = pg_endpoint_from_json(j.at("pg"));
    c.schema = j.at("schema");
    c.key_prefix = j.at("key_prefix");
    c.barrier_prefix = j.at("barrier_prefix");
    c.settings = role_settings_from_json(j.at("settings"));
    c.history_path = j.at("history_path");
    c.barrier_timeout_ms = j.at("barrier_timeout_ms");
    if (j.contains("redis_sentinels")) {
        c.redis_master_name = j.at("redis_master_name");
        for (const auto& r : j.at("redis_sentinels")) c.redis_sentinels.push_back(redis_endpoint_from_json(r));
    }
    if (j.contains("redis_cluster"))
        for (const auto& r : j.at("redis_cluster")) c.redis_cluster.push_back(redis_endpoint_from_json(r));
    return c;
}

namespace {

// The idempotency clients read no stream; a call here is a bug in the role.
class NoStream : public Stream {
public:
    [[noreturn]] static void refuse() { throw std::logic_error("an idempotency client has no stream"); }
    std::vector<std::string> xadd(const std::string&, const std::vector<Fields>&) override { refuse(); }
    std::vector<StreamEntry> xreadgroup(const std::string&, const std::string&, const std::string&, int, Millis) override {
        refuse();
    }
    void xack(const std::string&, const std::string&, const std::string&) override { refuse(); }
    std::vector<StreamEntry> xrange(const std::string&) override { refuse(); }
    void wait_readers_blocked(int, Millis) override { refuse(); }
};

// One role's history, written by its tasks' threads as well: one record at a time.
class LockedHistory : public History {
public:
    explicit LockedHistory(History& inner) : m_inner(inner) {}
    void record(HistoryRecord r) override {
        std::lock_guard<std::mutex> lock(m_mu);
        m_inner.record(std::move(r));
    }

private:
    History& m_inner;
    std::mutex m_mu;
};

// A role's tasks (S3's workers) as threads of its process, each with its own Redis link (named by
// the task's actor, so CLIENT KILL of the trial's clients reaches it too), PostgreSQL session,
// clock and generator: hiredis and libpqxx connections are not shared between threads. A SIGKILL
// of the role process ends them with it.
class ThreadTasks : public Tasks {
public:
    ThreadTasks(const RoleConfig& c, History& history) : m_c(c), m_history(history) {}
    ~ThreadTasks() override {
        // Only when the role failed: the role has told its tasks to stop (Fanout::abort).
        for (auto& t : m_threads)
            if (t.joinable()) t.join();
    }
    void spawn(const std::string& actor, Body body) override {
        m_threads.emplace_back([this, actor, body = std::move(body)] {
            try {
                const RedisNamespace ns{m_c.key_prefix};
                RedisLink redis(m_c.redis, ns, m_c.barrier_prefix, m_c.redis_sentinels, m_c.redis_master_name, actor);
                LinkKv kv(redis);
                LinkStream stream(redis);
                PgSession pg(m_c.pg, m_c.schema);
                RealOrderStore orders(pg);
                RealOutbox outbox(pg);
                RealClock clock;
                SeededRng rng(derive_seed(m_c.seed, "task:" + actor));
                RolePorts ports{clock, rng, stream, kv, orders, outbox, m_history, nullptr, nullptr};
                body(ports);
            } catch (const std::exception& e) {
                std::lock_guard<std::mutex> lock(m_mu);
                if (!m_error) m_error = std::make_exception_ptr(std::runtime_error(actor + ": " + e.what()));
            } catch (...) {
                std::lock_guard<std::mutex> lock(m_mu);
                if (!m_error) m_error = std::current_exception();
            }
        });
    }
    void join_all() override {
        for (auto& t : m_threads)
            if (t.joinable()) t.join();
        m_threads.clear();
        std::lock_guard<std::mutex> lock(m_mu);
        if (m_error) std::rethrow_exception(m_error);
    }
    bool failed() override {
        std::lock_guard<std::mutex> lock(m_mu);
        return m_error != nullptr;
    }

private:
    const RoleConfig& m_c;
    History& m_history;
    std::vector<std::thread> m_threads;
    std::mutex m_mu;
    std::exception_ptr m_error;
};

// The role on its ports: the Kv (and, for a stream role, the Stream) over one RedisLink, which
// finds the primary again after a restart or, through Sentinel, after a failover; an idempotency
// client gets the orders table and no stream.
void run_role_on_ports(const RoleConfig& c) {
    const RedisNamespace ns{c.key_prefix};
    auto run = [&](PgSession& pg, Stream& stream, Kv& kv, OrderTable* table) {
        RealClock clock;
        SeededRng rng(c.seed);
        RealOrderStore orders(pg);
        RealOutbox outbox(pg);
        FileHistory file(c.history_path);
        TrialHistory trial_history(file, c.trial);
        LockedHistory history(trial_history);
        ThreadTasks tasks(c, history);
        RolePorts ports{clock, rng, stream, kv, orders, outbox, history, table, &tasks};
        run_role(c.role, c.actor, c.settings, ports, Millis{c.barrier_timeout_ms});
    };
    if (!c.redis_cluster.empty()) {
        // S2 on the lab's Redis Cluster: every key on its slot's master, MOVED/ASK followed.
        ClusterClient cluster(c.redis_cluster, ClusterClientOptions::following(ns, c.barrier_prefix, c.actor));
        ClusterStream stream(cluster);
        ClusterKv kv(cluster);
        PgSession pg(c.pg, c.schema);
        run(pg, stream, kv, nullptr);
        return;
    }
    // Named by the actor (CLIENT SETNAME), so the nemesis can drop one role's connections (drop_link).
    RedisLink redis(c.redis, ns, c.barrier_prefix, c.redis_sentinels, c.redis_master_name, c.actor);
    LinkKv kv(redis);
    if (c.role == "idem_client") {
        PgSession pg(c.pg, c.schema);
        RealOrderTable table(pg);
        NoStream stream;
        run(pg, stream, kv, &table);
        return;
    }
    // A stream lab's producer only publishes: its session connects if a statement ever comes.
    PgSession pg(c.pg, c.schema, c.role == "producer" ? PgConnect::on_first_use : PgConnect::now);
    LinkStream stream(redis);
    run(pg, stream, kv, nullptr);
}

}  // namespace

namespace {

// Passwords never go into the config file in the run's temp dir: each "password" value is taken out
// of the JSON (left "") and handed to the role in its environment, keyed by its JSON pointer. A
// process's environment is readable only by its own user; its argv and a file may not be.

void take_passwords(nlohmann::json& j, const std::string& at, nlohmann::json& secrets) {
    if (j.is_object()) {
        for (auto& [key, value] : j.items()) {
            const std::string here = at + "/" + key;  // no key here holds '~' or '/'
            if (key == "password" && value.is_string()) {
                if (!value.get<std::string>().empty()) secrets[here] = value;
                value = "";
            } else {
                take_passwords(value, here, secrets);
            }
        }
    } else if (j.is_array()) {
        for (size_t i = 0; i < j.size(); ++i) take_passwords(j[i], at + "/" + std::to_string(i), secrets);
    }
}

}  // namespace

SplitRoleConfig split_role_config(const RoleConfig& c) {
    SplitRoleConfig out;
    out.file = role_config_to_json(c);
    nlohmann::json secrets = nlohmann::json::object();
    take_passwords(out.file, "", secrets);
    out.secrets = secrets.dump();
    return out;
}

RoleConfig join_role_config(nlohmann::json file, const std::string& secrets) {
    if (!secrets.empty()) {
        const nlohmann::json passwords = nlohmann::json::parse(secrets);
        for (const auto& [pointer, value] : passwords.items()) file[nlohmann::json::json_pointer(pointer)] = value;
    }
    return role_config_from_json(file);
}

int run_role_process(const std::string& config_path) {
    try {
        std::ifstream in(config_path);
        if (!in) {
            std::cerr << "relab role: cannot read " << config_path << "\n";
            return 2;
        }
        const char* secrets = std::getenv(k_role_secrets_env);
        const RoleConfig c = join_role_config(nlohmann::json::parse(in), secrets ? secrets : "");
        ::unsetenv(k_role_secrets_env);
        run_role_on_ports(c);
        // The role's memory high-water mark, for the load labs' report (read from its stdout file).
        // VmHWM, not getrusage: ru_maxrss keeps the forking parent's size across exec.
        std::ifstream status("/proc/self/status");
        for (std::string line; std::getline(status, line);)
            if (line.rfind("VmHWM:", 0) == 0) std::cout << "peak_rss_kb=" << std::stoll(line.substr(6)) << std::endl;
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "relab role: " << e.what() << "\n";
        return 1;
    }
}

namespace {

// A role exec'd as `relab role --config`.
class ExecRole : public RoleProcess {
public:
    explicit ExecRole(const ChildOptions& o) : m_child(o) {}
    int pid() const override { return m_child.pid(); }
    bool running() override { return m_child.running(); }
    bool wait_for(std::chrono::milliseconds d) override { return m_child.wait_for(d); }
    std::optional<int> exit_code() const override { return m_child.exit_code(); }
    void signal(int sig) noexcept override { m_child.signal(sig); }

private:
    ChildProcess m_child;
};

}  // namespace

std::string role_ahead_key(const RoleConfig& c) {
    return nlohmann::json{{"pg", pg_endpoint_json(c.pg)}, {"schema", c.schema}}.dump();
}

std::unique_ptr<RoleProcess> spawn_role_process(RoleSpawner* spawner, const std::string& relab_exe, const RoleConfig& c,
                                                const std::string& dir, const std::string& stderr_path) {
    const std::string config_path = dir + "/" + c.actor + ".json";
    const SplitRoleConfig split = split_role_config(c);
    {
        std::ofstream out(config_path);
        out << split.file.dump();
    }
    std::filesystem::permissions(config_path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    const std::string stdout_path = dir + "/" + c.actor + ".out";
    if (spawner) return spawner->spawn(RoleStart{config_path, split.secrets, stdout_path, stderr_path, role_ahead_key(c)});
    ChildOptions o;
    o.env[k_role_secrets_env] = split.secrets;
    o.exe = relab_exe;
    o.args = {"role", "--config", config_path};
    o.stdout_path = stdout_path;
    o.stderr_path = stderr_path;
    return std::make_unique<ExecRole>(o);
}

std::string tail_of_file(const std::string& path, size_t max_bytes) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string s = ss.str();
    if (s.size() > max_bytes) s = "…" + s.substr(s.size() - max_bytes);
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

}  // namespace relab
