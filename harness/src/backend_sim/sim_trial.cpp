#include "backend_sim/sim_trial.h"

#include <stdexcept>

#include <fmt/format.h>

#include "ports/seed_text.h"

namespace relab::sim_backend_detail {

Actor& SimTrial::actor(size_t index, uint64_t seed) {
    if (index < actors.size()) {
        actors[index]->rng = SeededRng(seed);
        actors[index]->tasks.reset(derive_seed(seed, "tasks"));
        actors[index]->redis = sim::SimConnection{};
        actors[index]->pg = sim::SimConnection{};
        actors[index]->connect(world);
        return *actors[index];
    }
    actors.push_back(std::make_unique<Actor>(world, history, seed));
    actors.back()->connect(world);
    return *actors.back();
}

bool SimTrial::drained(const Scenario& s) {
    const StreamLab& flow = s.flow();
    if (!world.redis().up()) return false;
    for (const auto& key : stream_keys) {
        if (!world.streams().exists(key)) continue;
        if (!world.streams().last_delivered(key, flow.stream.group)) return false;
        if (!world.streams().drained(key, flow.stream.group)) return false;
    }
    return true;
}

void SimTrial::throw_if_failed_or_unfinished(const Scenario& s, int trial, uint64_t seed, sim::Scheduler::Stop stop) {
    sim::Scheduler& sched = world.scheduler();
    // Formatted only for an error: this runs after every trial.
    auto where = [&] { return fmt::format("{} trial {} (seed {})", s.id, trial, seed_text(seed)); };
    if (stop == sim::Scheduler::Stop::fiber_failed) {
        const std::string who = sched.failed_fiber();
        const std::exception_ptr error = sched.failure();
        sched.cancel_all();
        try {
            std::rethrow_exception(error);
        } catch (const std::exception& e) {
            if (who == "supervisor") throw std::runtime_error(fmt::format("{}: {}", where(), e.what()));
            throw std::runtime_error(fmt::format("{}: role {} failed: {}", where(), who, e.what()));
        }
    }
    const std::vector<std::string> running = sched.unfinished();
    if (!running.empty()) {
        const double at_ms = static_cast<double>((sched.now() - kEpoch).count()) / 1e6;
        sched.cancel_all();
        if (stop == sim::Scheduler::Stop::time_limit)
            throw std::runtime_error(fmt::format("{} timed out at {:.3f} ms of virtual time; still running: {}",
                                                 where(), at_ms, fmt::join(running, ", ")));
        throw std::runtime_error(fmt::format("{} stalled at {:.3f} ms of virtual time: nothing left to happen, "
                                             "but still running: {}",
                                             where(), at_ms, fmt::join(running, ", ")));
    }
}

}  // namespace relab::sim_backend_detail
