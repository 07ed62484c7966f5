#include "backend_sim/sim_actor.h"

namespace relab::sim_backend_detail {

SimTasks::~SimTasks() = default;

void SimTasks::reset(uint64_t seed) {
    m_seed = seed;
    m_actors.clear();
    m_fibers.clear();
}

void SimTasks::spawn(const std::string& actor, Body body) {
    auto a = std::make_unique<Actor>(m_world, m_history, derive_seed(m_seed, "task:" + actor));
    a->connect(m_world);
    RolePorts& ports = a->ports;
    m_actors.push_back(std::move(a));
    // A thread starts at once; it runs once the scheduler gets to it (a wake-up's delay).
    m_fibers.push_back(m_world.scheduler().spawn(
        actor, [body = std::move(body), &ports] { body(ports); }, m_world.now() + m_world.network().draw_wakeup()));
}

void SimTasks::kill_all() {
    for (size_t i = 0; i < m_fibers.size(); ++i) {
        m_world.scheduler().kill(m_fibers[i]);
        m_world.drop_fiber(m_fibers[i]);
        m_actors[i]->pg.open = false;
        m_actors[i]->tasks.kill_all();
    }
}

std::vector<sim::SimConnection*> SimTasks::redis_connections() { return connections(LinkServer::redis); }

std::vector<sim::SimConnection*> SimTasks::connections(LinkServer server) {
    std::vector<sim::SimConnection*> out;
    for (auto& a : m_actors) out.push_back(server == LinkServer::redis ? &a->redis : &a->pg);
    return out;
}

}  // namespace relab::sim_backend_detail
