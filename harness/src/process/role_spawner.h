// Role processes forked from a spawner (`relab role --spawner`), not exec'd one by one.
//
// A role started as `relab role --config` pays, every time, what any fresh process of relab pays:
// the parent's fork of itself (page tables of a process of tens of MB), then the dynamic loader
// binding libpq's and libpqxx's dependencies (gnutls, ldap, krb5, ...) and their constructors:
// about 15 ms of CPU per role on this 2-core machine, three or four roles a trial. The spawner is
// that fresh process once per run: exec'd like a role (so it holds no thread, lock or state of
// relab's), its libraries loaded and bound, it forks each role on request and the child runs the
// role's code directly, as `relab role --config` would.
//
// Shells: while a trial runs, relab can ask for the next trial's role processes ahead
// (open_ahead). The spawner forks them and each connects to the trial's Redis and PostgreSQL
// (a PostgreSQL backend's start is mostly page faults) and waits; a role whose servers
// match then runs in one, on those connections, instead of a fresh fork that connects on its
// trial's clock.
//
// The spawner's children are not relab's: the spawner reaps them and sends their exit status on
// the socket, and relab signals them through a pidfd, which never names a reused pid. They die
// with the spawner (PR_SET_PDEATHSIG), which dies with relab's thread that started it, and the
// spawner kills them when relab closes its socket.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace relab {

struct RedisEndpoint;

// One role process, however it was started.
class RoleProcess {
public:
    virtual ~RoleProcess() = default;  // stops it (SIGTERM, then SIGKILL) if still running
    // Waits until the process has started; throws EnvironmentError when it could not be.
    // Every other call but pid() does so first.
    virtual void started() {}
    virtual int pid() const = 0;  // -1 before started()
    // False once it has exited (and its status is known).
    virtual bool running() = 0;
    // True once it has exited within d.
    virtual bool wait_for(std::chrono::milliseconds d) = 0;
    // Exit status, 128 + signal when killed by one; nullopt while running.
    virtual std::optional<int> exit_code() const = 0;
    virtual void signal(int sig) noexcept = 0;
    // The trial has ended and the stop key is set: a role that sleeps wakes to see it
    // (real_clock.h's kTrialEndSignal). Only a forked role has the handler for it; an exec'd one
    // is left to wake at the end of its sleep.
    virtual void wake_for_trial_end() noexcept {}
};

struct RoleStart {
    std::string config_path;  // `relab role --config FILE`'s file
    std::string secrets;      // $RELAB_ROLE_SECRETS
    std::string stdout_path;
    std::string stderr_path;
    // The servers the role connects to, as role_ahead_key() has them: a shell forked ahead for the
    // same key (RoleSpawner::open_ahead) runs it. Empty: forked when asked.
    std::string ahead_key;
};

class RoleSpawner {
public:
    // Nothing is started until the first spawn(), from the thread that calls it: the spawner dies
    // with that thread (PR_SET_PDEATHSIG), so call spawn() from one that outlives every role.
    explicit RoleSpawner(std::string relab_exe);
    ~RoleSpawner();  // kills every role still running, then the spawner
    RoleSpawner(const RoleSpawner&) = delete;
    RoleSpawner& operator=(const RoleSpawner&) = delete;

    // Sends the request and returns: the role's started() waits for the answer, so the roles of a
    // trial are forked while the next one's request is written. Throws EnvironmentError when the
    // spawner cannot start or is gone; started() throws it when the spawner did not answer or the
    // role's output files cannot be opened.
    std::unique_ptr<RoleProcess> spawn(const RoleStart& start);
    // Has `count` role processes forked ahead and connected to the PostgreSQL `key` names
    // (role_ahead_key()) and, if given, to `redis`: the next roles of that key start in them,
    // without a fork, a PostgreSQL backend's start or, on that Redis, a connection on
    // their trial's clock. Shells of another key are killed.
    // Called while a trial drains, so the next trial's roles find them ready; a no-op before the
    // first spawn(). Never throws for a spawner that is gone: spawn() says so.
    void open_ahead(const std::string& key, int count, const RedisEndpoint* redis = nullptr);
    // Sleeps up to d, less if a role exits (or anything else comes from the spawner) meanwhile.
    void wait_for_news(std::chrono::milliseconds d);

    struct Impl;

private:
    std::shared_ptr<Impl> m;
};

// `relab role --spawner`: serves spawn requests on fd 0 until relab closes it. Returns the exit
// status of the spawner itself.
int serve_role_spawner();

}  // namespace relab
