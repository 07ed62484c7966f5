#include "servers/servers.h"

#include <arpa/inet.h>
#include <hiredis.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <pqxx/pqxx>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "process/child_process.h"
#include "clients/hiredis_handles.h"
#include "clients/redis_client.h"
#include "util/interrupt.h"
#include "process/proc_stat.h"
#include "process/temp_dir.h"

namespace relab {

namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

constexpr milliseconds poll_interval{20};
constexpr int port_attempts = 4;  // the first port and 3 replacements

// ---------------------------------------------------------------- URLs

// The URL with everything between "://" and the last '@' replaced, for error messages.
std::string mask_url(const std::string& url) {
    auto scheme_end = url.find("://");
    if (scheme_end == std::string::npos) return url.find('@') == std::string::npos ? url : "(URL hidden)";
    auto at = url.rfind('@');
    if (at == std::string::npos || at < scheme_end) return url;
    return url.substr(0, scheme_end + 3) + "***" + url.substr(at);
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

// Decodes %XX escapes; nullopt on a malformed one.
std::optional<std::string> percent_decode(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '%') {
            out.push_back(s[i]);
            continue;
        }
        int hi = i + 2 < s.size() ? hex_value(s[i + 1]) : -1;
        int lo = i + 2 < s.size() ? hex_value(s[i + 2]) : -1;
        if (hi < 0 || lo < 0) return std::nullopt;
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
    }
    return out;
}

struct UrlParts {
    std::string user;
    std::string password;
    std::string host;
    int port = 0;
    std::string path;  // after the '/' following host[:port], decoded
};

// scheme://[user[:password]@]host[:port][/path]; percent-escapes decoded in user and password.
UrlParts split_url(const std::string& url, const std::vector<std::string>& schemes, int default_port,
                   const std::string& expected) {
    auto fail = [&](const std::string& why) -> EnvironmentError {
        return EnvironmentError("bad URL " + mask_url(url) + ": " + why + " (expected " + expected + ")");
    };
    auto decode = [&](const std::string& s) {
        auto decoded = percent_decode(s);
        if (!decoded) throw fail("bad percent-escape");
        return *decoded;
    };

    auto scheme_end = url.find("://");
    if (scheme_end == std::string::npos) throw fail("no scheme");
    std::string scheme = url.substr(0, scheme_end);
    std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (std::find(schemes.begin(), schemes.end(), scheme) == schemes.end())
        throw fail("unsupported scheme '" + scheme + "'");
    std::string rest = url.substr(scheme_end + 3);

    UrlParts parts;
    // The last '@' ends the user info, so an unescaped '@' in a password still works.
    if (auto at = rest.rfind('@'); at != std::string::npos) {
        std::string userinfo = rest.substr(0, at);
        rest = rest.substr(at + 1);
        auto colon = userinfo.find(':');
        parts.user = decode(userinfo.substr(0, colon));
        if (colon != std::string::npos) parts.password = decode(userinfo.substr(colon + 1));
    }
    auto host_end = rest.find_first_of("/?#");
    std::string hostport = rest.substr(0, host_end);
    std::string tail = host_end == std::string::npos ? "" : rest.substr(host_end);
    if (!tail.empty() && tail[0] != '/') throw fail("query parameters are not supported");
    if (!tail.empty()) parts.path = tail.substr(1);
    if (parts.path.find_first_of("?#") != std::string::npos)
        throw fail("query parameters are not supported");
    parts.path = decode(parts.path);

    std::string port_text;
    if (!hostport.empty() && hostport[0] == '[') {
        auto close = hostport.find(']');
        if (close == std::string::npos) throw fail("unclosed '[' in the host");
        parts.host = hostport.substr(1, close - 1);
        std::string after = hostport.substr(close + 1);
        if (!after.empty()) {
            if (after[0] != ':') throw fail("junk after the host");
            port_text = after.substr(1);
        }
    } else {
        auto colon = hostport.find(':');
        parts.host = hostport.substr(0, colon);
        if (colon != std::string::npos) port_text = hostport.substr(colon + 1);
    }
    if (parts.host.empty()) throw fail("no host");
    parts.port = default_port;
    if (!port_text.empty()) {
        bool digits = port_text.size() <= 5 &&
                      std::all_of(port_text.begin(), port_text.end(),
                                  [](unsigned char c) { return std::isdigit(c); });
        int port = digits ? std::stoi(port_text) : 0;
        if (port < 1 || port > 65535) throw fail("bad port '" + port_text + "'");
        parts.port = port;
    }
    return parts;
}

