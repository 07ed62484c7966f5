// One simulated trial's setting, as both real runners have it: a fresh world and history, the
// lab's roles as fibers with their own actors (connections, generator, ports), and a supervisor
// fiber beside them. SimBackend runs every trial on one SimTrial, reused; SimControl reaches the
// world and the actors through it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend_sim/sim_actor.h"
#include "engine/timeouts.h"
#include "engine/trial_store.h"
#include "roles/role_settings.h"
#include "roles/roles.h"
#include "scenario/scenario.h"
#include "sim/sim_ports.h"
#include "sim/sim_world.h"

namespace relab::sim_backend_detail {

// Virtual time starts here in every trial: 1'790'000'000'000 ms since the Unix epoch (late 2026),
// so stream IDs look like the article's.
constexpr Nanos kEpoch = Millis{1'790'000'000'000};
constexpr Millis kBarrierTimeout = timeouts::kBarrier;

// The TrialStore port on the simulated world's models.
class SimTrialStore : public TrialStore {
public:
    explicit SimTrialStore(sim::SimWorld& w) : m_world(w) {}
    // The models are cheap to reset whole: the source tables and outbox go with tmp_orders.
    void reset_orders(const std::vector<OrderRow>& initial, Tables) override {
        m_world.orders().reset(initial);
        m_world.outbox().reset(initial);
    }
    void create_group(const std::string& stream, const std::string& group) override {
        m_world.streams().create_group(stream, group, "$", true);
    }
    std::vector<OrderRow> rows() override { return m_world.orders().rows(); }
    std::vector<SideEffectRow> side_effects() override { return m_world.orders().side_effects(); }
    std::vector<StreamEntry> xrange(const std::string& stream) override { return m_world.streams().xrange(stream); }
    void reset_placed_orders(bool layer4) override { m_world.placed_orders().reset(layer4); }
    std::vector<PlacedOrder> placed_orders() override { return m_world.placed_orders().orders(); }

private:
    sim::SimWorld& m_world;
};

struct SimTrial {
    sim::SimWorld world;
    sim::SimHistory history;
    std::vector<std::unique_ptr<Actor>> actors;
    std::vector<std::unique_ptr<Actor>> restarted;  // roles a fault restarted, this trial
    RoleSettings settings;  // role_settings() of this trial's lab, as a role process receives it
    std::vector<std::string> stream_keys;  // lab_stream_keys() of this trial's stream lab, once per trial
    // While run_workload runs a lab's trials: that lab, whose `settings` it built once.
    const Scenario* settings_of = nullptr;
    // The supervisor's current wait for a stream change; a quiet watchdog of an older one is stale.
    uint64_t quiet_wait = 0;

    // A watchdog queued as the supervisor began waiting for a stream change: if that wait still
    // lasts, nothing changed the stream for the lab's quiet_ms, and the supervisor looks again.
    static void quiet_watchdog(void* ctx, uint64_t wait) {
        auto* self = static_cast<SimTrial*>(ctx);
        if (wait == self->quiet_wait) self->world.stream_changed();
    }

    // Role `index`'s actor for this trial, seeded with `seed`: the last trial's, made new.
    Actor& actor(size_t index, uint64_t seed);

    // As RealBackend's group_drained: every entry now in the stream delivered and acknowledged; a
    // stream that is gone has nothing left, a group that is gone may be created again.
    // With S2's shards: every shard's stream (the cluster is one modelled keyspace here).
    bool drained(const Scenario& s);

    // A fresh world and history, `roles` (trial_roles) as fibers with their own ports and seeds,
    // each starting after a drawn delay, and a supervisor fiber beside them (the runner's parent
    // process), called with the roles' fibers in the same order. Runs until `limit`; a failed
    // fiber, the time limit or a stall throw (naming the trial's seed). `prepare` fills the fresh
    // world's models. Returns the history, its times still absolute.
    template <class Prepare, class Supervise>
    std::vector<HistoryRecord> run_roles(const Scenario& s, const std::vector<RoleLaunch>& roles, int trial,
                                         uint64_t seed, Nanos limit, Prepare prepare, Supervise supervise);

    // After the scheduler stopped: a failed fiber, a time limit with fibers still running or a
    // stall (nothing left to happen, fibers waiting) fail the trial loudly, naming its seed.
    void throw_if_failed_or_unfinished(const Scenario& s, int trial, uint64_t seed, sim::Scheduler::Stop stop);
};

template <class Prepare, class Supervise>
std::vector<HistoryRecord> SimTrial::run_roles(const Scenario& s, const std::vector<RoleLaunch>& roles, int trial,
                                               uint64_t seed, Nanos limit, Prepare prepare, Supervise supervise) {
    world.reset(sim::Latency::from(s.sim), kEpoch, derive_seed(seed, "sim-schedule"));
    restarted.clear();  // after the reset: their fibers are gone
    if (settings_of != &s) settings = role_settings(s);
    prepare();
    history.reset(trial);

    sim::Scheduler& sched = world.scheduler();
    std::vector<sim::FiberId> fibers;
    fibers.reserve(roles.size());
    for (size_t i = 0; i < roles.size(); ++i) {
        const RoleLaunch& launch = roles[i];
        Actor& a = actor(i, derive_seed(seed, static_cast<uint64_t>(i)));
        fibers.push_back(sched.spawn(
            launch.actor,
            [this, &launch, &a] { run_role(launch.role, launch.actor, settings, a.ports, kBarrierTimeout); },
            kEpoch + world.network().draw_start()));
    }
    sched.spawn("supervisor", [&] { supervise(fibers); }, kEpoch);
    throw_if_failed_or_unfinished(s, trial, seed, sched.run(limit));
    return history.take();
}

}  // namespace relab::sim_backend_detail
