#include "process/reaper.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "clients/endpoint_json.h"
#include "clients/pg_client.h"
#include "process/proc_stat.h"
#include "clients/redis_client.h"

namespace relab::reaper {

namespace {

// The write end of the pipe and the reaper's pid, in the process that forked it. A child of relab
// that execs gets neither (O_CLOEXEC); a fork that does not exec must not use them, hence the pid
// check in send().
int g_fd = -1;
pid_t g_reaper = -1;
pid_t g_owner = -1;

// One message per write(): a line of JSON shorter than PIPE_BUF, so writes from several threads
// never interleave.
void send(const nlohmann::json& message) noexcept {
    if (g_fd < 0 || ::getpid() != g_owner) return;
    try {
        const std::string line = message.dump() + "\n";
        if (line.size() > PIPE_BUF) {
            std::fprintf(stderr, "relab: reaper message too long (%zu bytes), not registered\n", line.size());
            return;
        }
        ssize_t n;
        do {
            n = ::write(g_fd, line.data(), line.size());
        } while (n < 0 && errno == EINTR);
    } catch (...) {
    }
}

// What is registered and not yet forgotten, keyed by the message's "what" without its "op".
struct Registry {
    std::map<std::string, nlohmann::json> items;
    bool done = false;

    void apply(const nlohmann::json& m) {
        const std::string op = m.at("op");
        if (op == "done") {
            done = true;
            return;
        }
        nlohmann::json what = m;
        what.erase("op");
        const std::string key = what.dump();
        if (op == "add") items[key] = what;
        if (op == "remove") items.erase(key);
    }
};

// How long the reaper waits for the processes it killed to be gone before it clears their keys,
// schemas and dirs. SIGKILL takes effect when the process next runs, which on a busy machine can
// be milliseconds away, and a role that runs on in that time could write a key after the keys were
// deleted or a file into a dir being removed.
constexpr auto k_kill_wait = std::chrono::seconds(5);

void kill_and_wait(const Registry& r) {
    std::vector<std::pair<pid_t, bool>> killed;
    for (const auto& [key, w] : r.items) {
        if (w.at("kind") != "process") continue;
        const pid_t pid = w.at("pid");
        const bool group = w.at("group").get<bool>();
        if (group) ::kill(-pid, SIGKILL);
        ::kill(pid, SIGKILL);
        killed.emplace_back(pid, group);
    }
    const auto deadline = std::chrono::steady_clock::now() + k_kill_wait;
    for (const auto& [pid, group] : killed)
        while ((group ? group_running(pid) : process_running(pid)) && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

void clear_everything(const Registry& r) {
    // Processes first, and gone: a role still writing would put keys back or files into a dir, a
    // server still running keeps its files open.
    kill_and_wait(r);
    for (const auto& [key, w] : r.items) {
        try {
            if (w.at("kind") == "redis") {
                RedisClient c(redis_endpoint_from_json(w.at("endpoint")), std::chrono::milliseconds(3000));
                delete_keys_with_prefix(c, w.at("prefix"));
            } else if (w.at("kind") == "pg") {
                drop_schema(pg_endpoint_from_json(w.at("endpoint")), w.at("schema"));
            }
        } catch (...) {
            // A server that went with relab (its own, killed by the parent-death signal) took its
            // keys and tables with it.
        }
    }
    for (const auto& [key, w] : r.items) {
        if (w.at("kind") != "dir") continue;
        // A file created while remove_all walks the dir makes its last rmdir fail: walk it again.
        const std::string path = w.at("path");
        for (int attempt = 0; attempt < 5; ++attempt) {
            std::error_code ec;
            std::filesystem::remove_all(path, ec);
            if (!std::filesystem::exists(path, ec)) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
}

[[noreturn]] void reaper_main(int fd) {
    ::prctl(PR_SET_NAME, "relab-reaper");
    ::setsid();
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::signal(s, SIG_IGN);
    // Nothing but the pipe and stderr: a copy of one of relab's descriptors (a server's log, a
    // listening socket) held open here would outlive relab.
    for (int other = 0; other < 1024; ++other)
        if (other != fd && other != STDERR_FILENO) ::close(other);
    Registry r;
    std::string buffer;
    char chunk[4096];
    for (;;) {
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        buffer.append(chunk, static_cast<size_t>(n));
        size_t start = 0;
        for (size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
            try {
                r.apply(nlohmann::json::parse(buffer.substr(start, nl - start)));
            } catch (...) {
            }
        }
        buffer.erase(0, start);
    }
    if (!r.done && !r.items.empty()) {
        // A server that does not answer must not keep the reaper forever.
        ::alarm(60);
        clear_everything(r);
    }
    ::_exit(0);
}

}  // namespace

void start() {
    if (g_fd >= 0) return;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        std::perror("relab: cannot start the reaper: pipe2");
        return;
    }
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        std::perror("relab: cannot start the reaper: fork");
        ::close(fds[0]);
        ::close(fds[1]);
        return;
    }
    if (pid == 0) {
        ::close(fds[1]);
        reaper_main(fds[0]);
    }
    ::close(fds[0]);
    g_fd = fds[1];
    g_reaper = pid;
    g_owner = ::getpid();
}

bool running() { return g_fd >= 0 && ::getpid() == g_owner; }

void watch_dir(const std::string& path) { send({{"op", "add"}, {"kind", "dir"}, {"path", path}}); }
void forget_dir(const std::string& path) { send({{"op", "remove"}, {"kind", "dir"}, {"path", path}}); }

void watch_process(pid_t pid, bool group) {
    send({{"op", "add"}, {"kind", "process"}, {"pid", pid}, {"group", group}});
}
void forget_process(pid_t pid) {
    // The key is the message without "op": both spellings of group are forgotten.
    for (bool group : {false, true}) send({{"op", "remove"}, {"kind", "process"}, {"pid", pid}, {"group", group}});
}

void watch_redis_prefix(const RedisEndpoint& ep, const std::string& prefix) {
    send({{"op", "add"}, {"kind", "redis"}, {"endpoint", redis_endpoint_json(ep)}, {"prefix", prefix}});
}
void forget_redis_prefix(const RedisEndpoint& ep, const std::string& prefix) {
    send({{"op", "remove"}, {"kind", "redis"}, {"endpoint", redis_endpoint_json(ep)}, {"prefix", prefix}});
}

void watch_pg_schema(const PgEndpoint& ep, const std::string& schema) {
    send({{"op", "add"}, {"kind", "pg"}, {"endpoint", pg_endpoint_json(ep)}, {"schema", schema}});
}
void forget_pg_schema(const PgEndpoint& ep, const std::string& schema) {
    send({{"op", "remove"}, {"kind", "pg"}, {"endpoint", pg_endpoint_json(ep)}, {"schema", schema}});
}

void finish() noexcept {
    if (!running()) return;
    send({{"op", "done"}});
    ::close(g_fd);
    g_fd = -1;
    int status;
    while (::waitpid(g_reaper, &status, 0) < 0 && errno == EINTR) {
    }
    g_reaper = -1;
}

}  // namespace relab::reaper
