#include "process/child_process.h"
#include "process/reaper.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <grp.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/env.hpp>
#include <boost/process/error.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/posix.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>
#include <utility>

namespace bp = boost::process;

namespace relab {

struct ChildProcess::Impl {
    bp::child child;
    int pidfd = -1;  // readable once the child has exited: wait_for() wakes then, not at its next poll
    ~Impl() {
        if (pidfd >= 0) ::close(pidfd);
    }
};

namespace {

// An owned file descriptor.
class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : m_fd(fd) {}
    ~Fd() { reset(); }
    Fd(Fd&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}
    Fd& operator=(Fd&& other) noexcept {
        if (this != &other) {
            reset();
            m_fd = std::exchange(other.m_fd, -1);
        }
        return *this;
    }
    int get() const { return m_fd; }
    void reset() noexcept {
        if (m_fd >= 0) ::close(m_fd);
        m_fd = -1;
    }

private:
    int m_fd = -1;
};

// What relab's exec-setup hook reports, in one write, through its own pipe before _exit. Not
// through the executor's set_error(): in Boost 1.74 the child writes that record in three write()s
// while the parent reads its header with one read(), so the parent can take a partial header (and
// a garbage length) and close the pipe on the child, which then dies of SIGPIPE.
struct SetupFailure {
    int step;
    int error;
};
enum Step { step_chdir = 1, step_credentials, step_parent_gone, step_fd3 };

const char* step_name(int step) {
    switch (step) {
        case step_chdir: return "changing to the working directory";
        case step_credentials: return "switching user";
        case step_parent_gone: return "parent exited during start";
        case step_fd3: return "passing descriptor 3";
        default: return "starting";
    }
}

std::string resolve_executable(const std::string& exe) {
    if (exe.empty()) throw EnvironmentError("cannot start a child process: no executable given");
    if (exe.find('/') != std::string::npos) {
        if (!is_executable_file(exe))
            throw EnvironmentError("cannot start " + exe + ": not an executable file");
        return exe;
    }
    if (auto found = find_on_path(exe)) return *found;
    throw EnvironmentError("cannot start " + exe + ": not found on PATH");
}

// Opened here rather than by Boost's `std_out > path`, which neither truncates nor sets
// O_CLOEXEC and reports an unopenable file only as a dup2 failure in the child.
Fd open_output(const std::string& path, const std::string& exe) {
    const char* target = path.empty() ? "/dev/null" : path.c_str();
    int fd = ::open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        throw EnvironmentError("cannot start " + exe + ": cannot open " + target + " for output: " +
                               std::strerror(errno));
    return Fd(fd);
}

// Boost.Process reports a child whose execve failed but does not reap it. The child has written
// its error and is exiting (or, had one of Boost's own hooks failed, which report and go on,
// would be running the program): SIGKILL changes nothing in the first case and ends the second.
void reap_failed_child(pid_t pid) {
    ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
}

// Whom the child runs as, looked up before fork: initgroups() is not async-signal-safe.
struct Credentials {
    bool switch_user = false;
    uid_t uid = 0;
    gid_t gid = 0;
    std::vector<gid_t> groups;
};

// The user's supplementary groups, as getgrouplist gives them.
std::vector<gid_t> group_list(const char* name, gid_t gid) {
    std::vector<gid_t> groups;
    int n = 32;
    for (;;) {
        groups.resize(static_cast<size_t>(n));
        int want = n;
        if (::getgrouplist(name, gid, groups.data(), &want) >= 0) {
            groups.resize(static_cast<size_t>(want));
            return groups;
        }
        n = want > n ? want : n * 2;
    }
}

// opts.run_as_user's ids and groups, and its HOME, USER and LOGNAME in env.
Credentials look_up_user(const ChildOptions& opts, bp::environment& env) {
    Credentials c;
    if (!opts.run_as_user) return c;
    struct passwd pw {};
    struct passwd* found = nullptr;
    std::vector<char> buf(16384);
    int rc = ::getpwnam_r(opts.run_as_user->c_str(), &pw, buf.data(), buf.size(), &found);
    if (rc != 0 || !found)
        throw EnvironmentError("cannot start " + opts.exe + " as user " + *opts.run_as_user +
                               ": no such user; create it (useradd --system " + *opts.run_as_user + ")");
    c.uid = pw.pw_uid;
    c.gid = pw.pw_gid;
    if (c.uid != ::geteuid()) {
        if (::geteuid() != 0)
            throw EnvironmentError("cannot start " + opts.exe + " as user " + *opts.run_as_user +
                                   ": switching users needs root");
        c.switch_user = true;
        c.groups = group_list(pw.pw_name, c.gid);
    }
    env["HOME"] = pw.pw_dir;
    env["USER"] = pw.pw_name;
    env["LOGNAME"] = pw.pw_name;
    return c;
}

// The child's stdin, stdout and stderr (stderr shares stdout's file when both name the same path).
struct Stdio {
    Fd in, out, err;
    int err_fd() const { return err.get() >= 0 ? err.get() : out.get(); }
};

Stdio open_stdio(const ChildOptions& opts) {
    Stdio s;
    s.in = Fd(opts.stdin_fd >= 0 ? ::fcntl(opts.stdin_fd, F_DUPFD_CLOEXEC, 3)
                                 : ::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (s.in.get() < 0)
        throw EnvironmentError("cannot start " + opts.exe + ": cannot open /dev/null: " + std::strerror(errno));
    s.out = open_output(opts.stdout_path, opts.exe);
    if (opts.stderr_path.empty() || opts.stderr_path != opts.stdout_path) s.err = open_output(opts.stderr_path, opts.exe);
    return s;
}

// The highest descriptor the child may have to mark close-on-exec when close_range is missing.
int max_open_fd() {
    struct rlimit lim {};
    int max_fd = 65536;
    if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
        lim.rlim_cur < static_cast<rlim_t>(max_fd))
        max_fd = static_cast<int>(lim.rlim_cur);
    return max_fd;
}

// Runs in the child between fork and execve, after Boost's stdin/stdout/stderr binding.
// Async-signal-safe calls only: everything it reads was prepared before fork.
struct ExecSetup {
    int report_fd;
    pid_t parent;
    const char* working_dir;  // nullptr: stay
    bool own_group, die_with_parent;
    const Credentials* credentials;
    int max_fd;
    int fd3;  // -1: none; else handed on to the child as its descriptor 3

