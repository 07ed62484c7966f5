#include "process/role_spawner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "process/child_process.h"
#include "clients/endpoint_json.h"
#include "clients/pg_client.h"
#include "process/real_clock.h"
#include "process/reaper.h"
#include "clients/redis_client.h"
#include "process/role_process.h"

namespace relab {

namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

constexpr size_t k_max_message = 1 << 16;
// How long relab waits for the spawner to answer a request: a fork, not a start.
constexpr milliseconds k_answer{10000};

int pidfd_open(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

int pidfd_send_signal(int pidfd, int sig) { return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0)); }

constexpr int k_max_passed = 2;

// One message on a SOCK_SEQPACKET socket, with at most k_max_passed descriptors beside it (-1: none).
bool send_message(int fd, const std::string& text, int pass_fd = -1, int pass_fd2 = -1) {
    iovec iov{const_cast<char*>(text.data()), text.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * k_max_passed)] = {};
    const int fds[k_max_passed] = {pass_fd, pass_fd2};
    const size_t n_fds = pass_fd < 0 ? 0 : pass_fd2 < 0 ? 1 : 2;
    if (n_fds > 0) {
        msg.msg_control = control;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
        cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
        std::memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
    }
    ssize_t n;
    do {
        n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n == static_cast<ssize_t>(text.size());
}

// 1: a message (and passed[0..n_passed) the descriptors beside it, -1 where none came; one not
// asked for is closed); 0: the other end closed; -1: nothing to read now (non-blocking) or an error.
int receive_message(int fd, std::string& text, int* passed, int flags, int n_passed = 1) {
    text.resize(k_max_message);
    iovec iov{text.data(), text.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * k_max_passed)] = {};
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n;
    do {
        n = ::recvmsg(fd, &msg, flags | MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return -1;
    if (n == 0) return 0;
    text.resize(static_cast<size_t>(n));
    for (int i = 0; passed && i < n_passed; ++i) passed[i] = -1;
    int taken = 0;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            const size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < n; ++i) {
                int got = -1;
                std::memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                if (passed && taken < n_passed) passed[taken++] = got;
                else ::close(got);
            }
        }
    return 1;
}

}  // namespace

// What the spawner answered to one request.
struct SpawnReply {
    int pid = -1;
    int pidfd = -1;
    std::string error;
};

struct RoleSpawner::Impl {
    std::string exe;
    std::unique_ptr<ChildProcess> process;
    int fd = -1;                 // relab's end of the socket
    bool gone = false;           // the spawner closed its end or died
    int next_request = 0;
    std::map<int, SpawnReply> replies;  // request -> answer, not yet taken by its role
    std::map<int, int> exits;           // pid -> exit status, as the spawner reported them

    explicit Impl(std::string e) : exe(std::move(e)) {}
    ~Impl() {
        for (auto& [id, r] : replies)
            if (r.pidfd >= 0) ::close(r.pidfd);
        // The spawner reads the end of its socket as "kill every role and go".
        if (fd >= 0) ::close(fd);
        if (process && !process->wait_for(milliseconds(5000))) process->terminate();
    }

    void start() {
        int pair[2];
        if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
            throw EnvironmentError(std::string("cannot start relab's role spawner: socketpair: ") + std::strerror(errno));
        fd = pair[0];
        ChildOptions o;
        o.exe = exe;
        o.args = {"role", "--spawner"};
        o.stdin_fd = pair[1];
        // Bound once in the spawner, not lazily in every role it forks.
        o.env["LD_BIND_NOW"] = "1";
        // Its roles and shells stay in its group: a SIGKILLed relab's reaper kills them with it,
        // also those relab had not heard of yet (a shell, a role whose pid was still on its way).
        o.own_process_group = true;
        try {
            process = std::make_unique<ChildProcess>(o);
        } catch (...) {
            ::close(pair[1]);
            throw;
        }
        ::close(pair[1]);
    }

    EnvironmentError stopped(const std::string& why) {
        const auto code = process->running() ? std::nullopt : process->exit_code();
        return EnvironmentError("relab's role spawner (pid " + std::to_string(process->pid()) + ") " + why +
                                (code ? ", exit status " + std::to_string(*code) : std::string()));
    }

