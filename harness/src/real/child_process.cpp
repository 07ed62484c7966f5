#include "real/child_process.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

extern char** environ;

namespace relab {

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

// What the child reports through the exec-error pipe before _exit.
struct ChildFailure {
    int stage;
    int error;
};
enum Stage { stage_setup = 1, stage_chdir, stage_credentials, stage_parent_gone, stage_exec };

const char* stage_name(int stage) {
    switch (stage) {
        case stage_setup: return "redirecting stdin/stdout/stderr";
        case stage_chdir: return "changing to the working directory";
        case stage_credentials: return "switching user";
        case stage_parent_gone: return "parent exited during start";
        case stage_exec: return "execve";
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

Fd open_output(const std::string& path, const std::string& exe) {
    const char* target = path.empty() ? "/dev/null" : path.c_str();
    int fd = ::open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        throw EnvironmentError("cannot start " + exe + ": cannot open " + target + " for output: " +
                               std::strerror(errno));
    return Fd(fd);
}

int decode_status(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

void write_failure(int fd, int stage) {
    ChildFailure f{stage, errno};
    ssize_t ignored = ::write(fd, &f, sizeof f);
    (void)ignored;
    ::_exit(127);
}

}  // namespace

bool is_executable_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

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
    // Everything the child needs is prepared here: between fork and exec only async-signal-safe
    // calls are allowed (another thread may hold the malloc lock at fork time).
    const std::string resolved = resolve_executable(opts.exe);

    std::map<std::string, std::string> env;
    for (char** e = environ; e && *e; ++e) {
        std::string kv = *e;
        auto eq = kv.find('=');
        if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }

    bool switch_user = false;
    uid_t uid = 0;
    gid_t gid = 0;
    if (opts.run_as_user) {
        struct passwd pw {};
        struct passwd* found = nullptr;
        std::vector<char> buf(16384);
        int rc = ::getpwnam_r(opts.run_as_user->c_str(), &pw, buf.data(), buf.size(), &found);
        if (rc != 0 || !found)
            throw EnvironmentError("cannot start " + opts.exe + " as user " + *opts.run_as_user +
                                   ": no such user; create it (useradd --system " +
                                   *opts.run_as_user + ")");
        uid = pw.pw_uid;
        gid = pw.pw_gid;
        if (uid != ::geteuid()) {
            if (::geteuid() != 0)
                throw EnvironmentError("cannot start " + opts.exe + " as user " +
                                       *opts.run_as_user + ": switching users needs root");
            switch_user = true;
        }
        env["HOME"] = pw.pw_dir;
        env["USER"] = pw.pw_name;
        env["LOGNAME"] = pw.pw_name;
    }
    for (const auto& [k, v] : opts.env) env[k] = v;

    std::vector<std::string> env_strings;
    env_strings.reserve(env.size());
    for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);

    std::vector<std::string> arg_strings;
    arg_strings.push_back(opts.exe);
    arg_strings.insert(arg_strings.end(), opts.args.begin(), opts.args.end());
    std::vector<char*> argv;
    for (auto& s : arg_strings) argv.push_back(s.data());
    argv.push_back(nullptr);

    int null_in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_in < 0)
        throw EnvironmentError("cannot start " + opts.exe + ": cannot open /dev/null: " +
                               std::strerror(errno));
    Fd stdin_fd(null_in);
    Fd stdout_fd = open_output(opts.stdout_path, opts.exe);
    Fd stderr_fd;
    if (opts.stderr_path.empty() || opts.stderr_path != opts.stdout_path)
        stderr_fd = open_output(opts.stderr_path, opts.exe);
    const int out = stdout_fd.get();
    const int err = stderr_fd.get() >= 0 ? stderr_fd.get() : out;

    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
        throw EnvironmentError("cannot start " + opts.exe + ": pipe2: " + std::strerror(errno));
    Fd report_read(pipe_fds[0]);
    Fd report_write(pipe_fds[1]);