std::string host_for_url(const std::string& host) {
    return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

std::string quote_conninfo(const std::string& value) {
    std::string out = "'";
    for (char c : value) {
        if (c == '\\' || c == '\'') out.push_back('\\');
        out.push_back(c);
    }
    return out + "'";
}

// ---------------------------------------------------------------- helpers

// Multi-line client messages on one line, without the password should a library echo it.
std::string one_line(std::string text, const std::string& secret = {}) {
    if (!secret.empty())
        for (size_t pos; (pos = text.find(secret)) != std::string::npos;) text.replace(pos, secret.size(), "***");
    std::string out;
    bool space = false;
    for (char c : text) {
        if (std::isspace(static_cast<unsigned char>(c))) {
            space = !out.empty();
        } else {
            if (space) out.push_back(' ');
            space = false;
            out.push_back(c);
        }
    }
    if (!out.empty()) out[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(out[0])));
    return out;
}

std::string read_file_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The last lines of the logs that exist, each prefixed with the log's name.
std::string log_tails(const std::vector<std::string>& paths, size_t max_lines = 15) {
    std::string out;
    for (const auto& path : paths) {
        std::string text = read_file_text(path);
        std::vector<std::string> lines;
        std::istringstream in(text);
        for (std::string line; std::getline(in, line);)
            if (!line.empty()) lines.push_back(line);
        if (lines.empty()) continue;
        out += "\n--- last lines of " + std::filesystem::path(path).filename().string() + ":";
        for (size_t i = lines.size() > max_lines ? lines.size() - max_lines : 0; i < lines.size(); ++i)
            out += "\n  " + lines[i];
    }
    return out.empty() ? "\n(no log output)" : out;
}

bool any_log_contains(const std::vector<std::string>& paths, const std::string& needle) {
    return std::any_of(paths.begin(), paths.end(),
                       [&](const std::string& p) { return read_file_text(p).find(needle) != std::string::npos; });
}

void sleep_poll() { std::this_thread::sleep_for(poll_interval); }

struct RedisProbe {
    std::string error;       // empty: the server answered PONG
    long long process_id = 0;  // from INFO server
};

// Connects, AUTH/SELECT as the endpoint says, PING, and reads the server's pid.
RedisProbe probe_redis(const RedisEndpoint& ep, milliseconds timeout) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
    RedisContextPtr ctx(redisConnectWithTimeout(ep.host.c_str(), ep.port, tv));
    if (!ctx) return {"cannot allocate a redis context"};
    if (ctx->err) return {one_line(ctx->errstr)};
    redisSetTimeout(ctx.get(), tv);
    auto command = [&](const std::vector<std::string>& args) -> std::pair<RedisReplyPtr, std::string> {
        RedisReplyPtr reply = command_argv(ctx.get(), args);
        if (!reply) return {nullptr, one_line(ctx->errstr[0] ? ctx->errstr : "no reply")};
        if (reply->type == REDIS_REPLY_ERROR)
            return {nullptr, args[0] + ": " + std::string(reply->str, reply->len)};
        return {std::move(reply), ""};
    };
    if (!ep.password.empty())
        if (auto [r, err] = command({"AUTH", ep.password}); !err.empty()) return {one_line(err, ep.password)};
    if (ep.db != 0)
        if (auto [r, err] = command({"SELECT", std::to_string(ep.db)}); !err.empty()) return {err};
    auto [pong, err] = command({"PING"});
    if (!err.empty()) return {err};
    if (pong->type != REDIS_REPLY_STATUS || std::string(pong->str, pong->len) != "PONG")
        return {"PING did not answer PONG"};
    RedisProbe probe;
    auto [info, info_err] = command({"INFO", "server"});
    if (info && info->type == REDIS_REPLY_STRING) {
        std::string text(info->str, info->len);
        if (auto pos = text.find("process_id:"); pos != std::string::npos)
            probe.process_id = std::atoll(text.c_str() + pos + 11);
    }
    return probe;
}

// "" when a session could run SELECT 1, else the client's message (password removed).
std::string probe_pg(const PgEndpoint& ep, int connect_timeout_s) {
    try {
        pqxx::connection conn(ep.conninfo() + " connect_timeout=" + std::to_string(connect_timeout_s));
        pqxx::nontransaction tx(conn);
        tx.exec("SELECT 1");
        return "";
    } catch (const std::exception& e) {
        return one_line(e.what(), ep.password);
    }
}

