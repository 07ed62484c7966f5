#include "run/role_spawner.h"

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
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "real/child_process.h"
#include "real/real_clock.h"
#include "real/reaper.h"
#include "run/role_process.h"

namespace relab {

namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

constexpr size_t k_max_message = 1 << 16;
// How long relab waits for the spawner to answer a request: a fork, not a start.
constexpr milliseconds k_answer{10000};

int pidfd_open(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

int pidfd_send_signal(int pidfd, int sig) { return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0)); }

// One message on the SOCK_SEQPACKET socket, with at most one descriptor beside it.
bool send_message(int fd, const std::string& text, int pass_fd = -1) {
    iovec iov{const_cast<char*>(text.data()), text.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    if (pass_fd >= 0) {
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
    }
    ssize_t n;
    do {
        n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n == static_cast<ssize_t>(text.size());
}

// 1: a message (and *passed the descriptor beside it, or -1); 0: the other end closed;
// -1: nothing to read now (non-blocking) or an error.
int receive_message(int fd, std::string& text, int* passed, int flags) {
    text.resize(k_max_message);
    iovec iov{text.data(), text.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n;
    do {
        n = ::recvmsg(fd, &msg, flags | MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return -1;
    if (n == 0) return 0;
    text.resize(static_cast<size_t>(n));
    if (passed) *passed = -1;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            int got = -1;
            std::memcpy(&got, CMSG_DATA(c), sizeof(int));
            if (passed) *passed = got;
            else ::close(got);
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

std::unique_ptr<RoleProcess> RoleSpawner::spawn(const RoleStart& start) {
    if (!m->process) m->start();
    const int id = ++m->next_request;
    const std::string request = nlohmann::json{{"id", id},
                                               {"config", start.config_path},
                                               {"secrets", start.secrets},
                                               {"stdout", start.stdout_path},
                                               {"stderr", start.stderr_path}}
                                    .dump();
    if (m->gone || !send_message(m->fd, request)) {
        m->gone = true;
        throw m->stopped("is gone: it took no request");
    }
    return std::make_unique<ForkedRole>(m, id);
}

// ---- the spawner's side ----

namespace {

[[noreturn]] void run_forked_role(const nlohmann::json& req, int out, int err, pid_t spawner, const sigset_t& mask) {
    ::sigprocmask(SIG_SETMASK, &mask, nullptr);
    ::signal(SIGCHLD, SIG_DFL);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != spawner) ::_exit(1);  // the spawner died before the line above
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd < 0 || ::dup2(null_fd, STDIN_FILENO) < 0 || ::dup2(out, STDOUT_FILENO) < 0 || ::dup2(err, STDERR_FILENO) < 0)
        ::_exit(127);
    ::close(null_fd);
    ::prctl(PR_SET_NAME, "relab");
    const std::string secrets = req.value("secrets", "");
    if (!secrets.empty()) ::setenv(k_role_secrets_env, secrets.c_str(), 1);
    const int code = run_role_process(req.at("config").get<std::string>());
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    ::_exit(code);
}

int open_output(const std::string& path, std::string& error) {
    const int fd = ::open(path.empty() ? "/dev/null" : path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) error = "cannot open " + path + " for output: " + std::strerror(errno);
    return fd;
}

}  // namespace

int serve_role_spawner() {
    ::prctl(PR_SET_NAME, "relab-spawner");
    ::unsetenv("LD_BIND_NOW");
    const pid_t self = ::getpid();
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
    std::set<pid_t> children;
    auto reap = [&] {
        int status = 0;
        for (pid_t pid; (pid = ::waitpid(-1, &status, WNOHANG)) > 0;) {
            children.erase(pid);
            send_message(STDIN_FILENO, nlohmann::json{{"exit", pid}, {"status", exit_status_of(status)}}.dump());
        }
    };
    for (;;) {
        pollfd p[2] = {{STDIN_FILENO, POLLIN, 0}, {sfd, POLLIN, 0}};
        if (::poll(p, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (p[1].revents) {
            signalfd_siginfo info;
            while (::read(sfd, &info, sizeof info) > 0) {
            }
            reap();
        }
        if (!p[0].revents) continue;
        std::string text;
        const int got = receive_message(STDIN_FILENO, text, nullptr, 0);
        if (got <= 0) break;  // relab closed its end (or it is unusable): stop
        const nlohmann::json req = nlohmann::json::parse(text, nullptr, false);
        if (req.is_discarded() || !req.contains("config")) {
            send_message(STDIN_FILENO, nlohmann::json{{"id", -1}, {"error", "a malformed request to the spawner"}}.dump());
            continue;
        }
        const int id = req.value("id", -1);
        std::string error;
        const int out = open_output(req.value("stdout", ""), error);
        const int err = out < 0 ? -1 : open_output(req.value("stderr", ""), error);
        if (out < 0 || err < 0) {
            if (out >= 0) ::close(out);
            send_message(STDIN_FILENO, nlohmann::json{{"id", id}, {"error", error}}.dump());
            continue;
        }
        std::cout.flush();
        std::cerr.flush();
        const pid_t pid = ::fork();
        if (pid == 0) {
            ::close(sfd);
            run_forked_role(req, out, err, self, old);
        }
        ::close(out);
        ::close(err);
        if (pid < 0) {
            send_message(STDIN_FILENO, nlohmann::json{{"id", id}, {"error", std::string("fork: ") + std::strerror(errno)}}.dump());
            continue;
        }
        children.insert(pid);
        const int pidfd = pidfd_open(pid);  // not reaped before this: only this loop reaps
        send_message(STDIN_FILENO, nlohmann::json{{"id", id}, {"pid", pid}}.dump(), pidfd);
        if (pidfd >= 0) ::close(pidfd);
    }
    // relab is done with its roles (or gone): none outlives the spawner.
    for (pid_t pid : children) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(-1, &status, 0) > 0 || errno == EINTR) {
    }
    return 0;
}

}  // namespace relab