    // Reads one message if one comes within `wait`: an exit status or an answer, kept for whoever
    // asks. False when none came or the spawner is gone.
    bool read(milliseconds wait) {
        if (gone) return false;
        pollfd p{fd, POLLIN, 0};
        int r;
        do {
            r = ::poll(&p, 1, static_cast<int>(wait.count()));
        } while (r < 0 && errno == EINTR);
        if (r <= 0) return false;
        std::string text;
        int passed = -1;
        const int got = receive_message(fd, text, &passed, MSG_DONTWAIT);
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
            gone = true;
            return false;
        }
        if (got < 0) return false;
        const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
        if (j.is_discarded() || !j.is_object()) {
            if (passed >= 0) ::close(passed);
            return true;
        }
        if (j.contains("exit")) {
            exits[j.at("exit").get<int>()] = j.at("status").get<int>();
            return true;
        }
        SpawnReply reply;
        reply.pid = j.value("pid", -1);
        reply.pidfd = passed;
        reply.error = j.value("error", "");
        if (reply.error.empty() && reply.pidfd < 0) reply.error = "the spawner answered without the role's pidfd";
        if (!reply.error.empty() && reply.pidfd >= 0) {
            ::close(reply.pidfd);
            reply.pidfd = -1;
        }
        replies[j.value("id", -1)] = reply;
        return true;
    }

    // Every message sent so far.
    void drain() {
        while (read(milliseconds(0))) {
        }
    }

    // The answer to a request, waited for.
    SpawnReply answer(int id) {
        const auto deadline = SteadyClock::now() + k_answer;
        for (;;) {
            if (auto it = replies.find(id); it != replies.end()) {
                SpawnReply r = it->second;
                replies.erase(it);
                return r;
            }
            if (gone) throw stopped("is gone: it did not answer");
            const auto left = std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now());
            if (left.count() <= 0) throw stopped("did not answer within " + std::to_string(k_answer.count()) + " ms");
            read(left);
        }
    }
};

namespace {

// A role the spawner forks: the request is sent at once, its answer (the pid) read when first
// needed, so the roles of a trial are forked while relab writes the next one's config.
class ForkedRole : public RoleProcess {
public:
    ForkedRole(std::shared_ptr<RoleSpawner::Impl> spawner, int request) : m_spawner(std::move(spawner)), m_request(request) {}
    ~ForkedRole() override {
        try {
            started();
        } catch (const std::exception&) {
            return;  // never started: nothing to stop
        }
        if (running()) {
            signal(SIGTERM);
            if (!wait_for(milliseconds(2000))) {
                signal(SIGKILL);
                wait_for(milliseconds(5000));
            }
        }
        if (m_pidfd >= 0) ::close(m_pidfd);
        reaper::forget_process(m_pid);
    }

    void started() override {
        if (m_pid > 0) return;
        if (!m_failed.empty()) throw EnvironmentError(m_failed);
        SpawnReply r;
        try {
            r = m_spawner->answer(m_request);
        } catch (const EnvironmentError& e) {
            m_failed = e.what();
            throw;
        }
        if (!r.error.empty()) {
            m_failed = "cannot start a role: " + r.error;
            throw EnvironmentError(m_failed);
        }
        m_pid = r.pid;
        m_pidfd = r.pidfd;
        reaper::watch_process(m_pid, false);
    }

    int pid() const override { return m_pid; }

    bool running() override {
        started();
        if (m_code) return false;
        m_spawner->drain();
        if (auto it = m_spawner->exits.find(m_pid); it != m_spawner->exits.end()) {
            m_code = it->second;
            m_spawner->exits.erase(it);
            return false;
        }
        if (m_spawner->gone && exited()) {
            // The spawner is gone and cannot tell; its roles die with it (PR_SET_PDEATHSIG SIGKILL).
            m_code = 128 + SIGKILL;
            return false;
        }
        return true;
    }

    bool wait_for(milliseconds d) override {
        const auto deadline = SteadyClock::now() + d;
        for (;;) {
            if (!running()) return true;
            const auto now = SteadyClock::now();
            if (now >= deadline) return false;
            if (m_spawner->gone) {
                std::this_thread::sleep_for(milliseconds(1));
                continue;
            }
            // Wakes when the role exits (its pidfd) or the spawner writes; once the role has exited,
            // only the spawner's report of its status is awaited.
            const int left = static_cast<int>(std::chrono::duration_cast<milliseconds>(deadline - now).count()) + 1;
            pollfd p[2] = {{m_spawner->fd, POLLIN, 0}, {m_pidfd, POLLIN, 0}};
            (void)::poll(p, exited() ? 1 : 2, std::min(left, 20));
        }
    }