// Fixed settings first, then the caller's, which replace a default of the same name. Names that
// relab chooses itself are refused.
std::vector<std::pair<std::string, std::string>> merge_settings(
    std::vector<std::pair<std::string, std::string>> defaults,
    const std::map<std::string, std::string>& config, const std::vector<std::string>& reserved,
    const std::string& server) {
    for (const auto& [key, value] : config) {
        std::string name = key;
        while (!name.empty() && name[0] == '-') name.erase(0, 1);
        if (std::find(reserved.begin(), reserved.end(), name) != reserved.end())
            throw std::invalid_argument(server + " setting '" + name +
                                        "' is chosen by relab and cannot be configured");
        auto it = std::find_if(defaults.begin(), defaults.end(), [&](const auto& d) { return d.first == name; });
        if (it != defaults.end())
            it->second = value;
        else
            defaults.emplace_back(name, value);
    }
    return defaults;
}

std::vector<int> version_key(const std::string& name) {
    std::vector<int> key;
    std::istringstream in(name);
    for (std::string part; std::getline(in, part, '.');) {
        if (part.empty() || !std::all_of(part.begin(), part.end(), [](unsigned char c) { return std::isdigit(c); }))
            return {};
        key.push_back(std::stoi(part));
    }
    return key;
}

std::string current_user_name() {
    if (struct passwd* pw = ::getpwuid(::geteuid())) return pw->pw_name;
    if (const char* u = std::getenv("USER")) return u;
    throw EnvironmentError("cannot determine the name of the current user (uid " +
                           std::to_string(::geteuid()) + ")");
}

}  // namespace

// ---------------------------------------------------------------- endpoints

std::string RedisEndpoint::display() const {
    return "redis://" + std::string(password.empty() ? "" : ":***@") + host_for_url(host) + ":" +
           std::to_string(port) + "/" + std::to_string(db);
}

std::string PgEndpoint::conninfo() const {
    std::string out;
    auto add = [&](const char* key, const std::string& value) {
        if (value.empty()) return;
        if (!out.empty()) out += ' ';
        out += std::string(key) + "=" + quote_conninfo(value);
    };
    add("host", host);
    add("port", port > 0 ? std::to_string(port) : "");
    add("user", user);
    add("password", password);
    add("dbname", dbname);
    return out;
}

std::string PgEndpoint::display() const {
    std::string userinfo = user;
    if (!password.empty()) userinfo += ":***";
    if (!userinfo.empty()) userinfo += "@";
    return "postgresql://" + userinfo + host_for_url(host) + ":" + std::to_string(port) + "/" + dbname;
}

RedisEndpoint parse_redis_url(const std::string& url) {
    const std::string expected = "redis://[:password@]host[:port][/db]";
    UrlParts parts = split_url(url, {"redis"}, 6379, expected);
    if (!parts.user.empty() && parts.user != "default")
        throw EnvironmentError("bad URL " + mask_url(url) +
                               ": ACL user names other than 'default' are not supported (expected " +
                               expected + ")");
    RedisEndpoint ep;
    ep.host = parts.host;
    ep.port = parts.port;
    ep.password = parts.password;
    if (!parts.path.empty()) {
        bool digits = parts.path.size() <= 4 && std::all_of(parts.path.begin(), parts.path.end(),
                                                            [](unsigned char c) { return std::isdigit(c); });
        if (!digits)
            throw EnvironmentError("bad URL " + mask_url(url) + ": the path must be a database number (expected " +
                                   expected + ")");
        ep.db = std::stoi(parts.path);
    }
    return ep;
}

