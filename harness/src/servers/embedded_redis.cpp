#include "servers/embedded_redis.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <thread>

#include "process/child_process.h"
#include "process/temp_dir.h"
#include "servers/local_server.h"
#include "util/interrupt.h"

namespace relab {

namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

}  // namespace

struct EmbeddedRedis::Impl {
    TempDir dir{"relab-redis-"};
    std::string data_dir = dir.path();
    RedisEndpoint endpoint;
    std::optional<ChildProcess> child;
    RedisOptions opts;
    int bus_port = 0;  // cluster nodes only

    ~Impl() { stop(); }
    void stop() noexcept {
        if (child) {
            // SIGKILL, not SIGTERM: redis-server acts on SIGTERM in its next serverCron (hz 10:
            // up to 100 ms per server), and its data directory is removed next,
            // so a clean shutdown keeps nothing. Stopped and reaped with its process group. (A
            // lab's restart is crash() and start(), never this.)
            child->terminate(milliseconds(5000), SIGKILL);
            child.reset();
        }
        dir.remove();
    }

    // Starts redis-server on `port` (another free one if it is taken and allow_other_port) and
    // returns once it answers PING.
    void start(int port, bool allow_other_port);

private:
    std::vector<std::pair<std::string, std::string>> settings() const;
    void spawn(const std::string& exe, int port, bool allow_other_port,
               const std::vector<std::pair<std::string, std::string>>& settings);
    bool wait_for_pong(const std::string& exe, int port, bool may_move, const std::vector<std::string>& logs);
    std::string log_path() const { return data_dir + "/redis.log"; }
    std::string out_path() const { return data_dir + "/redis.out"; }
};

void EmbeddedRedis::Impl::start(int port, bool allow_other_port) {
    const std::string exe = find_binary("redis-server");
    const std::vector<std::string> logs{out_path(), log_path()};
    if (auto it = opts.config.find("requirepass"); it != opts.config.end()) endpoint.password = it->second;
    const auto merged = settings();
    for (int attempt = 1;; ++attempt) {
        std::error_code ec;
        std::filesystem::remove(log_path(), ec);  // redis appends; a stale "in use" must not count
        spawn(exe, port, allow_other_port, merged);
        if (wait_for_pong(exe, port, allow_other_port && attempt < local_server::port_attempts, logs)) return;
        port = free_loopback_port();
    }
}

// relab's defaults merged with the scenario's settings, which may not name what relab chooses.
std::vector<std::pair<std::string, std::string>> EmbeddedRedis::Impl::settings() const {
    std::vector<std::pair<std::string, std::string>> defaults{{"save", ""},
                                                              {"appendonly", "no"},
                                                              {"enable-debug-command", "local"},
                                                              {"repl-diskless-sync-delay", "0"}};
    std::vector<std::string> reserved{"port", "bind", "dir", "logfile", "daemonize"};
    if (opts.cluster) {
        // Relative to --dir, so it goes with the data directory.
        defaults.emplace_back("cluster-enabled", "yes");
        defaults.emplace_back("cluster-config-file", "nodes.conf");
        reserved.insert(reserved.end(), {"cluster-enabled", "cluster-config-file", "cluster-port"});
    }
    return local_server::merge_settings(defaults, opts.config, reserved, "redis");
}

// Starts the child on `port`; a cluster node also gets its bus port.
void EmbeddedRedis::Impl::spawn(const std::string& exe, int port, bool allow_other_port,
                                const std::vector<std::pair<std::string, std::string>>& settings) {
    std::vector<std::string> args{"--port", std::to_string(port), "--bind", "127.0.0.1", "--dir",
                                  data_dir, "--logfile", log_path(), "--daemonize", "no"};
    if (opts.cluster) {
        // A restart keeps its bus port: the other nodes know it by that one.
        if (bus_port == 0 || allow_other_port) bus_port = free_loopback_port();
        while (bus_port == port) bus_port = free_loopback_port();
        args.insert(args.end(), {"--cluster-port", std::to_string(bus_port)});
    }
    for (const auto& [name, value] : settings) {
        args.push_back("--" + name);
        args.push_back(value);
    }
    ChildOptions child_opts;
    child_opts.exe = exe;
    child_opts.args = args;
    child_opts.stdout_path = out_path();
    child_opts.stderr_path = out_path();
    child_opts.working_dir = data_dir;
    child_opts.own_process_group = true;
    child.emplace(child_opts);
    endpoint.port = port;
}

// True once the child answers PING. False when it exited because its port was taken and
// `may_move` lets another be tried; throws when it exited otherwise or did not answer in time.
bool EmbeddedRedis::Impl::wait_for_pong(const std::string& exe, int port, bool may_move,
                                        const std::vector<std::string>& logs) {
    const auto deadline = SteadyClock::now() + opts.start_timeout;
    std::string last_error;
    for (;;) {
        throw_if_interrupted();
        if (!child->running()) {
            int code = child->exit_code().value_or(-1);
            child.reset();
            if (may_move && local_server::any_log_contains(logs, "Address already in use")) return false;
            throw EnvironmentError("redis-server (" + exe + ") exited with status " + std::to_string(code) +
                                   " while starting on 127.0.0.1:" + std::to_string(port) +
                                   "; check the redis settings of the scenario, or free the port if it is taken:" +
                                   local_server::log_tails(logs));
        }
        local_server::RedisProbe probe = local_server::probe_redis(endpoint, milliseconds(200));
        // A PONG from a stranger that grabbed the port first does not count.
        if (probe.error.empty() && probe.process_id == child->pid()) return true;
        if (!probe.error.empty()) last_error = probe.error;
        if (SteadyClock::now() >= deadline) {
            child->terminate(milliseconds(2000), SIGTERM);
            child.reset();
            throw EnvironmentError("redis-server on 127.0.0.1:" + std::to_string(port) + " did not answer PING within " +
                                   std::to_string(opts.start_timeout.count()) + " ms (last error: " +
                                   (last_error.empty() ? "another process answers on that port" : last_error) +
                                   "); the machine may be overloaded:" + local_server::log_tails(logs));
        }
        local_server::sleep_poll();
    }
}

EmbeddedRedis::EmbeddedRedis(const RedisOptions& opts) : m_impl(std::make_unique<Impl>()) {
    m_impl->opts = opts;
    m_impl->start(opts.preferred_port > 0 ? opts.preferred_port : free_loopback_port(), true);
}

void EmbeddedRedis::crash() {
    if (!m_impl->child) return;
    m_impl->child->terminate(milliseconds(0), SIGKILL);
    m_impl->child.reset();
}

void EmbeddedRedis::restart() {
    crash();
    m_impl->start(m_impl->endpoint.port, false);
}

EmbeddedRedis::~EmbeddedRedis() = default;

const RedisEndpoint& EmbeddedRedis::endpoint() const { return m_impl->endpoint; }
int EmbeddedRedis::pid() const { return m_impl->child ? m_impl->child->pid() : -1; }
const std::string& EmbeddedRedis::data_dir() const { return m_impl->data_dir; }
int EmbeddedRedis::cluster_bus_port() const { return m_impl->bus_port; }
std::string EmbeddedRedis::log_tail(size_t max_lines) const {
    return local_server::log_tails({m_impl->data_dir + "/redis.out", m_impl->data_dir + "/redis.log"}, max_lines);
}
void EmbeddedRedis::stop() { m_impl->stop(); }

}  // namespace relab
