// What a simulated role or task is given, as a role process gets it in the real backend: its own
// connections, generator and ports on the trial's world (Actor), and S3's workers as fibers of
// the trial's scheduler (SimTasks).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ports/link_mode.h"
#include "ports/seeded_rng.h"
#include "roles/roles.h"
#include "sim/sim_ports.h"
#include "sim/sim_world.h"

namespace relab::sim_backend_detail {

struct Actor;

// A role's tasks (S3's workers) as fibers of the trial's scheduler, each with an Actor of its own
// (its own connections and generator, as a thread of the role process has in the real backend).
// The nemesis kills them with their role (kill_all), as a SIGKILL kills a process's threads.
class SimTasks : public Tasks {
public:
    SimTasks(sim::SimWorld& w, History& h, uint64_t seed) : m_world(w), m_history(h), m_seed(seed) {}
    ~SimTasks() override;
    // A new trial (or a restarted role): no tasks; the scheduler's reset has ended their fibers.
    void reset(uint64_t seed);
    void spawn(const std::string& actor, Body body) override;
    void join_all() override {
        for (sim::FiberId f : m_fibers) m_world.scheduler().join(f);
    }
    // A task that throws fails its fiber, and the scheduler the trial, at once.
    bool failed() override { return false; }
    void kill_all();
    // The tasks' Redis connections (drop_link of their role or of every client), and their
    // connections to `server` (a link fault of their role).
    std::vector<sim::SimConnection*> redis_connections();
    std::vector<sim::SimConnection*> connections(LinkServer server);

private:
    sim::SimWorld& m_world;
    History& m_history;
    uint64_t m_seed;
    std::vector<std::unique_ptr<Actor>> m_actors;
    std::vector<sim::FiberId> m_fibers;
};

// Everything one actor gets, as a role process gets its own connections in the real backend.
struct Actor {
    SeededRng rng;
    sim::SimConnection redis;  // its Stream and Kv share one connection, as a role process's do
    sim::SimConnection pg;     // its OrderStore and Outbox share one, as a role process's PgSession
    sim::SimClock clock;
    sim::SimStream stream;
    sim::SimKv kv;
    sim::SimOrderStore orders;
    sim::SimOutbox outbox;
    sim::SimOrderTable order_table;
    SimTasks tasks;
    RolePorts ports;
    Actor(sim::SimWorld& w, History& h, uint64_t seed)
        : rng(seed), clock(w), stream(w, &redis), kv(w, &redis), orders(w, &pg), outbox(w, &pg), order_table(w, &pg),
          tasks(w, h, derive_seed(seed, "tasks")), ports{clock, rng, stream, kv, orders, outbox, h, &order_table, &tasks} {}
    // Its connections opened, as its process opens them when it starts.
    void connect(sim::SimWorld& w) {
        w.redis().open_connection(redis);
        w.postgres().open_connection(pg);
    }
};

}  // namespace relab::sim_backend_detail