namespace {

std::vector<std::string> split_commas(const std::string& text) {
    std::vector<std::string> out;
    size_t from = 0;
    for (;;) {
        const size_t comma = text.find(',', from);
        out.push_back(text.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
        if (comma == std::string::npos) return out;
        from = comma + 1;
    }
}

// "host" or "[v6]" without a port gets the default one; "host:port" and "[v6]:port" keep theirs.
std::string with_port(const std::string& host, int port) {
    const bool has_port = host.back() == ']' ? false : host.find(':') != std::string::npos;
    return has_port ? host : host + ":" + std::to_string(port);
}

}  // namespace

RedisUrl parse_redis_topology_url(const std::string& url) {
    const size_t scheme_end = url.find("://");
    std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
    std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    RedisUrl out;
    if (scheme != "redis+sentinel" && scheme != "redis+cluster") {
        out.single = parse_redis_url(url);
        out.password = out.single.password;
        out.db = out.single.db;
        return out;
    }
    const bool sentinel = scheme == "redis+sentinel";
    out.kind = sentinel ? RedisUrl::Kind::sentinel : RedisUrl::Kind::cluster;
    const std::string expected = sentinel ? "redis+sentinel://[:password@]host:port[,host:port...]/master-name[/db]"
                                          : "redis+cluster://[:password@]host:port[,host:port...]";
    auto fail = [&](const std::string& why) {
        return EnvironmentError("bad URL " + mask_url(url) + ": " + why + " (expected " + expected + ")");
    };
    const std::string rest = url.substr(scheme_end + 3);
    const size_t path_at = rest.find('/');
    std::string authority = rest.substr(0, path_at);
    const std::string path = path_at == std::string::npos ? "" : rest.substr(path_at + 1);
    std::string userinfo;
    if (const size_t at = authority.rfind('@'); at != std::string::npos) {
        userinfo = authority.substr(0, at + 1);
        authority = authority.substr(at + 1);
    }
    // Each host through the single-instance parser: the same checks of hosts, ports and passwords.
    for (const std::string& host : split_commas(authority)) {
        if (host.empty()) throw fail("an empty host in the list");
        RedisEndpoint ep;
        try {
            ep = parse_redis_url("redis://" + userinfo + with_port(host, sentinel ? 26379 : 6379));
        } catch (const EnvironmentError&) {
            throw fail("bad host '" + host + "'");
        }
        out.password = ep.password;
        if (sentinel) ep.password.clear();  // the sentinels are asked without the data servers' password
        out.nodes.push_back(ep);
    }
    const size_t slash = path.find('/');
    const std::string db = slash == std::string::npos ? (sentinel ? "" : path) : path.substr(slash + 1);
    if (sentinel) out.master_name = path.substr(0, slash);
    if (sentinel && out.master_name.empty()) throw fail("no master name");
    if (!sentinel && slash != std::string::npos) throw fail("a cluster has no path but its database 0");
    if (!db.empty() && (db.size() > 4 || !std::all_of(db.begin(), db.end(), [](unsigned char c) { return std::isdigit(c); })))
        throw fail("the database must be a number");
    out.db = db.empty() ? 0 : std::stoi(db);
    if (!sentinel && out.db != 0) throw fail("a Redis Cluster has database 0 only");
    return out;
}

PgEndpoint parse_pg_url(const std::string& url) {
    const std::string expected = "postgresql://[user[:password]@]host[:port]/dbname";
    UrlParts parts = split_url(url, {"postgresql", "postgres"}, 5432, expected);
    if (parts.path.empty() || parts.path.find('/') != std::string::npos)
        throw EnvironmentError("bad URL " + mask_url(url) + ": it must name one database (expected " + expected + ")");
    PgEndpoint ep;
    ep.host = parts.host;
    ep.port = parts.port;
    ep.user = parts.user;
    ep.password = parts.password;
    ep.dbname = parts.path;
    return ep;
}

// ---------------------------------------------------------------- binaries and ports

std::string find_binary(const std::string& name) {
    if (auto found = find_on_path(name)) return *found;
    const std::filesystem::path pg_root = "/usr/lib/postgresql";
    std::vector<std::pair<std::vector<int>, std::filesystem::path>> versions;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(pg_root, ec)) {
        auto key = version_key(entry.path().filename().string());
        if (!key.empty()) versions.emplace_back(key, entry.path());
    }
    std::sort(versions.begin(), versions.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [key, dir] : versions) {
        auto candidate = (dir / "bin" / name).string();
        if (is_executable_file(candidate)) return candidate;
    }
    std::string package = name;
    if (name == "redis-server" || name == "redis-cli") package = "redis-server";
    if (name == "initdb" || name == "postgres" || name == "pg_ctl" || name == "psql" || name == "pgbench")
        package = "postgresql";
    throw EnvironmentError(name + " not found on PATH or in /usr/lib/postgresql/*/bin; install it: apt-get install -y " +
                           package);
}

int free_loopback_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw EnvironmentError(std::string("cannot create a socket to find a free port: ") + std::strerror(errno));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    int port = -1;
    int saved_errno = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
        port = ntohs(addr.sin_port);
    else
        saved_errno = errno;
    ::close(fd);
    if (port <= 0)
        throw EnvironmentError(std::string("cannot bind 127.0.0.1:0 to find a free port: ") + std::strerror(saved_errno));
    return port;
}