    std::optional<int> exit_code() const override { return m_code; }

    void signal(int sig) noexcept override {
        if (!m_code && m_pidfd >= 0) (void)pidfd_send_signal(m_pidfd, sig);
    }

    void wake_for_trial_end() noexcept override { signal(kTrialEndSignal); }

private:
    bool exited() const {
        pollfd p{m_pidfd, POLLIN, 0};
        return m_pidfd < 0 || ::poll(&p, 1, 0) > 0;
    }

    std::shared_ptr<RoleSpawner::Impl> m_spawner;
    int m_request;
    int m_pid = -1;
    int m_pidfd = -1;
    std::string m_failed;  // why it never started, once known
    std::optional<int> m_code;
};

}  // namespace

RoleSpawner::RoleSpawner(std::string relab_exe) : m(std::make_shared<Impl>(std::move(relab_exe))) {}

RoleSpawner::~RoleSpawner() = default;

void RoleSpawner::wait_for_news(milliseconds d) {
    if (!m->process || m->gone) {
        std::this_thread::sleep_for(d);
        return;
    }
    pollfd p{m->fd, POLLIN, 0};
    (void)::poll(&p, 1, static_cast<int>(d.count()));
}

void RoleSpawner::open_ahead(const std::string& key, int count, const RedisEndpoint* redis) {
    if (!m->process || m->gone || key.empty()) return;  // no spawner yet: the first trial's roles start it
    nlohmann::json spec = nlohmann::json::parse(key, nullptr, false);
    if (spec.is_discarded() || !spec.is_object()) throw std::logic_error("open_ahead: the key is not a JSON object");
    if (redis) spec["redis"] = redis_endpoint_json(*redis);
    spec["key"] = key;
    const nlohmann::json req = {{"ahead", spec}, {"count", count}};
    if (!send_message(m->fd, req.dump())) m->gone = true;  // the next spawn() says so
}

std::unique_ptr<RoleProcess> RoleSpawner::spawn(const RoleStart& start) {
    if (!m->process) m->start();
    const int id = ++m->next_request;
    const std::string request = nlohmann::json{{"id", id},
                                               {"config", start.config_path},
                                               {"secrets", start.secrets},
                                               {"stdout", start.stdout_path},
                                               {"stderr", start.stderr_path},
                                               {"key", start.ahead_key}}
                                    .dump();
    if (m->gone || !send_message(m->fd, request)) {
        m->gone = true;
        throw m->stopped("is gone: it took no request");
    }
    return std::make_unique<ForkedRole>(m, id);
}

// ---- the spawner's side ----

namespace {

// A child's setup, in a role or a shell: the spawner's signal mask and SIGCHLD handling undone,
// dying with the spawner.
void become_child(pid_t spawner, const sigset_t& mask) {
    ::sigprocmask(SIG_SETMASK, &mask, nullptr);
    ::signal(SIGCHLD, SIG_DFL);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != spawner) ::_exit(1);  // the spawner died before the line above
    ::prctl(PR_SET_NAME, "relab");
}

[[noreturn]] void run_forked_role(const nlohmann::json& req, int out, int err, pid_t spawner, const sigset_t& mask) {
    become_child(spawner, mask);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd < 0 || ::dup2(null_fd, STDIN_FILENO) < 0 || ::dup2(out, STDOUT_FILENO) < 0 || ::dup2(err, STDERR_FILENO) < 0)
        ::_exit(127);
    ::close(null_fd);
    ::close(out);
    ::close(err);
    const std::string secrets = req.value("secrets", "");
    if (!secrets.empty()) ::setenv(k_role_secrets_env, secrets.c_str(), 1);
    const int code = run_role_process(req.at("config").get<std::string>());
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    ::_exit(code);
}