    [[noreturn]] void fail(Step step) const {
        SetupFailure f{step, errno};
        ssize_t ignored = ::write(report_fd, &f, sizeof f);
        (void)ignored;
        ::_exit(127);
    }

    template <class Executor>
    void operator()(Executor& /*executor*/) const {
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, nullptr);
        // Ignored signals stay ignored across exec; undo what relab itself may ignore.
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        for (int s : {SIGPIPE, SIGCHLD, SIGINT, SIGTERM}) sigaction(s, &dfl, nullptr);
        // Before Boost's parent returns the child has exec'd (its error pipe closed), so the group
        // exists by then without a setpgid from the parent's side.
        if (own_group) ::setpgid(0, 0);
        if (working_dir && ::chdir(working_dir) != 0) fail(step_chdir);
        const Credentials& c = *credentials;
        if (c.switch_user) {
            if (::setgroups(c.groups.size(), c.groups.data()) != 0 || ::setgid(c.gid) != 0 || ::setuid(c.uid) != 0)
                fail(step_credentials);
        }
        // After setuid: changing credentials clears the parent-death signal.
        if (die_with_parent) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (::getppid() != parent) {
                errno = 0;
                fail(step_parent_gone);
            }
        }
        // Descriptors the parent opened without O_CLOEXEC (Boost's error pipe's read end among
        // them) must not leak into the child.
        if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
            for (int fd = 3; fd < max_fd; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
        // The one descriptor handed on: dup2 clears its close-on-exec flag (and, on itself, fcntl does).
        if (fd3 >= 0 && (fd3 == 3 ? ::fcntl(3, F_SETFD, 0) : ::dup2(fd3, 3)) < 0) fail(step_fd3);
    }
};

