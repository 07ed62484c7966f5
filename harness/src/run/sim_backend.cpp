#include "run/sim_backend.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "ports/seeded_rng.h"
#include "real/interrupt.h"
#include "roles/roles.h"
#include "run/real_backend.h"
#include "sim/sim_ports.h"
#include "sim/sim_world.h"

namespace relab {

namespace {

using sim::FiberId;
using sim::Scheduler;
using sim::SimWorld;

// Virtual time starts here in every trial: 1'790'000'000'000 ms since the Unix epoch (late 2026),
// so stream IDs look like the article's.
constexpr Nanos kEpoch = Millis{1'790'000'000'000};
// As RoleConfig's default for the real role processes.
constexpr Millis kBarrierTimeout{10'000};

// Everything one actor gets, as a role process gets its own connections in the real backend.
struct Actor {
    SeededRng rng;
    sim::SimClock clock;
    sim::SimStream stream;
    sim::SimKv kv;
    sim::SimOrderStore orders;
    sim::SimOutbox outbox;
    RolePorts ports;
    Actor(SimWorld& w, History& h, uint64_t seed)
        : rng(seed), clock(w), stream(w), kv(w), orders(w), outbox(w), ports{clock, rng, stream, kv, orders, outbox, h} {}
};

void fnv1a(uint64_t& h, const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
    h = (h ^ 0xff) * 0x100000001b3ULL;  // a separator, so "ab","c" differs from "a","bc"
}

}  // namespace

std::optional<std::string> sim_skip_reason(const Scenario& s) {
    if (s.kind == ScenarioKind::sessions)
        return "scripted sessions run on the real backend only (the simulator runs workload labs)";
    if (s.idem.enabled)
        return "the idempotency labs run on the real backend only (their middleware runner and server faults are "
               "not simulated yet)";
    return std::nullopt;
}

uint64_t trial_fingerprint(const TrialOutcome& t) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const auto& r : t.history) fnv1a(h, to_json(r).dump());
    for (const auto& row : t.final_rows) fnv1a(h, fmt::format("{}|{}|{}", row.id, row.status, row.version));
    for (const auto& e : t.stream) {
        fnv1a(h, e.id);
        for (const auto& [k, v] : e.fields) fnv1a(h, k + "=" + v);
    }
    return h;
}

std::optional<int> trial_of_seed(uint64_t lab_seed_value, uint64_t seed, int limit) {
    for (int t = 1; t <= limit; ++t)
        if (trial_seed(lab_seed_value, t) == seed) return t;
    return std::nullopt;
}

struct SimBackend::Impl {
    SimOptions opts;
    SimWorld world;
    sim::SimHistory history;
    std::vector<std::unique_ptr<Actor>> actors;

    explicit Impl(SimOptions o) : opts(std::move(o)) {}

    Actor& actor(size_t index, uint64_t seed) {
        if (index < actors.size()) {
            actors[index]->rng = SeededRng(seed);
            return *actors[index];
        }
        actors.push_back(std::make_unique<Actor>(world, history, seed));
        return *actors.back();
    }

    // As RealBackend's group_drained: every published entry delivered and acknowledged.
    bool drained(const Scenario& s) {
        if (!world.streams().last_id(s.stream.key)) return s.events.empty();
        return world.streams().drained(s.stream.key, s.stream.group);
    }

    // The real backend's parent process: waits for the publishing roles, then for the group to
    // drain, raises the stop key and unblocks readers until every consumer has left.
    void supervise(const Scenario& s, const std::vector<FiberId>& consumers, const std::vector<FiberId>& publishers) {
        Scheduler& sched = world.scheduler();
        for (FiberId f : publishers) sched.join(f);
        while (!drained(s)) world.wait_stream_change();
        world.kv().set(kStopKey, "1", sim::SetOptions{}, world.now());
        const Nanos deadline = world.now() + Millis{s.stream.block_ms + 5000};
        for (;;) {
            world.unblock_all_readers();
            sched.sleep_for(Millis{5});
            if (std::all_of(consumers.begin(), consumers.end(), [&](FiberId f) { return sched.finished(f); })) return;
            if (world.now() > deadline) throw sim::SimError("consumers did not stop when told to");
        }
    }

