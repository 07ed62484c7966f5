// A simulated trial's roles as the nemesis acts on them, as the real backend's role processes
// (backend_real/role_processes.h): each a fiber with its own connections and tasks, killed,
// stopped, continued and started again under the same name, its Redis connections closed (CLIENT
// KILL) and its links set (a link fault).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend_sim/sim_trial.h"
#include "ports/link_mode.h"
#include "roles/roles.h"

namespace relab::sim_backend_detail {

class SimRoles {
public:
    // The trial's `roles`, running as `fibers` with the trial's first actors; `seed` the trial's.
    SimRoles(SimTrial& trial, const std::vector<RoleLaunch>& roles, std::vector<sim::FiberId> fibers, uint64_t seed);

    size_t size() const { return m_roles.size(); }
    const RoleLaunch& launch(size_t i) const { return m_roles[i]; }
    sim::FiberId fiber(size_t i) const { return m_fibers[i]; }
    // Throws logic_error when no role of the trial is `actor`.
    size_t index(const std::string& actor) const;
    // Its current fiber has ended: its body returned, or a kill ended it.
    bool finished(size_t i) { return m_killed[i] || m_trial.world.scheduler().finished(m_fibers[i]); }

    // SIGKILL: the fiber and its tasks' never run their own code again.
    void kill(size_t i);
    // SIGSTOP and SIGCONT of its fiber.
    void pause(size_t i) { m_trial.world.scheduler().pause(m_fibers[i]); }
    void resume(size_t i) { m_trial.world.scheduler().unpause(m_fibers[i]); }
    bool paused(size_t i) { return !m_killed[i] && m_trial.world.scheduler().paused(m_fibers[i]); }
    // A new process: its own connections and generator, under the same name.
    void start(size_t i);
    // CLIENT KILL of its Redis connection and its tasks': how many were open.
    int64_t drop_links(size_t i);
    // Its link to `server`, its tasks' beside it (a role process's threads share its network): how
    // many held calls the change let go.
    int64_t set_link(size_t i, LinkServer server, const LinkMode& mode);

private:
    SimTrial& m_trial;
    const std::vector<RoleLaunch>& m_roles;
    std::vector<sim::FiberId> m_fibers;
    std::vector<bool> m_killed;
    std::vector<sim::SimConnection*> m_conns;     // each role's current Redis connection
    std::vector<sim::SimConnection*> m_pg_conns;  // and its PostgreSQL one
    std::vector<SimTasks*> m_tasks;               // and its tasks (S3's workers)
    uint64_t m_seed;
    int m_restarts = 0;
};

}  // namespace relab::sim_backend_detail