// What the exec-setup hook reported: nothing (end of file) once the child has exec'd. Boost
// returned once its pipe closed, so the child has exec'd or exited and this read does not wait.
std::optional<SetupFailure> read_setup_failure(const Fd& report_read) {
    SetupFailure failure{};
    ssize_t n;
    do {
        n = ::read(report_read.get(), &failure, sizeof failure);
    } while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(sizeof failure)) return failure;
    return std::nullopt;
}

}  // namespace

int exit_status_of(int wait_status) {
    if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
    return -1;
}

bool is_executable_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// Not bp::search_path(): its default reads PATH through std::locale(""), which throws when LANG
// names a locale the machine does not have.
std::optional<std::string> find_on_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
    size_t start = 0;
    while (start <= dirs.size()) {
        size_t end = dirs.find(':', start);
        if (end == std::string::npos) end = dirs.size();
        std::string dir = dirs.substr(start, end - start);
        if (dir.empty()) dir = ".";
        std::string candidate = dir + "/" + name;
        if (is_executable_file(candidate)) return candidate;
        start = end + 1;
    }
    return std::nullopt;
}

ChildProcess::ChildProcess(const ChildOptions& opts) : m_exe(opts.exe) {
    // Everything the child needs is prepared here: between fork and exec (the on_exec_setup hook)
    // only async-signal-safe calls are allowed (another thread may hold the malloc lock at fork
    // time), so no initgroups() there: its group list is looked up now.
    const std::string resolved = resolve_executable(opts.exe);
    bp::environment env = boost::this_process::environment();
    const Credentials credentials = look_up_user(opts, env);
    for (const auto& [k, v] : opts.env) env[k] = v;
    const Stdio stdio = open_stdio(opts);

    int report_fds[2];
    if (::pipe2(report_fds, O_CLOEXEC) != 0)
        throw EnvironmentError("cannot start " + opts.exe + ": pipe2: " + std::strerror(errno));
    Fd report_read(report_fds[0]);
    Fd report_write(report_fds[1]);
    const ExecSetup exec_setup{report_write.get(),
                               ::getpid(),
                               opts.working_dir.empty() ? nullptr : opts.working_dir.c_str(),
                               opts.own_process_group,
                               opts.die_with_parent,
                               &credentials,
                               max_open_fd(),
                               opts.fd3};

    pid_t failed_pid = -1;
    std::error_code ec;  // bp::error: Boost reports instead of throwing, and calls on_error
    bp::child child(bp::exe(resolved), bp::args(opts.args), env, bp::posix::fd.bind(STDIN_FILENO, stdio.in.get()),
                    bp::posix::fd.bind(STDOUT_FILENO, stdio.out.get()),
                    bp::posix::fd.bind(STDERR_FILENO, stdio.err_fd()), bp::extend::on_exec_setup(exec_setup),
                    bp::extend::on_error([&](auto& exec, const std::error_code&) { failed_pid = exec.pid; }),
                    bp::error(ec));
    std::string failure_prefix = "cannot start " + opts.exe;
    if (opts.run_as_user) failure_prefix += " as user " + *opts.run_as_user;
    if (ec || !child.valid()) {
        // Boost's own error pipe: execve failed (the child is reaped here), or pipe/fork did.
        if (failed_pid > 0) reap_failed_child(failed_pid);
        throw EnvironmentError(failure_prefix + (failed_pid > 0 ? ": execve: " : ": fork: ") + ec.message());
    }
    report_write.reset();
    if (const std::optional<SetupFailure> failure = read_setup_failure(report_read)) {
        std::error_code ignored;
        child.wait(ignored);
        std::string message = failure_prefix + ": " + step_name(failure->step);
        if (failure->error != 0) message += std::string(": ") + std::strerror(failure->error);
        throw EnvironmentError(message);
    }
    m_pid = child.id();
    m_own_process_group = opts.own_process_group;
    m_impl = std::make_unique<Impl>();
    m_impl->child = std::move(child);
    m_impl->pidfd = static_cast<int>(::syscall(SYS_pidfd_open, m_pid, 0));
    reaper::watch_process(m_pid, opts.own_process_group);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : m_impl(std::move(other.m_impl)),
      m_pid(std::exchange(other.m_pid, -1)),
      m_exe(std::move(other.m_exe)),
      m_own_process_group(other.m_own_process_group),
      m_exit_code(std::exchange(other.m_exit_code, std::nullopt)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
    if (this != &other) {
        release();
        m_impl = std::move(other.m_impl);
        m_pid = std::exchange(other.m_pid, -1);
        m_exe = std::move(other.m_exe);
        m_own_process_group = other.m_own_process_group;
        m_exit_code = std::exchange(other.m_exit_code, std::nullopt);
    }
    return *this;
}

ChildProcess::~ChildProcess() { release(); }

// After terminate() the bp::child has seen the exit, so its own destructor (SIGKILL and a
// non-blocking waitpid, which can leave a zombie) has nothing to do.
void ChildProcess::release() noexcept {
    terminate();
    if (m_impl) reaper::forget_process(m_pid);
    m_impl.reset();
}

bool ChildProcess::running() {
    if (!m_impl || m_exit_code) return false;
    std::error_code ec;
    if (m_impl->child.running(ec)) return true;  // waitpid(WNOHANG), which reaps an exited child
    m_exit_code = ec ? -1 : exit_status_of(m_impl->child.native_exit_code());
    // Reaped: its pid may be reused from now on.
    if (!m_own_process_group) reaper::forget_process(m_pid);
    return false;
}

// Polls running() rather than bp::child::wait_for, which in Boost 1.74 swaps the process-wide
// SIGCHLD handler and signal mask while it waits: not safe with relab's other threads.
bool ChildProcess::wait_for(std::chrono::milliseconds d) {
    const auto deadline = std::chrono::steady_clock::now() + d;
    for (;;) {
        if (!running()) return true;
        auto now = std::chrono::steady_clock::now();
        if (now >= deadline) return false;
        const auto slice =
            std::min<std::chrono::steady_clock::duration>(deadline - now, std::chrono::milliseconds(20));
        if (m_impl->pidfd >= 0) {
            pollfd p{m_impl->pidfd, POLLIN, 0};
            const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(slice).count() + 1;
            (void)::poll(&p, 1, static_cast<int>(ms));
        } else {
            std::this_thread::sleep_for(slice);
        }
    }
}

void ChildProcess::signal(int sig) noexcept {
    // An exited but unreaped child still owns its pid; a reaped one does not.
    if (m_impl && !m_exit_code) ::kill(m_pid, sig);
}

// Not bp::child::terminate(): it SIGKILLs only the child, not its group, and reaps with WNOHANG,
// so a child that has not finished dying stays a zombie.
void ChildProcess::terminate(std::chrono::milliseconds grace, int first_signal) noexcept {
    try {
        if (!running()) return;
        signal(first_signal);
        if (!wait_for(grace)) {
            if (m_own_process_group) ::kill(-m_pid, SIGKILL);
            ::kill(m_pid, SIGKILL);
            std::error_code ec;
            m_impl->child.wait(ec);  // blocking waitpid, retried on EINTR
            m_exit_code = ec ? -1 : exit_status_of(m_impl->child.native_exit_code());
        }
        // Just reaped by us, so the group id cannot have been reused yet: clear what is left of
        // the group (e.g. PostgreSQL backends whose postmaster died).
        if (m_own_process_group) ::kill(-m_pid, SIGKILL);
    } catch (...) {
        // sleep_for may in theory throw; a destructor path must not.
    }
}

std::string self_executable() {
    std::error_code ec;
    auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) throw std::runtime_error("cannot find the relab executable: " + ec.message());
    return p.string();
}

}  // namespace relab
