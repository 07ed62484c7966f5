// Ports on a simulated world for tests that drive one part of a role directly (a consumer's lock,
// its delivery, its write, ...): the server models and network the simulated labs run on, with
// fixed latencies, and no scenario, supervisor or other role unless the test adds one.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ports/seeded_rng.h"
#include "roles/event.h"
#include "roles/role_settings.h"
#include "roles/roles.h"
#include "sim/sim_ports.h"
#include "sim/sim_world.h"

namespace relab::test {

// One actor's ports, as the simulator gives a role process: connections and a generator of its own.
struct SimActorPorts {
    SimActorPorts(sim::SimWorld& w, History& h, uint64_t seed, Tasks* tasks = nullptr)
        : rng(seed), clock(w), stream(w, &redis), kv(w, &redis), orders(w, &pg), outbox(w, &pg),
          ports{clock, rng, stream, kv, orders, outbox, h, nullptr, tasks} {
        w.redis().open_connection(redis);
        w.postgres().open_connection(pg);
    }
    SeededRng rng;
    sim::SimConnection redis;
    sim::SimConnection pg;
    sim::SimClock clock;
    sim::SimStream stream;
    sim::SimKv kv;
    sim::SimOrderStore orders;
    sim::SimOutbox outbox;
    RolePorts ports;
};

// Tasks as fibers of the world's scheduler, each on ports of its own, as the simulator runs S3's
// workers.
class SimFiberTasks : public Tasks {
public:
    SimFiberTasks(sim::SimWorld& w, History& h) : m_world(w), m_history(h) {}
    void spawn(const std::string& actor, Body body) override {
        m_actors.push_back(std::make_unique<SimActorPorts>(m_world, m_history, m_actors.size() + 100));
        RolePorts& ports = m_actors.back()->ports;
        m_fibers.push_back(
            m_world.scheduler().spawn(actor, [body = std::move(body), &ports] { body(ports); }, m_world.now()));
    }
    void join_all() override {
        for (sim::FiberId f : m_fibers) m_world.scheduler().join(f);
    }
    bool failed() override { return false; }  // a task that throws fails the scheduler's run at once

private:
    sim::SimWorld& m_world;
    History& m_history;
    std::vector<std::unique_ptr<SimActorPorts>> m_actors;
    std::vector<sim::FiberId> m_fibers;
};

// A world with the settings' stream and group (created at "$", empty), order 42 at version 0, a
// history, and actors spawned as fibers on ports of their own.
class SimRoleWorld {
public:
    explicit SimRoleWorld(const RoleSettings& s) : m_settings(s) {
        sim::Latency l;
        l.rtt_min = l.rtt_max = Nanos{100'000};
        l.wakeup_min = l.wakeup_max = Nanos{30'000};
        world.reset(l, Nanos{0}, 1);
        world.orders().reset({{42, "new", 0}});
        world.streams().create_group(s.stream.key, s.stream.group, "$", true);
        history.reset(1);
    }

    // Runs body(ports) as actor `actor`'s fiber from `start`; the ports live as long as the world.
    void spawn(const std::string& actor, std::function<void(RolePorts&)> body, Nanos start = Nanos{0}) {
        m_actors.push_back(std::make_unique<SimActorPorts>(world, history, m_actors.size() + 1, &tasks));
        RolePorts& ports = m_actors.back()->ports;
        world.scheduler().spawn(actor, [body = std::move(body), &ports] { body(ports); }, start);
    }

    // XADDs the events to the settings' stream at the server model, before the run (no reader is
    // blocked yet): their entry IDs.
    std::vector<std::string> publish(const std::vector<Event>& events) {
        std::vector<std::string> ids;
        for (const Event& e : events)
            ids.push_back(world.streams().xadd(m_settings.stream.key, event_fields(e), world.now()));
        return ids;
    }

    // Runs the world until it is idle; a fiber's failure is rethrown.
    void run(Millis limit = Millis{60'000}) {
        const auto stop = world.scheduler().run(limit);
        if (stop == sim::Scheduler::Stop::fiber_failed) {
            const std::exception_ptr failure = world.scheduler().failure();
            world.scheduler().cancel_all();
            std::rethrow_exception(failure);
        }
        EXPECT_EQ(stop, sim::Scheduler::Stop::idle) << "still running: " << world.scheduler().unfinished().size();
        world.scheduler().cancel_all();
    }

    // The records of `op`, in order.
    std::vector<HistoryRecord> records(Op op) const {
        std::vector<HistoryRecord> out;
        for (const auto& r : history.records())
            if (r.op == op) out.push_back(r);
        return out;
    }
    // Every record's op in order, each as its name.
    std::vector<std::string> ops() const {
        std::vector<std::string> out;
        for (const auto& r : history.records()) out.push_back(to_string(r.op));
        return out;
    }

    sim::SimWorld world;
    sim::SimHistory history;
    SimFiberTasks tasks{world, history};

private:
    const RoleSettings& m_settings;
    std::vector<std::unique_ptr<SimActorPorts>> m_actors;
};

}  // namespace relab::test