// A shell: a role process forked ahead of its trial. It connects to the PostgreSQL (and the Redis,
// if any) the request names (open_pg_session_ahead, RedisClient::open_ahead), then waits on its
// socket for a role's request and its two output descriptors, and runs it as run_forked_role does;
// the role's RedisClient and PgSession take those connections. A connection that fails here is not an error:
// the role connects itself, and reports what fails then.
[[noreturn]] void run_shell(int sock, const nlohmann::json& ahead, pid_t spawner, const sigset_t& mask) {
    become_child(spawner, mask);
    const int null_fd = ::open("/dev/null", O_RDONLY);  // not the spawner's socket to relab
    if (null_fd < 0 || ::dup2(null_fd, STDIN_FILENO) < 0) ::_exit(127);
    ::close(null_fd);
    if (ahead.contains("redis")) {
        try {
            RedisClient::open_ahead(redis_endpoint_from_json(ahead.at("redis")));
        } catch (const std::exception&) {
        }
    }
    try {
        open_pg_session_ahead(pg_endpoint_from_json(ahead.at("pg")), ahead.at("schema").get<std::string>());
    } catch (const std::exception&) {
    }
    std::string text;
    int fds[2] = {-1, -1};
    if (receive_message(sock, text, fds, 0, 2) != 1 || fds[0] < 0 || fds[1] < 0) ::_exit(0);  // not used
    ::close(sock);
    const nlohmann::json req = nlohmann::json::parse(text, nullptr, false);
    if (req.is_discarded() || !req.contains("config")) ::_exit(127);
    run_forked_role(req, fds[0], fds[1], spawner, mask);
}

int open_output(const std::string& path, std::string& error) {
    const int fd = ::open(path.empty() ? "/dev/null" : path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) error = "cannot open " + path + " for output: " + std::strerror(errno);
    return fd;
}

struct Shell {
    pid_t pid;
    int sock;  // the spawner's end
    std::string key;
};

// The spawner's loop and what it keeps: the roles it forked and the shells waiting for one.
class Spawner {
public:
    Spawner(int sfd, const sigset_t& old_mask) : m_self(::getpid()), m_sfd(sfd), m_old(old_mask) {}

    // Serves relab's requests until relab closes its end; then no role outlives the spawner.
    void serve() {
        for (;;) {
            pollfd p[2] = {{STDIN_FILENO, POLLIN, 0}, {m_sfd, POLLIN, 0}};
            if (::poll(p, 2, -1) < 0) {
                if (errno == EINTR) continue;
                break;
            }
            if (p[1].revents) {
                signalfd_siginfo info;
                while (::read(m_sfd, &info, sizeof info) > 0) {
                }
                reap();
            }
            if (!p[0].revents) continue;
            std::string text;
            const int got = receive_message(STDIN_FILENO, text, nullptr, 0);
            if (got <= 0) break;  // relab closed its end (or it is unusable): stop
            handle(nlohmann::json::parse(text, nullptr, false));
        }
        for (pid_t pid : m_children) ::kill(pid, SIGKILL);
        for (const auto& s : m_shells) ::kill(s.pid, SIGKILL);
        int status = 0;
        while (::waitpid(-1, &status, 0) > 0 || errno == EINTR) {
        }
    }

private:
    void handle(const nlohmann::json& req) {
        if (!req.is_discarded() && req.contains("ahead")) {
            fork_ahead(req);
            return;
        }
        if (req.is_discarded() || !req.contains("config")) {
            send_message(STDIN_FILENO, nlohmann::json{{"id", -1}, {"error", "a malformed request to the spawner"}}.dump());
            return;
        }
        start_role(req);
    }

    void drop_shell(size_t i) {
        ::close(m_shells[i].sock);
        m_shells.erase(m_shells.begin() + static_cast<std::ptrdiff_t>(i));
    }

    // A role's exit goes to relab; a shell's only leaves the list.
    void reap() {
        int status = 0;
        for (pid_t pid; (pid = ::waitpid(-1, &status, WNOHANG)) > 0;) {
            if (m_children.erase(pid)) {
                send_message(STDIN_FILENO, nlohmann::json{{"exit", pid}, {"status", exit_status_of(status)}}.dump());
                continue;
            }
            for (size_t i = 0; i < m_shells.size(); ++i)
                if (m_shells[i].pid == pid) {
                    drop_shell(i);
                    break;
                }
        }
    }