// ---------------------------------------------------------------- EmbeddedRedis

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
        if (wait_for_pong(exe, port, allow_other_port && attempt < port_attempts, logs)) return;
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
    return merge_settings(defaults, opts.config, reserved, "redis");
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
            if (may_move && any_log_contains(logs, "Address already in use")) return false;
            throw EnvironmentError("redis-server (" + exe + ") exited with status " + std::to_string(code) +
                                   " while starting on 127.0.0.1:" + std::to_string(port) +
                                   "; check the redis settings of the scenario, or free the port if it is taken:" +
                                   log_tails(logs));
        }
        RedisProbe probe = probe_redis(endpoint, milliseconds(200));
        // A PONG from a stranger that grabbed the port first does not count.
        if (probe.error.empty() && probe.process_id == child->pid()) return true;
        if (!probe.error.empty()) last_error = probe.error;
        if (SteadyClock::now() >= deadline) {
            child->terminate(milliseconds(2000), SIGTERM);
            child.reset();
            throw EnvironmentError("redis-server on 127.0.0.1:" + std::to_string(port) + " did not answer PING within " +
                                   std::to_string(opts.start_timeout.count()) + " ms (last error: " +
                                   (last_error.empty() ? "another process answers on that port" : last_error) +
                                   "); the machine may be overloaded:" + log_tails(logs));
        }
        sleep_poll();
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
    return log_tails({m_impl->data_dir + "/redis.out", m_impl->data_dir + "/redis.log"}, max_lines);
}
void EmbeddedRedis::stop() { m_impl->stop(); }

// ---------------------------------------------------------------- EmbeddedPostgres

namespace {

// Gone, or a zombie (its memory, the shared segment included, is released).
bool process_ended(int pid) { return !relab::process_running(pid); }

// postgres from the same installation as initdb: a data directory only fits its own version.
std::string postgres_beside(const std::string& initdb) {
    std::error_code ec;
    std::string postgres = (std::filesystem::canonical(initdb, ec).parent_path() / "postgres").string();
    if (ec || !is_executable_file(postgres)) postgres = find_binary("postgres");
    return postgres;
}

// The user PostgreSQL runs as, and whom to switch to: it refuses to run as root, so under root
// it is RELAB_PG_USER (default "postgres"), who is handed `base`.
std::pair<std::string, std::optional<std::string>> pg_user(const std::string& base) {
    if (::geteuid() != 0) return {current_user_name(), std::nullopt};
    const char* env_user = std::getenv("RELAB_PG_USER");
    const std::string user = env_user && *env_user ? env_user : "postgres";
    struct passwd* pw = ::getpwnam(user.c_str());
    if (!pw)
        throw EnvironmentError(
            "relab runs as root and PostgreSQL refuses to, so it runs PostgreSQL as user '" + user +
            "', which does not exist; create it (useradd --system --create-home " + user +
            "), set RELAB_PG_USER to an existing unprivileged user, or install postgresql "
            "(apt-get install -y postgresql), which creates the user 'postgres'");
    if (::chown(base.c_str(), pw->pw_uid, pw->pw_gid) != 0)
        throw EnvironmentError("cannot hand " + base + " to user " + user + ": " + std::strerror(errno));
    return {user, user};
}

// What each step of starting an embedded PostgreSQL needs.
struct PgStart {
    std::vector<std::pair<std::string, std::string>> settings;  // merged, for -c
    std::string initdb, postgres;                               // the binaries
    std::string base;                                           // the temporary directory: logs, socket
    std::string log;                                            // the postmaster's log
    std::string user;                                           // the server's user
    ChildOptions child;                                         // run as, working directory, own group
    SteadyClock::time_point deadline;                           // for initdb and the first session both
    milliseconds timeout{0};

    EnvironmentError timeout_error(const std::string& what, const std::vector<std::string>& logs) const {
        return EnvironmentError(what + " did not finish within " + std::to_string(timeout.count()) +
                                " ms; the machine may be overloaded:" + log_tails(logs));
    }
};

PgStart pg_start(const PgOptions& opts, std::vector<std::pair<std::string, std::string>> settings,
                 const std::string& initdb, const std::string& postgres, const std::string& base) {
    PgStart start;
    start.settings = std::move(settings);
    start.initdb = initdb;
    start.postgres = postgres;
    start.base = base;
    start.log = base + "/postgres.log";
    std::optional<std::string> run_as;
    std::tie(start.user, run_as) = pg_user(base);
    start.child.run_as_user = run_as;
    start.child.working_dir = base;
    start.child.own_process_group = true;
    start.deadline = SteadyClock::now() + opts.start_timeout;
    start.timeout = opts.start_timeout;
    return start;
}

}  // namespace

struct EmbeddedPostgres::Impl {
    TempDir dir{"relab-pg-"};
    std::string data_dir = dir.path() + "/data";
    PgEndpoint endpoint;
    std::optional<ChildProcess> child;
    ChildOptions postmaster;   // how it was started, for restart()
    int version_num = 0;       // server_version_num
    std::vector<int> stopped;  // the postmaster's children pause() stopped
    bool is_paused = false;

