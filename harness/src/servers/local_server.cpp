#include "servers/local_server.h"

#include <arpa/inet.h>
#include <hiredis.h>
#include <netinet/in.h>
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

#include "clients/hiredis_handles.h"
#include "process/child_process.h"

namespace relab {

namespace {

std::string read_file_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
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

}  // namespace

namespace local_server {

std::string one_line(std::string text, const std::string& secret) {
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

std::string log_tails(const std::vector<std::string>& paths, size_t max_lines) {
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

RedisProbe probe_redis(const RedisEndpoint& ep, std::chrono::milliseconds timeout) {
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

}  // namespace local_server

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

}  // namespace relab
