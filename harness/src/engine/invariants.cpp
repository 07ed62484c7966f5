#include "engine/invariants.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "ports/seed_text.h"

namespace relab {

std::optional<std::string> accounting_violation(const Accounting& a) {
    if (auto why = published_split_violation(a)) return why;
    if (a.unapplied > a.processed_once + a.duplicated)
        return fmt::format("unapplied {} exceeds the entries processed ({})", a.unapplied,
                           a.processed_once + a.duplicated);
    // Every figure the accounting has counts something: none is below zero.
    for (const AccountingFigure& f : accounting_figures())
        if (a.*f.count < 0) return fmt::format("a negative count: {} {}", f.name, a.*f.count);
    if (a.side_effects_out_of_order > a.side_effects)
        return fmt::format("{} orders with side effects out of order, but {} side effects sent",
                           a.side_effects_out_of_order, a.side_effects);
    return std::nullopt;
}

namespace {

// A fault is one (index, action, target): the nemesis fires it and completes it before it fires it
// again, so its records alternate invoke, completion.
using FaultKey = std::tuple<int64_t, std::string, std::string>;

std::optional<std::string> fault_step(std::map<FaultKey, int>& open, const HistoryRecord& r) {
    const FaultKey k{r.data.value("fault", int64_t{0}), r.data.value("action", ""), r.data.value("target", "")};
    const std::string phase = r.data.value("phase", "");
    int& n = open[k];
    if (phase == "invoke") {
        if (n != 0)
            return fmt::format("fault {} ({} of {}) invoked again at {} ns before its last invoke completed",
                               std::get<0>(k), std::get<1>(k), std::get<2>(k), r.t_ns);
        n = 1;
    } else if (phase == "ok" || phase == "fail") {
        if (n != 1)
            return fmt::format("fault {} ({} of {}) completed ({}) at {} ns with no invoke before it", std::get<0>(k),
                               std::get<1>(k), std::get<2>(k), phase, r.t_ns);
        n = 0;
    } else {
        return fmt::format("a fault record at {} ns with phase \"{}\" (invoke, ok or fail expected)", r.t_ns, phase);
    }
    return std::nullopt;
}

// A client's request: its send opens it, its answer (same request, same attempt) completes it, and
// an actor has at most one open. A kill or restart of the actor leaves its open request
// indeterminate, as a crashed process's op is in Jepsen's histories; so does the trial's end.
struct OpenRequest {
    std::string actor, request;
    int64_t attempt = 0;
    bool open = false;
};

std::optional<std::string> request_step(std::vector<OpenRequest>& actors, const HistoryRecord& r) {
    const bool fault = r.op == Op::fault;
    const std::string& actor = fault ? r.data.value("target", r.actor) : r.actor;
    auto it = std::find_if(actors.begin(), actors.end(), [&](const OpenRequest& o) { return o.actor == actor; });
    if (fault) {
        const std::string action = r.data.value("action", "");
        if (it != actors.end() && (action == "kill" || action == "restart")) it->open = false;
        return std::nullopt;
    }
    if (it == actors.end()) it = actors.insert(actors.end(), OpenRequest{actor, "", 0, false});
    const std::string request = r.data.value("request", "");
    const int64_t attempt = r.data.value("attempt", int64_t{0});
    if (r.op == Op::send) {
        if (it->open)
            return fmt::format("{} sent {} (attempt {}) at {} ns while {} (attempt {}) was still open", actor, request,
                               attempt, r.t_ns, it->request, it->attempt);
        *it = OpenRequest{actor, request, attempt, true};
    } else {
        if (!it->open || it->request != request || it->attempt != attempt)
            return fmt::format("{}'s answer to {} (attempt {}) at {} ns completes no open send of it", actor, request,
                               attempt, r.t_ns);
        it->open = false;
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> pairing_violation(const std::vector<HistoryRecord>& history) {
    std::map<FaultKey, int> faults;
    std::vector<OpenRequest> requests;
    for (const auto& r : history) {
        std::optional<std::string> why;
        if (r.op == Op::fault) why = fault_step(faults, r);
        if (!why && (r.op == Op::fault || r.op == Op::send || r.op == Op::answer)) why = request_step(requests, r);
        if (why) return why;
    }
    for (const auto& [k, n] : faults)
        if (n != 0)
            return fmt::format("fault {} ({} of {}) was invoked and never completed", std::get<0>(k), std::get<1>(k),
                               std::get<2>(k));
    return std::nullopt;
}

void check_trial_invariants(const Scenario& s, const TrialOutcome& t) {
    std::optional<std::string> why = accounting_violation(t.accounting);
    if (!why) why = pairing_violation(t.history);
    if (why)
        throw HarnessError(fmt::format("{} trial {} (seed {}): relab's own accounting is inconsistent: {}", s.id, t.trial,
                                       seed_text(t.seed), *why));
}

}  // namespace relab