    struct rlimit lim {};
    int max_fd = 65536;
    if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
        lim.rlim_cur < static_cast<rlim_t>(max_fd))
        max_fd = static_cast<int>(lim.rlim_cur);

    const pid_t parent = ::getpid();
    const char* working_dir = opts.working_dir.empty() ? nullptr : opts.working_dir.c_str();
    const bool own_group = opts.own_process_group;
    const bool die_with_parent = opts.die_with_parent;
    const int report_fd = report_write.get();

    pid_t pid = ::fork();
    if (pid < 0)
        throw EnvironmentError("cannot start " + opts.exe + ": fork: " + std::strerror(errno));
    if (pid == 0) {
        // Child: async-signal-safe calls only.
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, nullptr);
        // Ignored signals stay ignored across exec; undo what relab itself may ignore.
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        for (int s : {SIGPIPE, SIGCHLD, SIGINT, SIGTERM}) sigaction(s, &dfl, nullptr);
        if (own_group) setpgid(0, 0);
        if (::dup2(null_in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0)
            write_failure(report_fd, stage_setup);
        if (working_dir && ::chdir(working_dir) != 0) write_failure(report_fd, stage_chdir);
        if (switch_user) {
            if (::setgroups(1, &gid) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0)
                write_failure(report_fd, stage_credentials);
        }
        // After setuid: changing credentials clears the parent-death signal.
        if (die_with_parent) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (::getppid() != parent) {
                errno = 0;
                write_failure(report_fd, stage_parent_gone);
            }
        }
        // Descriptors the parent opened without O_CLOEXEC must not leak into the child.
        if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
            for (int fd = 3; fd < max_fd; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
        ::execve(resolved.c_str(), argv.data(), envp.data());
        write_failure(report_fd, stage_exec);
    }

    if (own_group) ::setpgid(pid, pid);  // also from here, so the group exists before we return
    m_pid = pid;
    m_own_process_group = own_group;
    report_write.reset();

    ChildFailure failure{};
    ssize_t n;
    do {
        n = ::read(report_read.get(), &failure, sizeof failure);
    } while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(sizeof failure)) {
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        m_pid = -1;
        std::string message = "cannot start " + opts.exe;
        if (opts.run_as_user) message += " as user " + *opts.run_as_user;
        message += std::string(": ") + stage_name(failure.stage);
        if (failure.error != 0) message += std::string(": ") + std::strerror(failure.error);
        throw EnvironmentError(message);
    }
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : m_pid(std::exchange(other.m_pid, -1)),
      m_exe(std::move(other.m_exe)),
      m_own_process_group(other.m_own_process_group),
      m_exit_code(std::exchange(other.m_exit_code, std::nullopt)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
    if (this != &other) {
        release();
        m_pid = std::exchange(other.m_pid, -1);
        m_exe = std::move(other.m_exe);
        m_own_process_group = other.m_own_process_group;
        m_exit_code = std::exchange(other.m_exit_code, std::nullopt);
    }
    return *this;
}

ChildProcess::~ChildProcess() { release(); }

void ChildProcess::release() noexcept { terminate(); }

bool ChildProcess::running() {
    if (m_pid < 0 || m_exit_code) return false;
    for (;;) {
        int status = 0;
        pid_t r = ::waitpid(m_pid, &status, WNOHANG);
        if (r == 0) return true;
        if (r == m_pid) {
            m_exit_code = decode_status(status);
            return false;
        }
        if (r < 0 && errno == EINTR) continue;
        m_exit_code = -1;  // ECHILD: reaped elsewhere (or SIGCHLD ignored)
        return false;
    }
}

bool ChildProcess::wait_for(std::chrono::milliseconds d) {
    const auto deadline = std::chrono::steady_clock::now() + d;
    for (;;) {
        if (!running()) return true;
        auto now = std::chrono::steady_clock::now();
        if (now >= deadline) return false;
        std::this_thread::sleep_for(
            std::min<std::chrono::steady_clock::duration>(deadline - now, std::chrono::milliseconds(20)));
    }
}

void ChildProcess::signal(int sig) noexcept {
    // An exited but unreaped child still owns its pid; a reaped one does not.
    if (m_pid > 0 && !m_exit_code) ::kill(m_pid, sig);
}

void ChildProcess::terminate(std::chrono::milliseconds grace, int first_signal) noexcept {
    try {
        if (!running()) return;
        signal(first_signal);
        if (!wait_for(grace)) {
            if (m_own_process_group) ::kill(-m_pid, SIGKILL);
            ::kill(m_pid, SIGKILL);
            int status = 0;
            pid_t r;
            while ((r = ::waitpid(m_pid, &status, 0)) < 0 && errno == EINTR) {
            }
            m_exit_code = r == m_pid ? decode_status(status) : -1;
        }
        // Just reaped by us, so the group id cannot have been reused yet: clear what is left of
        // the group (e.g. PostgreSQL backends whose postmaster died).
        if (m_own_process_group) ::kill(-m_pid, SIGKILL);
    } catch (...) {
        // sleep_for may in theory throw; a destructor path must not.
    }
}

}  // namespace relab
