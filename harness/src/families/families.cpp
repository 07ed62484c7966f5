// The lab families, one row each (engine/family.h): the one place that says, per kind of lab, how
// its trials run on either backend and why a backend cannot run it.
#include <algorithm>

#include <fmt/format.h>

#include "check/idem_check.h"
#include "engine/family.h"
#include "engine/supervisor.h"
#include "families/probe.h"
#include "families/skip_reasons.h"
#include "fault/faults.h"

namespace relab {

namespace {

int runs_of(const Scenario& s, std::optional<int> override_runs) { return override_runs.value_or(s.runs); }
int one_trial(const Scenario&, std::optional<int>) { return 1; }
int cases_of(const Scenario& s, std::optional<int>) { return static_cast<int>(s.sessions().cases.size()); }
Nanos no_budget(const Scenario&) { return Nanos{0}; }  // a probe bounds its own steps
std::optional<std::string> runs_anywhere(const Scenario&, const std::string&) { return std::nullopt; }

// --- the stream labs ---

void prepare_stream(const Scenario& s, TrialStore& store) {
    const StreamLab& flow = s.flow();
    store.reset_orders(initial_order_rows(flow), TrialStore::Tables{.inbox = flow.write.dedupe != WriteDedupe::none,
                                                                    .source = flow.dispatcher.enabled,
                                                                    .side_effects = flow.write.side_effect});
    for (const auto& key : lab_stream_keys(flow.stream, flow.shard)) store.create_group(key, flow.stream.group);
}

std::optional<Nanos> supervise_stream(const Scenario& s, const std::vector<RoleLaunch>& roles, Control& c) {
    supervise_stream_trial(s, roles, c);
    return std::nullopt;  // times count from the publishing role's start record
}

TrialOutcome finish_stream(const Scenario& s, int trial, uint64_t seed, std::vector<HistoryRecord> history,
                           TrialStore& store) {
    const StreamLab& flow = s.flow();
    if (flow.write.side_effect) check_side_effects_recorded(history, store.side_effects());
    std::vector<StreamEntry> entries;
    for (const auto& key : lab_stream_keys(flow.stream, flow.shard)) {
        auto part = store.xrange(key);
        entries.insert(entries.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    }
    return check_trial(s, trial, seed, std::move(history), store.rows(), std::move(entries));
}

// --- the idempotency middleware's clients ---

void prepare_idem(const Scenario& s, TrialStore& store) { store.reset_placed_orders(s.idem().layer4); }

std::optional<Nanos> supervise_idem(const Scenario& s, const std::vector<RoleLaunch>&, Control& c) {
    return supervise_idem_trial(s, c);  // the go signal the clients started on
}

TrialOutcome finish_idem(const Scenario& s, int trial, uint64_t seed, std::vector<HistoryRecord> history,
                         TrialStore& store) {
    return check_idem_trial(s, trial, seed, std::move(history), store.placed_orders());
}

// Trial 1's faults as figures beside the article's, and the duplicate orders it documented.
void idem_figures(LabResult& lab) {
    // Trial 1's, whichever shard ran it (`relab merge` takes them from that shard).
    const auto first = std::find_if(lab.trials.begin(), lab.trials.end(), [](const TrialOutcome& t) { return t.trial == 1; });
    if (first == lab.trials.end()) return;
    const Scenario& s = lab.scenario;
    for (auto& m : idem_fault_measurements(s, first->history)) lab.measurements.push_back(std::move(m));
    const IdemSpec& idem = s.idem();
    if (!idem.documented_duplicates.empty())
        lab.measurements.push_back({"duplicate orders (from the orders table)",
                                    std::to_string(first->idem.counts.duplicates), idem.documented_duplicates,
                                    idem.documented_duplicates_note, idem.documented_duplicates_note_vi,
                                    "đơn trùng (đếm trong bảng orders)"});
}

std::optional<std::string> sessions_sim_skip(const Scenario& s) {
    for (const auto& c : s.sessions().cases)
        for (const auto& session : c.sessions)
            for (const auto& step : session.steps)
                if (step.redis)
                    return "scripted redis-cli sessions check each reply against a real redis-server; they run on the "
                           "real backend only (the simulator runs workload labs)";
    return "scripted sessions run on the real backend only (the simulator runs workload labs)";
}

std::optional<std::string> benchmark_sim_skip(const Scenario&) {
    return "measures the claim's throughput on this machine's redis-server and PostgreSQL (with redis-benchmark and "
           "pgbench); simulated time has no cost to measure (the real backend runs it)";
}

std::optional<std::string> cluster_sim_skip(const Scenario&) {
    return "forms a Redis Cluster of real redis-servers (slots, CROSSSLOT, keys per node); the simulator has no "
           "cluster model (the real backend runs it)";
}

const std::vector<LabFamily> k_families = {
    {.kind = LabKind::stream, .name = "stream", .planned_trials = runs_of, .budget = stream_trial_budget,
     .sim_skip_reason = stream_sim_skip_reason, .real_skip_reason = runs_anywhere, .roles = trial_roles,
     .prepare = prepare_stream, .supervise = supervise_stream, .finish = finish_stream},
    {.kind = LabKind::sessions, .name = "sessions", .planned_trials = cases_of, .budget = no_budget,
     .sim_skip_reason = sessions_sim_skip, .real_skip_reason = nx_get_skip_reason, .open_probe = open_sessions_probe},
    {.kind = LabKind::idem_clients, .name = "idempotency clients", .planned_trials = runs_of,
     .budget = idem_trial_budget, .sim_skip_reason = idem_sim_skip_reason, .real_skip_reason = nx_get_skip_reason,
     .roles = trial_roles, .prepare = prepare_idem, .supervise = supervise_idem, .finish = finish_idem,
     .after_trials = idem_figures},
    {.kind = LabKind::idem_benchmark, .name = "idempotency benchmark", .planned_trials = one_trial,
     .budget = no_budget, .sim_skip_reason = benchmark_sim_skip, .real_skip_reason = runs_anywhere,
     .open_probe = open_benchmark_probe},
    {.kind = LabKind::idem_cluster, .name = "Redis Cluster probe", .planned_trials = runs_of, .budget = no_budget,
     .sim_skip_reason = cluster_sim_skip, .real_skip_reason = runs_anywhere, .open_probe = open_cluster_probe},
};

}  // namespace

const std::vector<LabFamily>& lab_families() { return k_families; }

const LabFamily& family_of(LabKind kind) {
    for (const auto& f : k_families)
        if (f.kind == kind) return f;
    throw std::logic_error("a LabKind without its row in families/families.cpp");
}

}  // namespace relab