    ~Impl() { stop(); }
    // SIGSTOP the postmaster first, so it forks no new child while its children are listed.
    std::vector<int> freeze() {
        if (!child) return {};
        child->signal(SIGSTOP);
        std::vector<int> kids = relab::children_of(child->pid());
        for (int k : kids) ::kill(k, SIGSTOP);
        return kids;
    }
    void thaw() noexcept {
        for (int k : stopped) ::kill(k, SIGCONT);
        stopped.clear();
        if (child) child->signal(SIGCONT);
        is_paused = false;
    }
    void crash() {
        if (!child) return;
        std::vector<int> kids = freeze();
        for (int k : stopped) kids.push_back(k);
        for (int k : kids) ::kill(k, SIGKILL);
        child->terminate(milliseconds(0), SIGKILL);  // and reaped
        child.reset();
        stopped.clear();
        is_paused = false;
        // A backend still attached to the shared memory would keep the next postmaster from starting.
        const auto deadline = SteadyClock::now() + milliseconds(10000);
        while (!std::all_of(kids.begin(), kids.end(), process_ended)) {
            if (SteadyClock::now() > deadline)
                throw EnvironmentError("PostgreSQL's processes did not end within 10 s of SIGKILL");
            std::this_thread::sleep_for(milliseconds(2));
        }
    }
    void stop() noexcept {
        if (is_paused) thaw();  // a stopped process would never act on SIGQUIT
        if (child) {
            // SIGQUIT is PostgreSQL's immediate shutdown: no shutdown checkpoint. The data directory
            // is deleted next, and the checkpoint (fast shutdown, SIGINT) would fsync every file of
            // the new database for nothing.
            child->terminate(milliseconds(5000), SIGQUIT);
            child.reset();
        }
        dir.remove();
    }

    // Starting, a step each; every step throws EnvironmentError, with the logs, when it fails.
    void init_data_dir(const PgStart& start) const;
    ChildOptions postmaster_options(const PgStart& start, int port) const;
    bool wait_for_sessions(const PgStart& start, int port, bool may_move);
    bool set_up_if_ours(const PgStart& start, int port, bool may_move);
};

EmbeddedPostgres::EmbeddedPostgres(const PgOptions& opts) : m_impl(std::make_unique<Impl>()) {
    Impl& impl = *m_impl;
    const auto settings = merge_settings({{"listen_addresses", "127.0.0.1"}}, opts.config,
                                         {"port", "unix_socket_directories", "data_directory"}, "postgresql");
    const std::string initdb = find_binary("initdb");
    const PgStart start = pg_start(opts, settings, initdb, postgres_beside(initdb), impl.dir.path());
    impl.init_data_dir(start);

    impl.endpoint.host = "127.0.0.1";
    impl.endpoint.user = start.user;
    impl.endpoint.dbname = "postgres";
    int port = opts.preferred_port > 0 ? opts.preferred_port : free_loopback_port();
    for (int attempt = 1;; ++attempt) {
        const ChildOptions o = impl.postmaster_options(start, port);
        impl.child.emplace(o);
        impl.endpoint.port = port;
        const bool may_move = attempt < port_attempts;
        if (!impl.wait_for_sessions(start, port, may_move) || !impl.set_up_if_ours(start, port, may_move)) {
            port = free_loopback_port();
            continue;
        }
        impl.endpoint.dbname = "relab";
        impl.postmaster = o;
        // After a crash the startup process fsyncs every file of the data directory first, one by
        // one; syncfs (PostgreSQL 14+) does it in one call. A setting of the caller's wins.
        if (impl.version_num >= 140000 && !opts.config.count("recovery_init_sync_method")) {
            impl.postmaster.args.push_back("-c");
            impl.postmaster.args.push_back("recovery_init_sync_method=syncfs");
        }
        return;
    }
}

// initdb as the server's user, within the start's deadline.
void EmbeddedPostgres::Impl::init_data_dir(const PgStart& start) const {
    const std::string log = start.base + "/initdb.log";
    ChildOptions o = start.child;
    o.exe = start.initdb;
    o.args = {"-D", data_dir, "-U", start.user, "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"};
    o.stdout_path = log;
    o.stderr_path = log;
    ChildProcess initdb(o);
    for (;;) {
        throw_if_interrupted();
        if (initdb.wait_for(poll_interval)) break;
        if (SteadyClock::now() >= start.deadline) throw start.timeout_error("initdb", {log});
    }
    if (initdb.exit_code() != 0)
        throw EnvironmentError("initdb (" + start.initdb + ") failed with status " +
                               std::to_string(initdb.exit_code().value_or(-1)) + " as user " + start.user + " in " +
                               start.base + "; if the user cannot reach that directory, set TMPDIR to one it can:" +
                               log_tails({log}));
}

