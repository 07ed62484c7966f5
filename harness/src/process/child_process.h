// A child process owned by an object: the destructor stops it and reaps it, so no child outlives
// relab's objects and no zombie is left. Output goes to files, never pipes: a pipe read by the
// parent never reaches EOF while a grandchild still holds its write end. Started with
// Boost.Process (boost::process::child and its exec-setup hooks), whose headers stay in the .cpp.
#pragma once

#include <chrono>
#include <csignal>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/environment_error.h"

namespace relab {

struct ChildOptions {
    std::string exe;                         // absolute path, or a name looked up on PATH
    std::vector<std::string> args;           // without argv[0]
    std::string stdout_path;                 // truncated and written; "" = /dev/null
    std::string stderr_path;                 // may equal stdout_path; "" = /dev/null
    std::optional<std::string> run_as_user;  // its groups (as initgroups), setgid, setuid before
                                             // exec; needs root unless it is the current user.
                                             // HOME, USER, LOGNAME follow it.
    std::map<std::string, std::string> env;  // added to (or replacing in) the inherited environment
    std::string working_dir;                 // "" = the parent's
    int stdin_fd = -1;                       // the child's stdin (the caller keeps and closes its
                                             // own copy); -1 = /dev/null
    int fd3 = -1;                            // given to the child as its descriptor 3 (an exec
                                             // role's trace); -1 = none (the caller keeps its copy)
    // A new process group: a terminal's Ctrl-C no longer reaches the child (relab stops it in
    // order), and terminate() kills the whole group, grandchildren included (those that stay in
    // it: PostgreSQL backends make their own groups and exit when the postmaster is gone).
    bool own_process_group = false;
    // PR_SET_PDEATHSIG SIGKILL, so the child dies even if relab is SIGKILLed. Linux sends it when
    // the spawning THREAD exits, so spawn from a thread that outlives the child, or set false.
    bool die_with_parent = true;
};

// A waitpid() status as relab reports it: the exit status, 128 + signal when killed by one, -1
// otherwise.
int exit_status_of(int wait_status);

// A regular file this process may execute.
bool is_executable_file(const std::string& path);
// The first executable "dir/name" over the directories of $PATH.
std::optional<std::string> find_on_path(const std::string& name);
// The running relab binary (/proc/self/exe): what role processes and child runs execute.
std::string self_executable();

class ChildProcess {
public:
    // Starts the process. Throws EnvironmentError naming the executable when it cannot be found,
    // an output file cannot be opened, the user cannot be switched to, or exec fails.
    explicit ChildProcess(const ChildOptions& opts);
    ~ChildProcess();  // terminate() if still running; never throws
    ChildProcess(ChildProcess&& other) noexcept;
    ChildProcess& operator=(ChildProcess&& other) noexcept;
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    int pid() const { return m_pid; }
    const std::string& exe() const { return m_exe; }
    // Reaps the child if it has exited.
    bool running();
    // Waits on the child's pidfd (in slices of at most 20 ms), so it returns as the child exits;
    // true once the child has exited (and is reaped). Does not
    // look at the interrupt flag, so cleanup code can use it after Ctrl-C; callers that must react
    // to Ctrl-C wait in short slices and call throw_if_interrupted() between them.
    bool wait_for(std::chrono::milliseconds d);
    // Exit status, 128 + signal when killed by a signal, -1 when terminate()'s final wait failed;
    // nullopt until running()/wait_for() has seen the exit. (A status reaped by someone else reads
    // as 0: Boost.Process cannot tell; relab reaps its children only here.)
    std::optional<int> exit_code() const { return m_exit_code; }
    // Sends sig to the child if it has not been reaped yet.
    void signal(int sig) noexcept;
    // Sends first_signal, waits up to grace, then SIGKILL (the whole group with own_process_group)
    // and a blocking wait(): afterwards the child is reaped, always.
    void terminate(std::chrono::milliseconds grace = std::chrono::milliseconds(2000),
                   int first_signal = SIGTERM) noexcept;

private:
    struct Impl;  // the boost::process::child
    void release() noexcept;

    std::unique_ptr<Impl> m_impl;
    int m_pid = -1;
    std::string m_exe;
    bool m_own_process_group = false;
    std::optional<int> m_exit_code;
};

}  // namespace relab
