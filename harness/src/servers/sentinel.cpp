#include "servers/sentinel.h"

#include <hiredis.h>
#include <poll.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "process/child_process.h"
#include "clients/hiredis_handles.h"
#include "util/interrupt.h"
#include "clients/redis_client.h"
#include "process/temp_dir.h"

namespace relab {

namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

constexpr int sentinel_port_attempts = 4;  // the first port and 3 replacements

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string tail_lines(const std::string& path, size_t max_lines) {
    std::vector<std::string> lines;
    std::istringstream in(read_text(path));
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) lines.push_back(line);
    std::string out;
    for (size_t i = lines.size() > max_lines ? lines.size() - max_lines : 0; i < lines.size(); ++i)
        out += "\n  " + lines[i];
    return out;
}

// "field value field value ..." (RESP2 maps of SENTINEL MASTER / REPLICAS) as a map.
std::map<std::string, std::string> pairs(const RedisReply& r) {
    std::map<std::string, std::string> out;
    for (size_t i = 0; i + 1 < r.elements.size(); i += 2) out[r.elements[i].str] = r.elements[i + 1].str;
    return out;
}

std::string addr(const RedisEndpoint& ep) { return fmt::format("{}:{}", ep.host, ep.port); }

}  // namespace

struct SentinelSet::Impl {
    struct Node {
        std::string dir;
        std::string conf;
        std::string log;
        std::string out;
        RedisEndpoint endpoint;
        std::optional<ChildProcess> child;
    };

    TempDir dir{"relab-sentinel-"};
    std::string dir_path = dir.path();
    SentinelOptions opts;
    RedisEndpoint primary;
    std::vector<Node> nodes;
    std::vector<RedisEndpoint> endpoints;
    // One SUBSCRIBE +switch-master connection per sentinel (same order as nodes).
    std::vector<RedisContextPtr> subscriptions;
    struct Switch {
        std::string payload;
        std::string sentinel;  // the first to publish it
        SteadyClock::time_point at;  // when it was read
    };
    std::vector<Switch> switches;  // every distinct +switch-master, in the order read

    ~Impl() { stop(); }
    void stop() noexcept {
        subscriptions.clear();
        // SIGKILL, as EmbeddedRedis::stop: a sentinel too waits for its serverCron to act on
        // SIGTERM, and its folder is removed next.
        for (auto& n : nodes)
            if (n.child) {
                n.child->terminate(milliseconds(5000), SIGKILL);
                n.child.reset();
            }
        dir.remove();
    }

    std::string logs(size_t max_lines) const {
        std::string out;
        for (const auto& n : nodes) {
            std::string text = tail_lines(n.out, max_lines) + tail_lines(n.log, max_lines);
            out += fmt::format("\n--- sentinel {}:{}", addr(n.endpoint), text.empty() ? " (no log output)" : text);
        }
        return out.empty() ? "\n(no sentinel started)" : out;
    }

    void start_node(size_t index);
    void write_conf(const Node& n, int port) const;
    void spawn(Node& n, const std::string& exe, int port);
    bool wait_until_up(Node& n, const std::string& exe, int port, bool may_move);
    std::optional<std::string> not_ours(const Node& n) const;
    void tune(Node& n);
    void wait_until_all_see_everything(int replicas);
    void subscribe();
    void pump(milliseconds wait);
};

void SentinelSet::Impl::start_node(size_t index) {
    const std::string exe = find_binary("redis-server");
    Node& n = nodes[index];
    n.dir = fmt::format("{}/s{}", dir_path, index + 1);
    std::filesystem::create_directories(n.dir);
    n.conf = n.dir + "/sentinel.conf";
    n.log = n.dir + "/sentinel.log";
    n.out = n.dir + "/sentinel.out";
    int port = free_loopback_port();
    for (int attempt = 1;; ++attempt) {
        write_conf(n, port);
        spawn(n, exe, port);
        if (wait_until_up(n, exe, port, attempt < sentinel_port_attempts)) return;
        port = free_loopback_port();
    }
}