    TrialOutcome run_trial(const Scenario& s, int trial, uint64_t seed) {
        world.reset(sim::Latency::from(s.sim), kEpoch, derive_seed(seed, "sim-schedule"));
        std::vector<OrderRow> initial;
        initial.reserve(s.orders.size());
        for (const auto& o : s.orders) initial.push_back(OrderRow{o.id, o.initial_status, o.initial_version});
        world.orders().reset(initial);
        world.outbox().reset(initial);
        world.streams().create_group(s.stream.key, s.stream.group, "$", true);
        history.reset(trial);

        Scheduler& sched = world.scheduler();
        const std::vector<RoleLaunch> roles = trial_roles(s);
        std::vector<FiberId> consumers, publishers;
        for (size_t i = 0; i < roles.size(); ++i) {
            const RoleLaunch& launch = roles[i];
            Actor& a = actor(i, derive_seed(seed, static_cast<uint64_t>(i)));
            const FiberId f = sched.spawn(
                launch.actor, [&s, &launch, &a] { run_role(launch.role, launch.actor, s, a.ports, kBarrierTimeout); },
                kEpoch + world.draw_start());
            (launch.role == "consumer" ? consumers : publishers).push_back(f);
        }
        sched.spawn("supervisor", [&] { supervise(s, consumers, publishers); }, kEpoch);

        int64_t last_event_ms = 0;
        for (const auto& e : s.events) last_event_ms = std::max(last_event_ms, e.at_ms);
        // The real backend's deadlines: barrier + 60 s for publishing and draining, then BLOCK + 5 s.
        const Nanos limit = kEpoch + kBarrierTimeout + Millis{60'000 + last_event_ms + s.stream.block_ms + 5000};
        const Scheduler::Stop stop = sched.run(limit);
        const std::string where = fmt::format("{} trial {} (seed {})", s.id, trial, seed_text(seed));
        if (stop == Scheduler::Stop::fiber_failed) {
            const std::string who = sched.failed_fiber();
            const std::exception_ptr error = sched.failure();
            sched.cancel_all();
            try {
                std::rethrow_exception(error);
            } catch (const std::exception& e) {
                if (who == "supervisor") throw std::runtime_error(fmt::format("{}: {}", where, e.what()));
                throw std::runtime_error(fmt::format("{}: role {} failed: {}", where, who, e.what()));
            }
        }
        const std::vector<std::string> running = sched.unfinished();
        if (!running.empty()) {
            const double at_ms = static_cast<double>((sched.now() - kEpoch).count()) / 1e6;
            sched.cancel_all();
            if (stop == Scheduler::Stop::time_limit)
                throw std::runtime_error(fmt::format("{} timed out at {:.3f} ms of virtual time; still running: {}",
                                                     where, at_ms, fmt::join(running, ", ")));
            throw std::runtime_error(fmt::format("{} stalled at {:.3f} ms of virtual time: nothing left to happen, "
                                                 "but still running: {}",
                                                 where, at_ms, fmt::join(running, ", ")));
        }

        std::vector<HistoryRecord> records = history.take();
        int64_t origin = 0;  // the publishing role's "start", right after the start barrier
        for (const auto& r : records)
            if (r.op == "start") origin = r.t_ns;
        for (auto& r : records) r.t_ns -= origin;
        return check_trial(s, trial, seed, std::move(records), world.orders().rows(),
                           world.streams().xrange(s.stream.key));
    }

    void check_determinism(const Scenario& s, const TrialOutcome& first) {
        const TrialOutcome again = run_trial(s, first.trial, first.seed);
        const uint64_t a = trial_fingerprint(first), b = trial_fingerprint(again);
        if (a != b)
            throw DeterminismError(fmt::format(
                "{} trial {} (seed {}) is not deterministic: two runs gave history fingerprints {} and {}", s.id,
                first.trial, seed_text(first.seed), seed_text(a), seed_text(b)));
    }

    LabResult run_workload(const Scenario& s) {
        LabResult lab;
        lab.scenario = s;
        if (s.lock.enabled) lab.lock_release_method = sim::SimKv(world).delete_if_equals_method();
        const uint64_t seed = lab_seed(s, opts.seed);
        if (opts.replay) {
            const int trial = trial_of_seed(seed, *opts.replay).value_or(1);
            if (opts.progress) opts.progress(s.id, 1, 1);
            lab.trials.push_back(run_trial(s, trial, *opts.replay));
            if (opts.self_check) check_determinism(s, lab.trials.back());
            lab.replay_seed = opts.replay;
            return lab;
        }
        const int n = opts.trials.value_or(s.runs);
        const bool keep_all = n <= kKeepAllHistories;
        size_t wrong_kept = 0;
        lab.trials.reserve(static_cast<size_t>(n));
        for (int t = 1; t <= n; ++t) {
            throw_if_interrupted();  // Ctrl-C ends a long exploration between trials
            if (opts.progress && (t == 1 || t % 100 == 0 || t == n)) opts.progress(s.id, t, n);
            TrialOutcome o = run_trial(s, t, trial_seed(seed, t));
            if (t == 1 && opts.self_check) check_determinism(s, o);
            const bool keep = keep_all || t <= opts.keep_histories || (o.wrong && wrong_kept < kFailingSeedsKept);
            if (o.wrong && keep) ++wrong_kept;
            if (!keep) {
                // The outcome stays; the timeline is dropped (reporters print none for it).
                o.history = {};
                o.stream = {};
            }
            lab.trials.push_back(std::move(o));
        }
        return lab;
    }

    static constexpr size_t kFailingSeedsKept = 10;
};

SimBackend::SimBackend(SimOptions opts) : m_impl(std::make_unique<Impl>(std::move(opts))) {}

SimBackend::~SimBackend() = default;

LabResult SimBackend::run(const Scenario& s) {
    const auto started = std::chrono::steady_clock::now();
    LabResult lab;
    if (auto reason = sim_skip_reason(s)) {
        lab.scenario = s;
        lab.skipped = true;
        lab.skip_reason = *reason;
    } else {
        lab = m_impl->run_workload(s);
    }
    lab.backend = "sim";
    lab.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    summarize(lab);
    return lab;
}

TrialOutcome SimBackend::run_trial(const Scenario& s, int trial, uint64_t trial_seed) {
    return m_impl->run_trial(s, trial, trial_seed);
}

std::pair<uint64_t, uint64_t> SimBackend::self_check(const Scenario& s, uint64_t seed) {
    const uint64_t a = trial_fingerprint(m_impl->run_trial(s, 1, seed));
    const uint64_t b = trial_fingerprint(m_impl->run_trial(s, 1, seed));
    return {a, b};
}

}  // namespace relab