    // In a forked child: the spawner's descriptors are not the child's.
    void close_in_child() const {
        ::close(m_sfd);
        for (const auto& s : m_shells) ::close(s.sock);
    }

    // {"ahead": {"key", "redis", "pg", "schema"}, "count": N}: N shells of that key, no others.
    void fork_ahead(const nlohmann::json& req) {
        const nlohmann::json& ahead = req.at("ahead");
        const std::string key = ahead.value("key", "");
        for (size_t i = m_shells.size(); i-- > 0;)
            if (m_shells[i].key != key) {
                ::kill(m_shells[i].pid, SIGKILL);  // reaped as any child
                m_shells[i].key.clear();
            }
        int have = 0;
        for (const auto& s : m_shells) have += s.key == key ? 1 : 0;
        for (int n = req.value("count", 0); have < n; ++have) {
            int pair[2];
            if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return;
            std::cout.flush();
            std::cerr.flush();
            const pid_t pid = ::fork();
            if (pid == 0) {
                ::close(pair[0]);
                close_in_child();
                run_shell(pair[1], ahead, m_self, m_old);
            }
            ::close(pair[1]);
            if (pid < 0) {
                ::close(pair[0]);
                return;  // the roles are forked when asked, as without shells
            }
            m_shells.push_back(Shell{pid, pair[0], key});
        }
    }

    // A role in a shell of its key, if one takes it: its pid, else -1.
    pid_t give_to_shell(const nlohmann::json& req, int out, int err) {
        const std::string key = req.value("key", "");
        if (key.empty()) return -1;
        for (size_t i = 0; i < m_shells.size(); ++i) {
            if (m_shells[i].key != key) continue;
            const Shell s = m_shells[i];
            const bool sent = send_message(s.sock, req.dump(), out, err);
            drop_shell(i);
            if (sent) return s.pid;
            ::kill(s.pid, SIGKILL);  // gone or unusable: reaped as any child
            --i;
        }
        return -1;
    }

    // A role's request: its outputs opened, a shell given it or a child forked for it, and its pid
    // (with a pidfd) or the error sent back.
    void start_role(const nlohmann::json& req) {
        const int id = req.value("id", -1);
        std::string error;
        const int out = open_output(req.value("stdout", ""), error);
        const int err = out < 0 ? -1 : open_output(req.value("stderr", ""), error);
        if (out < 0 || err < 0) {
            if (out >= 0) ::close(out);
            send_message(STDIN_FILENO, nlohmann::json{{"id", id}, {"error", error}}.dump());
            return;
        }
        pid_t pid = give_to_shell(req, out, err);
        if (pid < 0) {
            std::cout.flush();
            std::cerr.flush();
            pid = ::fork();
            if (pid == 0) {
                close_in_child();
                run_forked_role(req, out, err, m_self, m_old);
            }
        }
        ::close(out);
        ::close(err);
        if (pid < 0) {
            send_message(STDIN_FILENO, nlohmann::json{{"id", id}, {"error", std::string("fork: ") + std::strerror(errno)}}.dump());
            return;
        }
        m_children.insert(pid);
        const int pidfd = pidfd_open(pid);  // not reaped before this: only this loop reaps
        send_message(STDIN_FILENO, nlohmann::json{{"id", id}, {"pid", pid}}.dump(), pidfd);
        if (pidfd >= 0) ::close(pidfd);
    }

    const pid_t m_self;
    const int m_sfd;        // SIGCHLD, as a descriptor the loop polls
    const sigset_t m_old;   // the mask a child gets back
    std::set<pid_t> m_children;  // roles: relab hears of their exits
    std::vector<Shell> m_shells;  // forked ahead, no role given yet: relab does not know them
};

}  // namespace

int serve_role_spawner() {
    ::prctl(PR_SET_NAME, "relab-spawner");
    ::unsetenv("LD_BIND_NOW");
    // Before any fork: a role never runs without the handler (real_clock.h).
    install_trial_end_wakeup();
    sigset_t chld, old;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    ::sigprocmask(SIG_BLOCK, &chld, &old);
    const int sfd = ::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0) {
        std::cerr << "relab role --spawner: signalfd: " << std::strerror(errno) << "\n";
        return 1;
    }
    Spawner(sfd, old).serve();
    return 0;
}

}  // namespace relab