// The postmaster on `port`: its socket in the start's directory, the merged settings as -c.
ChildOptions EmbeddedPostgres::Impl::postmaster_options(const PgStart& start, int port) const {
    ChildOptions o = start.child;
    o.exe = start.postgres;
    o.args = {"-D", data_dir, "-p", std::to_string(port), "-k", start.base};
    for (const auto& [name, value] : start.settings) {
        o.args.push_back("-c");
        o.args.push_back(name + "=" + value);
    }
    o.stdout_path = start.log;
    o.stderr_path = start.log;
    return o;
}

// True once the postmaster just started accepts a session. False when it exited because its port
// was taken and `may_move` lets another be tried; throws when it exited otherwise or time ran out.
bool EmbeddedPostgres::Impl::wait_for_sessions(const PgStart& start, int port, bool may_move) {
    for (;;) {
        throw_if_interrupted();
        if (!child->running()) {
            int code = child->exit_code().value_or(-1);
            child.reset();
            if (any_log_contains({start.log}, "Address already in use") && may_move) return false;
            throw EnvironmentError("postgres (" + start.postgres + ") exited with status " + std::to_string(code) +
                                   " while starting on 127.0.0.1:" + std::to_string(port) +
                                   "; check the postgresql settings of the scenario, or free the port if it "
                                   "is taken:" + log_tails({start.log}));
        }
        const std::string last_error = probe_pg(endpoint, 2);
        if (last_error.empty()) return true;
        if (SteadyClock::now() >= start.deadline)
            throw start.timeout_error("postgres start (last error: " + last_error + ")", {start.log});
        sleep_poll();
    }
}

// A stranger on the port would answer too: ours is the one serving our data directory. In ours,
// creates the database relab and reads the version: true. False when a stranger answered and
// `may_move` lets another port be tried (ours is stopped).
bool EmbeddedPostgres::Impl::set_up_if_ours(const PgStart& start, int port, bool may_move) {
    try {
        pqxx::connection conn(endpoint.conninfo());
        pqxx::nontransaction tx(conn);
        auto dir = tx.exec1("SHOW data_directory")[0].as<std::string>();
        if (std::filesystem::weakly_canonical(dir) != std::filesystem::weakly_canonical(data_dir)) {
            child->terminate(milliseconds(5000), SIGQUIT);
            child.reset();
            if (may_move) return false;
            throw EnvironmentError("another PostgreSQL answers on 127.0.0.1:" + std::to_string(port));
        }
        tx.exec0("CREATE DATABASE relab");
        version_num = tx.exec1("SHOW server_version_num")[0].as<int>();
        return true;
    } catch (const pqxx::failure& e) {
        throw EnvironmentError("embedded PostgreSQL at " + endpoint.display() +
                               " answered but CREATE DATABASE relab failed: " + one_line(e.what()) +
                               log_tails({start.log}));
    }
}

void EmbeddedPostgres::crash() { m_impl->crash(); }

void EmbeddedPostgres::restart() {
    Impl& impl = *m_impl;
    impl.crash();
    const std::string log = impl.dir.path() + "/postgres.log";
    impl.child.emplace(impl.postmaster);
    // Crash recovery first: until it is done, connections are refused ("the database system is
    // starting up").
    const auto deadline = SteadyClock::now() + milliseconds(60000);
    std::string last_error;
    for (;;) {
        throw_if_interrupted();
        if (!impl.child->running()) {
            const int code = impl.child->exit_code().value_or(-1);
            impl.child.reset();
            throw EnvironmentError("postgres exited with status " + std::to_string(code) + " while restarting on " +
                                   impl.endpoint.display() + log_tails({log}));
        }
        last_error = probe_pg(impl.endpoint, 2);
        if (last_error.empty()) return;
        if (SteadyClock::now() >= deadline)
            throw EnvironmentError("postgres did not accept connections within 60 s of its restart (last error: " +
                                   last_error + ")" + log_tails({log}));
        std::this_thread::sleep_for(milliseconds(5));
    }
}

bool EmbeddedPostgres::running() const { return m_impl->child.has_value(); }

void EmbeddedPostgres::pause() {
    if (m_impl->is_paused || !m_impl->child) return;
    m_impl->stopped = m_impl->freeze();
    m_impl->is_paused = true;
}

