#include "backend_sim/sim_backend.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "backend_sim/sim_control.h"
#include "backend_sim/sim_trial.h"
#include "check/idem_check.h"
#include "engine/family.h"
#include "engine/invariants.h"
#include "engine/seeds.h"
#include "engine/trial_loop.h"
#include "ports/seed_text.h"
#include "sim/sim_ports.h"

namespace relab {

namespace {

void fnv1a(uint64_t& h, const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
    h = (h ^ 0xff) * 0x100000001b3ULL;  // a separator, so "ab","c" differs from "a","bc"
}

}  // namespace

std::optional<std::string> sim_skip_reason(const Scenario& s) {
    if (s.only_backend == "real") return "runs on real servers only: " + s.only_backend_why;
    return family_of(s.kind).sim_skip_reason(s);
}

uint64_t trial_fingerprint(const TrialOutcome& t) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const auto& r : t.history) fnv1a(h, to_json(r).dump());
    for (const auto& row : t.final_rows) fnv1a(h, fmt::format("{}|{}|{}", row.id, row.status, row.version));
    for (const auto& e : t.stream) {
        fnv1a(h, e.id);
        for (const auto& [k, v] : e.fields) fnv1a(h, k + "=" + v);
    }
    for (const auto& o : t.idem.orders) fnv1a(h, fmt::format("{}|{}|{}|{}", o.id, o.user_id, o.idem_key, o.payload));
    return h;
}

std::optional<int> trial_of_seed(uint64_t lab_seed_value, uint64_t seed, int limit) {
    for (int t = 1; t <= limit; ++t)
        if (trial_seed(lab_seed_value, t) == seed) return t;
    return std::nullopt;
}

using sim_backend_detail::SimControl;
using sim_backend_detail::SimTrial;
using sim_backend_detail::SimTrialStore;

struct SimBackend::Impl {
    SimOptions opts;
    SimTrial current;  // the trial being run: one, its world and actors reused by the next

    explicit Impl(SimOptions o) : opts(std::move(o)) {}

    TrialOutcome run_trial(const Scenario& s, int trial, uint64_t seed) {
        return run_trial(s, trial_roles(s), trial, seed);
    }

    // One trial of a role family (engine/family.h): its roles as fibers under its supervisor, on a
    // fresh world its prepare filled; sim_skip_reason keeps the probe families from getting here.
    TrialOutcome run_trial(const Scenario& s, const std::vector<RoleLaunch>& roles, int trial, uint64_t seed) {
        const LabFamily& family = family_of(s.kind);
        if (!family.has_roles())
            throw std::logic_error(fmt::format("the simulator runs no {} lab ({})", family.name, s.id));
        const Nanos limit = sim_backend_detail::kEpoch + family.budget(s);
        const StreamLab* flow = s.flow_if();
        current.stream_keys = flow ? lab_stream_keys(flow->stream, flow->shard) : std::vector<std::string>{};
        SimTrialStore store(current.world);
        std::optional<Nanos> origin;
        std::vector<HistoryRecord> records = current.run_roles(
            s, roles, trial, seed, limit, [&] { family.prepare(s, store); },
            [&](const std::vector<sim::FiberId>& fibers) {
                SimControl control(current, s, roles, fibers, seed);
                origin = family.supervise(s, roles, control);
            });
        if (origin) {
            for (auto& r : records) r.t_ns -= origin->count();
        } else {
            rebase_on_start(records);
        }
        return family.finish(s, trial, seed, std::move(records), store);
    }

    void check_determinism(const Scenario& s, const std::vector<RoleLaunch>& roles, const TrialOutcome& first) {
        const TrialOutcome again = run_trial(s, roles, first.trial, first.seed);
        const uint64_t a = trial_fingerprint(first), b = trial_fingerprint(again);
        if (a != b)
            throw DeterminismError(fmt::format(
                "{} trial {} (seed {}) is not deterministic: two runs gave history fingerprints {} and {}", s.id,
                first.trial, seed_text(first.seed), seed_text(a), seed_text(b)));
    }

    LabResult run_workload(const Scenario& s) {
        LabResult lab;
        lab.scenario = s;
        // Every trial of the lab runs its roles with the same settings: built once, not per trial.
        current.settings = role_settings(s);
        current.settings_of = &s;
        struct Forget {
            const Scenario*& of;
            ~Forget() { of = nullptr; }
        } forget{current.settings_of};
        // A lab that requires DELEX runs on a Redis 8.4 model; any other on Redis 7.0's.
        current.world.kv().delex = std::find(s.needs_features.begin(), s.needs_features.end(), "DELEX") != s.needs_features.end();
        if (const StreamLab* flow = s.flow_if(); flow && flow->lock.enabled) lab.lock_release_method = sim::SimKv(current.world).delete_if_equals_method();
        const LabFamily& family = family_of(s.kind);
        const std::vector<RoleLaunch> roles = family.roles(s);
        if (opts.replay) return replay(s, roles, std::move(lab));
        run_trial_loop(s, loop_plan(s, family, roles), lab, [&](int t, uint64_t seed) -> TrialResult {
            return run_trial(s, roles, t, seed);
        });
        if (family.after_trials) family.after_trials(lab);
        return lab;
    }

    LoopPlan loop_plan(const Scenario& s, const LabFamily& family, const std::vector<RoleLaunch>& roles) {
        LoopPlan p;
        p.trials = family.planned_trials(s, opts.trials);
        p.first_trial = opts.first_trial;
        p.seed = opts.seed;
        p.progress = opts.progress;
        p.progress_every = 100;
        p.shard = opts.shard;
        p.keep.keep_all_trials = kKeepAllHistories;
        p.keep.keep_all_events = kKeepAllEvents;
        p.keep.keep_first = opts.keep_histories;
        p.keep.kept_wrong = kFailingSeedsKept;
        p.verify = [this, &s, &roles](const TrialOutcome& o) {
            if (o.trial == 1 && opts.self_check) check_determinism(s, roles, o);
        };
        p.on_kept = [](TrialOutcome& o) { fold_record_fields(o.history); };  // as the reporters read a history
        return p;
    }

    // --replay: exactly the trial with that seed, with its timeline.
    LabResult replay(const Scenario& s, const std::vector<RoleLaunch>& roles, LabResult lab) {
        const int trial = trial_of_seed(lab_seed(s, opts.seed), *opts.replay).value_or(1);
        if (opts.progress) opts.progress(s.id, 1, 1);
        lab.trials.push_back(run_trial(s, roles, trial, *opts.replay));
        check_trial_invariants(s, lab.trials.back());
        if (opts.self_check) check_determinism(s, roles, lab.trials.back());
        fold_record_fields(lab.trials.back().history);
        lab.replay_seed = opts.replay;
        return lab;
    }

    static constexpr size_t kFailingSeedsKept = 10;
};

SimBackend::SimBackend(SimOptions opts) : m_impl(std::make_unique<Impl>(std::move(opts))) {}

SimBackend::~SimBackend() = default;

LabResult SimBackend::run(const Scenario& s) {
    return run_with_beside(s, [this](const Scenario& x) { return run_one(x); });
}

LabResult SimBackend::run_one(const Scenario& s) {
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
    TrialOutcome o = m_impl->run_trial(s, trial, trial_seed);
    fold_record_fields(o.history);
    return o;
}

std::pair<uint64_t, uint64_t> SimBackend::self_check(const Scenario& s, uint64_t seed) {
    const uint64_t a = trial_fingerprint(m_impl->run_trial(s, 1, seed));
    const uint64_t b = trial_fingerprint(m_impl->run_trial(s, 1, seed));
    return {a, b};
}

}  // namespace relab