// The node's config, monitoring the primary; readable by its owner only (it may hold the password).
void SentinelSet::Impl::write_conf(const Node& n, int port) const {
    {
        // Sentinel rewrites this file as it learns (replicas, other sentinels, epochs).
        std::ofstream conf(n.conf, std::ios::trunc);
        conf << "port " << port << "\n"
             << "bind 127.0.0.1\n"
             << "daemonize no\n"
             << "dir \"" << n.dir << "\"\n"
             << "logfile \"" << n.log << "\"\n"
             << "sentinel monitor " << opts.master_name << " " << primary.host << " " << primary.port << " "
             << opts.quorum << "\n"
             << "sentinel down-after-milliseconds " << opts.master_name << " " << opts.down_after.count() << "\n"
             << "sentinel failover-timeout " << opts.master_name << " " << opts.failover_timeout.count() << "\n"
             << "sentinel parallel-syncs " << opts.master_name << " 1\n";
        if (!primary.password.empty())
            conf << "sentinel auth-pass " << opts.master_name << " " << primary.password << "\n";
        if (!conf)
            throw EnvironmentError("cannot write the sentinel config " + n.conf);
    }
    std::filesystem::permissions(n.conf, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

void SentinelSet::Impl::spawn(Node& n, const std::string& exe, int port) {
    std::error_code ec;
    std::filesystem::remove(n.log, ec);  // a stale "in use" must not count
    ChildOptions o;
    o.exe = exe;
    o.args = {n.conf, "--sentinel"};
    o.stdout_path = n.out;
    o.stderr_path = n.out;
    o.working_dir = n.dir;
    o.own_process_group = true;
    n.child.emplace(o);
    n.endpoint = RedisEndpoint{};
    n.endpoint.port = port;
}

// True once the node answers as a sentinel. False when it exited because its port was taken and
// `may_move` lets another be tried; throws when it exited otherwise or did not answer in time.
bool SentinelSet::Impl::wait_until_up(Node& n, const std::string& exe, int port, bool may_move) {
    const auto deadline = SteadyClock::now() + opts.start_timeout;
    for (;;) {
        throw_if_interrupted();
        if (!n.child->running()) {
            const int code = n.child->exit_code().value_or(-1);
            n.child.reset();
            const std::string log = read_text(n.log) + read_text(n.out);
            if (log.find("Address already in use") != std::string::npos && may_move) return false;
            throw EnvironmentError(fmt::format(
                "redis-server --sentinel ({}) exited with status {} while starting on 127.0.0.1:{}; Sentinel "
                "comes with redis-server (apt-get install -y redis-server), check its log:{}",
                exe, code, port, logs(15)));
        }
        const std::optional<std::string> last_error = not_ours(n);
        if (!last_error) return true;
        if (SteadyClock::now() >= deadline) {
            n.child->terminate(milliseconds(2000), SIGTERM);
            n.child.reset();
            throw EnvironmentError(fmt::format(
                "redis-server --sentinel on 127.0.0.1:{} did not answer within {} ms (last error: {}); the "
                "machine may be overloaded:{}",
                port, opts.start_timeout.count(), *last_error, logs(15)));
        }
        std::this_thread::sleep_for(milliseconds(20));
    }
}

// Why the node's port does not answer as our sentinel yet; nullopt once it does. A stranger that
// grabbed the port first does not count.
std::optional<std::string> SentinelSet::Impl::not_ours(const Node& n) const {
    try {
        RedisClient c(n.endpoint, milliseconds(200));
        const auto info = parse_info(c.call({"INFO", "server"}).str);
        const auto pid = info.find("process_id");
        const auto mode = info.find("redis_mode");
        if (pid != info.end() && std::stoll(pid->second) == n.child->pid() && mode != info.end() &&
            mode->second == "sentinel")
            return std::nullopt;
        return "another process answers on that port";
    } catch (const RedisError& e) {
        return e.what();
    }
}

void SentinelSet::Impl::tune(Node& n) {
    RedisClient c(n.endpoint, milliseconds(2000));
    const RedisReply r = c.command({"SENTINEL", "DEBUG", "info-period", std::to_string(opts.info_period.count()),
                                    "publish-period", std::to_string(opts.publish_period.count()), "ping-period",
                                    std::to_string(opts.ping_period.count())});
    if (r.is_error())
        throw EnvironmentError(fmt::format("sentinel {} refused SENTINEL DEBUG ({}); relab's failover labs need "
                                           "Redis 7.0 or later",
                                           addr(n.endpoint), r.str));
}

void SentinelSet::Impl::wait_until_all_see_everything(int replicas) {
    const auto deadline = SteadyClock::now() + opts.start_timeout;
    const int others = static_cast<int>(nodes.size()) - 1;
    std::string missing;
    for (;;) {
        throw_if_interrupted();
        missing.clear();
        for (auto& n : nodes) {
            if (!n.child->running())
                throw EnvironmentError(fmt::format("sentinel {} exited with status {} while the sentinels met:{}",
                                                   addr(n.endpoint), n.child->exit_code().value_or(-1), logs(15)));
            try {
                RedisClient c(n.endpoint, milliseconds(500));
                const auto m = pairs(c.call({"SENTINEL", "MASTER", opts.master_name}));
                const auto field = [&](const std::string& k) {
                    auto it = m.find(k);
                    return it == m.end() ? std::string() : it->second;
                };
                int linked = 0;
                for (const auto& r : c.call({"SENTINEL", "REPLICAS", opts.master_name}).elements) {
                    const auto s = pairs(r);
                    if (s.count("flags") && s.at("flags") == "slave" && s.count("master-link-status") &&
                        s.at("master-link-status") == "ok")
                        ++linked;
                }
                if (field("flags") != "master" || linked < replicas || std::atoi(field("num-other-sentinels").c_str()) < others)
                    missing += fmt::format(" {} sees the primary as '{}', {} of {} replicas linked, {} of {} other sentinels;",
                                           addr(n.endpoint), field("flags"), linked, replicas,
                                           field("num-other-sentinels"), others);
            } catch (const RedisError& e) {
                missing += fmt::format(" {}: {};", addr(n.endpoint), e.what());
            }
        }
        if (missing.empty()) return;
        if (SteadyClock::now() >= deadline)
            throw EnvironmentError(fmt::format("the sentinels did not all see the primary {}, its replicas and each "
                                               "other within {} ms:{}{}",
                                               primary.display(), opts.start_timeout.count(), missing, logs(15)));
        std::this_thread::sleep_for(milliseconds(20));
    }
}

void SentinelSet::Impl::subscribe() {
    for (auto& n : nodes) {
        timeval tv{2, 0};
        RedisContextPtr ctx(redisConnectWithTimeout(n.endpoint.host.c_str(), n.endpoint.port, tv));
        if (!ctx || ctx->err)
            throw EnvironmentError(fmt::format("cannot connect to sentinel {} to SUBSCRIBE +switch-master: {}",
                                               addr(n.endpoint), ctx ? ctx->errstr : "out of memory"));
        redisSetTimeout(ctx.get(), tv);
        auto* reply = static_cast<redisReply*>(redisCommand(ctx.get(), "SUBSCRIBE +switch-master"));
        const bool ok = reply && reply->type == REDIS_REPLY_ARRAY;
        if (reply) freeReplyObject(reply);
        if (!ok)
            throw EnvironmentError(fmt::format("sentinel {} did not confirm SUBSCRIBE +switch-master: {}",
                                               addr(n.endpoint), ctx->err ? ctx->errstr : "unexpected reply"));
        subscriptions.push_back(std::move(ctx));
    }
}

SentinelSet::SentinelSet(const RedisEndpoint& primary, int replicas, const SentinelOptions& opts)
    : m_impl(std::make_unique<Impl>()) {
    Impl& impl = *m_impl;
    impl.opts = opts;
    impl.primary = primary;
    impl.nodes.resize(static_cast<size_t>(opts.sentinels));
    for (size_t i = 0; i < impl.nodes.size(); ++i) {
        impl.start_node(i);
        impl.tune(impl.nodes[i]);
    }
    for (const auto& n : impl.nodes) impl.endpoints.push_back(n.endpoint);
    impl.wait_until_all_see_everything(replicas);
    impl.subscribe();
}

SentinelSet::SentinelSet(const UserSentinels& user, const RedisEndpoint& primary) : m_impl(std::make_unique<Impl>()) {
    Impl& impl = *m_impl;
    impl.opts.master_name = user.master_name;
    impl.opts.sentinels = static_cast<int>(user.sentinels.size());
    impl.primary = primary;
    for (const auto& ep : user.sentinels) {
        Impl::Node n;
        n.endpoint = ep;
        impl.nodes.push_back(std::move(n));
        impl.endpoints.push_back(ep);
    }
    try {
        RedisClient c(user.sentinels.at(0), milliseconds(2000));
        const auto master = pairs(c.call({"SENTINEL", "MASTER", user.master_name}));
        impl.opts.quorum = std::stoi(master.at("quorum"));
        impl.opts.down_after = milliseconds(std::stoll(master.at("down-after-milliseconds")));
        impl.opts.failover_timeout = milliseconds(std::stoll(master.at("failover-timeout")));
    } catch (const std::exception& e) {
        throw EnvironmentError(fmt::format("sentinel {} did not describe the primary '{}' (SENTINEL MASTER): {}",
                                           addr(user.sentinels.at(0)), user.master_name, e.what()));
    }
    impl.subscribe();
}

SentinelSet::~SentinelSet() = default;

const std::vector<RedisEndpoint>& SentinelSet::endpoints() const { return m_impl->endpoints; }
const std::string& SentinelSet::master_name() const { return m_impl->opts.master_name; }
const SentinelOptions& SentinelSet::options() const { return m_impl->opts; }
const std::string& SentinelSet::dir() const { return m_impl->dir_path; }
std::vector<int> SentinelSet::pids() const {
    std::vector<int> out;
    for (const auto& n : m_impl->nodes)
        if (n.child) out.push_back(n.child->pid());
    return out;
}
std::string SentinelSet::log_tail(size_t max_lines) const { return m_impl->logs(max_lines); }
void SentinelSet::stop() { m_impl->stop(); }

RedisEndpoint SentinelSet::master_addr() const {
    std::string errors;
    for (const auto& ep : m_impl->endpoints) {
        try {
            RedisClient c(ep, milliseconds(1000));
            const RedisReply r = c.call({"SENTINEL", "get-master-addr-by-name", m_impl->opts.master_name});
            if (r.elements.size() != 2) {
                errors += fmt::format(" {}: {};", addr(ep), r.to_string());
                continue;
            }
            RedisEndpoint out = m_impl->primary;
            out.host = r.elements[0].str;
            out.port = std::stoi(r.elements[1].str);
            return out;
        } catch (const RedisError& e) {
            errors += fmt::format(" {}: {};", addr(ep), e.what());
        }
    }
    throw EnvironmentError("no sentinel named the primary of '" + m_impl->opts.master_name + "':" + errors);
}

void SentinelSet::wait_until_all_name(const RedisEndpoint& primary, milliseconds timeout) const {
    const auto deadline = SteadyClock::now() + timeout;
    for (;;) {
        throw_if_interrupted();
        std::string lagging;
        for (const auto& ep : m_impl->endpoints) {
            try {
                RedisClient c(ep, milliseconds(1000));
                const RedisReply r = c.call({"SENTINEL", "get-master-addr-by-name", m_impl->opts.master_name});
                if (r.elements.size() == 2 && r.elements[0].str == primary.host &&
                    r.elements[1].str == std::to_string(primary.port))
                    continue;
                lagging += fmt::format(" {} names {};", addr(ep), r.to_string());
            } catch (const RedisError& e) {
                lagging += fmt::format(" {}: {};", addr(ep), e.what());
            }
        }
        if (lagging.empty()) return;
        if (SteadyClock::now() >= deadline)
            throw EnvironmentError(fmt::format("the sentinels did not all name {} as the primary within {} ms:{}{}",
                                               primary.display(), timeout.count(), lagging, m_impl->logs(15)));
        std::this_thread::sleep_for(milliseconds(10));
    }
}

// Reads what the subscriptions received, waiting up to `wait` for something to arrive. Every
// +switch-master payload is recorded once (each sentinel publishes the same one).
void SentinelSet::Impl::pump(milliseconds wait) {
    if (subscriptions.size() != nodes.size())
        throw std::logic_error("SentinelSet: no +switch-master subscriptions (stopped?)");
    auto drain = [&](size_t i) {
        for (;;) {
            void* raw = nullptr;
            if (redisGetReplyFromReader(subscriptions[i].get(), &raw) != REDIS_OK)
                throw EnvironmentError(fmt::format("the +switch-master subscription to sentinel {} failed: {}",
                                                   addr(nodes[i].endpoint), subscriptions[i]->errstr));
            if (!raw) return;
            std::unique_ptr<redisReply, void (*)(void*)> reply(static_cast<redisReply*>(raw), freeReplyObject);
            if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 3 || reply->element[2]->type != REDIS_REPLY_STRING)
                continue;
            const std::string payload(reply->element[2]->str, reply->element[2]->len);
            if (std::none_of(switches.begin(), switches.end(), [&](const Switch& w) { return w.payload == payload; }))
                switches.push_back({payload, addr(nodes[i].endpoint), SteadyClock::now()});
        }
    };
    for (size_t i = 0; i < subscriptions.size(); ++i) drain(i);
    std::vector<pollfd> fds;
    for (const auto& s : subscriptions) fds.push_back({s->fd, POLLIN, 0});
    const int n = ::poll(fds.data(), fds.size(), static_cast<int>(wait.count()));
    if (n <= 0) return;  // nothing yet, or EINTR: the caller looks again
    for (size_t i = 0; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        if (redisBufferRead(subscriptions[i].get()) != REDIS_OK)
            throw EnvironmentError(fmt::format("the +switch-master subscription to sentinel {} was lost ({}):{}",
                                               addr(nodes[i].endpoint), subscriptions[i]->errstr, logs(15)));
        drain(i);
    }
}

MasterSwitch SentinelSet::wait_for_switch_master(const RedisEndpoint& old, milliseconds timeout,
                                                  SteadyClock::time_point since) {
    Impl& impl = *m_impl;
    const auto deadline = SteadyClock::now() + timeout;
    for (;;) {
        throw_if_interrupted();
        for (const auto& w : impl.switches) {
            // "<name> <old ip> <old port> <new ip> <new port>"
            std::istringstream in(w.payload);
            std::string name, old_ip, new_ip;
            int old_port = 0, new_port = 0;
            in >> name >> old_ip >> old_port >> new_ip >> new_port;
            if (!in || name != impl.opts.master_name || old_ip != old.host || old_port != old.port) continue;
            MasterSwitch out;
            out.primary = old;
            out.primary.host = new_ip;
            out.primary.port = new_port;
            out.ms = std::chrono::duration<double, std::milli>(w.at - since).count();
            out.sentinel = w.sentinel;
            out.method = "SUBSCRIBE +switch-master";
            out.message = w.payload;
            return out;
        }
        const auto now = SteadyClock::now();
        if (now >= deadline) {
            std::string others;
            for (const auto& w : impl.switches) others += " '" + w.payload + "'";
            throw EnvironmentError(fmt::format(
                "no sentinel published +switch-master for the primary {} within {} ms{}; the sentinels' logs say "
                "why (-failover-abort-*, +tilt):{}",
                old.display(), timeout.count(), others.empty() ? "" : " (other switches seen:" + others + ")",
                impl.logs(20)));
        }
        impl.pump(std::clamp(std::chrono::duration_cast<milliseconds>(deadline - now), milliseconds(1), milliseconds(50)));
    }
}

std::vector<std::string> SentinelSet::switches() {
    m_impl->pump(milliseconds(0));
    std::vector<std::string> out;
    for (const auto& w : m_impl->switches) out.push_back(w.payload);
    return out;
}

}  // namespace relab