void EmbeddedPostgres::resume() noexcept {
    if (m_impl->is_paused) m_impl->thaw();
}

bool EmbeddedPostgres::paused() const { return m_impl->is_paused; }

EmbeddedPostgres::~EmbeddedPostgres() = default;

const PgEndpoint& EmbeddedPostgres::endpoint() const { return m_impl->endpoint; }
int EmbeddedPostgres::pid() const { return m_impl->child ? m_impl->child->pid() : -1; }
const std::string& EmbeddedPostgres::data_dir() const { return m_impl->data_dir; }
void EmbeddedPostgres::stop() { m_impl->stop(); }

// ---------------------------------------------------------------- start_servers

namespace {

// The primary the user's sentinels name (the first that answers), checked to answer ROLE master.
RedisEndpoint primary_named_by(const RedisUrl& url, const std::string& shown) {
    std::string errors;
    for (const auto& sentinel : url.nodes) try {
            RedisClient c(sentinel, milliseconds(2000));
            const RedisReply r = c.call({"SENTINEL", "get-master-addr-by-name", url.master_name});
            if (r.elements.size() != 2) {
                errors += fmt::format(" {}:{} knows no primary named '{}';", sentinel.host, sentinel.port, url.master_name);
                continue;
            }
            RedisEndpoint primary;
            primary.host = r.elements[0].str;
            primary.port = std::stoi(r.elements[1].str);
            primary.password = url.password;
            primary.db = url.db;
            return primary;
        } catch (const RedisError& e) {
            errors += fmt::format(" {}:{}: {};", sentinel.host, sentinel.port, e.what());
        }
    throw EnvironmentError("no sentinel of " + shown + " named its primary:" + errors +
                           " check the sentinels' addresses and the master name, or drop --redis-url");
}

// The seed nodes, once one of them says the cluster is whole (cluster_state:ok).
std::vector<RedisEndpoint> check_user_cluster(const RedisUrl& url, const std::string& shown) {
    std::string errors;
    for (const auto& seed : url.nodes) try {
            RedisClient c(seed, milliseconds(2000));
            const std::string info = c.call({"CLUSTER", "INFO"}).str;
            if (info.find("cluster_state:ok") != std::string::npos) return url.nodes;
            errors += fmt::format(" {}:{} is not in a whole cluster (cluster_state is not ok);", seed.host, seed.port);
        } catch (const RedisError& e) {
            errors += fmt::format(" {}:{}: {};", seed.host, seed.port, e.what());
        }
    throw EnvironmentError("no seed node of " + shown + " answered for a working Redis Cluster:" + errors +
                           " check the addresses, or drop --redis-url");
}

}  // namespace

ServerSet start_servers(const std::string& redis_url, const std::string& pg_url, const RedisOptions& redis_opts,
                        const PgOptions& pg_opts) {
    ServerSet set;
    // External servers are checked first: a wrong URL fails fast, before anything is started.
    if (!redis_url.empty()) {
        const RedisUrl url = parse_redis_topology_url(redis_url);
        set.redis_url_display = mask_url(redis_url);
        if (url.kind == RedisUrl::Kind::cluster) set.cluster_seeds = check_user_cluster(url, set.redis_url_display);
        if (url.kind == RedisUrl::Kind::sentinel) {
            set.sentinels = url.nodes;
            set.sentinel_master = url.master_name;
        }
        set.redis = url.kind == RedisUrl::Kind::sentinel ? primary_named_by(url, set.redis_url_display) : url.single;
        set.redis_external = url.kind != RedisUrl::Kind::cluster;
    }
    if (set.redis_external) {
        RedisProbe probe = probe_redis(set.redis, milliseconds(5000));
        if (!probe.error.empty())
            throw EnvironmentError("cannot reach redis at " + set.redis.display() + ": " + probe.error +
                                   "; start it or drop --redis-url to let relab start its own");
    }
    if (!pg_url.empty()) {
        set.pg = parse_pg_url(pg_url);
        set.pg_external = true;
        std::string error = probe_pg(set.pg, 5);
        if (!error.empty())
            throw EnvironmentError("cannot reach postgresql at " + set.pg.display() + ": " + error +
                                   "; start it or drop --pg-url to let relab start its own");
    }
    if (!set.redis_external) {
        set.embedded_redis = std::make_unique<EmbeddedRedis>(redis_opts);
        set.redis = set.embedded_redis->endpoint();
    }
    if (!set.pg_external) {
        set.embedded_pg = std::make_unique<EmbeddedPostgres>(pg_opts);
        set.pg = set.embedded_pg->endpoint();
    }
    return set;
}

}  // namespace relab
