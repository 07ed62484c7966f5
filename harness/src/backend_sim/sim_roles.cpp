#include "backend_sim/sim_roles.h"

#include <stdexcept>

#include <fmt/format.h>

namespace relab::sim_backend_detail {

SimRoles::SimRoles(SimTrial& trial, const std::vector<RoleLaunch>& roles, std::vector<sim::FiberId> fibers,
                   uint64_t seed)
    : m_trial(trial), m_roles(roles), m_fibers(std::move(fibers)), m_killed(roles.size(), false), m_seed(seed) {
    for (size_t i = 0; i < roles.size(); ++i) {
        m_conns.push_back(&m_trial.actors.at(i)->redis);
        m_pg_conns.push_back(&m_trial.actors.at(i)->pg);
        m_tasks.push_back(&m_trial.actors.at(i)->tasks);
    }
}

size_t SimRoles::index(const std::string& actor) const {
    for (size_t i = 0; i < m_roles.size(); ++i)
        if (m_roles[i].actor == actor) return i;
    throw std::logic_error("no role " + actor + " in this trial");
}

void SimRoles::kill(size_t i) {
    m_trial.world.scheduler().kill(m_fibers[i]);
    m_trial.world.drop_fiber(m_fibers[i]);
    m_tasks[i]->kill_all();  // its threads die with it
    // Its PostgreSQL connection closes with it: an open transaction (an outbox claim) is gone.
    m_pg_conns[i]->open = false;
    m_killed[i] = true;
}

void SimRoles::start(size_t i) {
    sim::SimWorld& world = m_trial.world;
    const RoleLaunch& launch = m_roles[i];
    auto a = std::make_unique<Actor>(world, m_trial.history,
                                     derive_seed(m_seed, fmt::format("restart:{}:{}", launch.actor, ++m_restarts)));
    Actor& ports = *a;
    ports.connect(world);
    // Its links are its proxies' on the real backend, which outlive a restart.
    ports.redis.link = m_conns[i]->link;
    ports.pg.link = m_pg_conns[i]->link;
    m_conns[i] = &ports.redis;
    m_pg_conns[i] = &ports.pg;
    m_tasks[i] = &ports.tasks;
    m_trial.restarted.push_back(std::move(a));
    const RoleSettings& settings = m_trial.settings;
    m_fibers[i] = world.scheduler().spawn(
        launch.actor,
        [&settings, &launch, &ports] { run_role(launch.role, launch.actor, settings, ports.ports, kBarrierTimeout); },
        world.now() + world.network().draw_start());
    m_killed[i] = false;
}

int64_t SimRoles::drop_links(size_t i) {
    int64_t closed = 0;
    if (m_trial.world.drop_connection(*m_conns[i])) ++closed;
    for (sim::SimConnection* task : m_tasks[i]->redis_connections())
        if (m_trial.world.drop_connection(*task)) ++closed;
    return closed;
}

int64_t SimRoles::set_link(size_t i, LinkServer server, const LinkMode& mode) {
    std::vector<sim::SimConnection*> conns = m_tasks[i]->connections(server);
    conns.push_back(server == LinkServer::redis ? m_conns[i] : m_pg_conns[i]);
    int64_t released = 0;
    for (sim::SimConnection* c : conns) released += m_trial.world.network().set_link(*c, mode);
    return released;
}

}  // namespace relab::sim_backend_detail
