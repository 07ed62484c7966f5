// A real trial's roles as processes: relab's own (`relab role`, forked by the spawner or exec'd)
// or, for an exec role, the user's program in its place, with what the servers show of those
// (program_observer.h). A role is killed, stopped and continued by signals and restarted as a new
// process under the same name; one that ends by itself with an error fails the trial.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend_real/lab_connections.h"
#include "backend_real/program_observer.h"
#include "backend_real/real_control.h"
#include "backend_real/role_link_proxies.h"

namespace relab {

class RoleProcesses {
public:
    // `links`: the proxies the roles reach the servers through, in a lab whose faults act on links.
    RoleProcesses(const RealControl::Env& env, RoleLinkProxies& links, LabConnections& connections);

    // Starts a role's process (asks for it: see started()); a program producer waits for the start
    // barrier.
    void add(const RoleLaunch& launch, RoleConfig config);
    // Every role added has started (throws EnvironmentError naming why one could not); the
    // programs' consumers met the start barrier and a program producer started then (its start
    // recorded in `records`).
    void started(std::vector<HistoryRecord>& records);
    // RealControl::open_roles_ahead: asks once per trial; nothing for a lab whose roles cannot take
    // a shell forked ahead.
    void open_ahead();
    // The trial is draining: the next trial's roles are opened ahead k_ahead_after into its drain.
    void draining();

    // The primitives on a role (Control's): its process has ended; SIGKILL, returning once it is
    // gone; SIGSTOP (`stop`) or SIGCONT; a new process under the same name after a kill.
    bool finished(const std::string& actor);
    void kill(const std::string& actor);
    void stop_or_continue(const std::string& actor, bool stop);
    bool paused(const std::string& actor);
    void restart(const std::string& actor);
    // Control::check_roles; once `stop_raised`, a program consumer may have left.
    void check(bool stop_raised);
    // The stop key is set: a role asleep (a reaper between rounds) sees it now rather than when it wakes.
    void wake_for_trial_end();

    // Throws logic_error when no role of the trial is `actor`.
    void require(const std::string& actor) { (void)role(actor); }
    std::vector<std::string> actors() const;
    // What the servers show of the roles that are the user's programs; null: none is.
    ProgramObserver* observer() { return m_observer.get(); }
    // What each program printed, as records at `at_ns` (program_output_records).
    void program_outputs(std::vector<HistoryRecord>& out, int64_t at_ns) const;

private:
    struct Role {
        RoleLaunch launch;
        RoleConfig config;  // the servers as they are; its process gets them through the links at each spawn
        std::unique_ptr<RoleProcess> process{};
        std::string stderr_path{};
        int incarnation = 1;
        bool killed = false;
        bool paused = false;
    };
    Role& role(const std::string& actor);
    const ExecSpec* program_of(const Role& r) const { return m_env.s.exec.of(r.launch.role); }
    void spawn(Role& r);
    // What is known of a consumer the start barrier did not see: it exited, and what it said.
    std::string why_not_reading(const std::string& actor);
    // Programs' consumers must meet the start barrier; a program producer starts only then, as
    // relab's own producer publishes only then, and the trial's origin is that moment.
    void program_barrier(std::vector<HistoryRecord>& records);
    // /proc/PID/stat's state letter, once the signal has taken effect.
    void wait_for_state(Role& r, char state, const char* signal);

    // The next trial's roles forked and connected while this one runs, as many as this trial has
    // (RoleSpawner::open_ahead): k_ahead_after into the drain, when the jobs run and the labs'
    // races are decided (a receipt, a lock taken, 08c-s4b's skew of up to 30 ms), or when the trial
    // ends, if sooner. Not as the drain starts: forks and PostgreSQL backends starting beside the
    // consumers as they take the lock moved 08c-s4a from 3/60 to 16/60 wrong. Not for a lab on
    // PostgreSQL of its own (each trial gets a new one). A shell also connects to the run's Redis,
    // which a lab with a Redis of its own does not use.
    static constexpr std::chrono::milliseconds k_ahead_after{100};

    const RealControl::Env& m_env;
    RoleLinkProxies& m_links;
    LabConnections& m_connections;
    std::vector<Role> m_roles;
    bool m_asked_ahead = false;
    std::optional<std::chrono::steady_clock::time_point> m_draining_since;
    std::unique_ptr<ProgramObserver> m_observer;
};

}  // namespace relab
