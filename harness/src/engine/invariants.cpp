#include "engine/invariants.h"

#include <map>
#include <tuple>

#include <fmt/format.h>

#include "ports/seed_text.h"

namespace relab {

std::optional<std::string> accounting_violation(const Accounting& a) {
    if (a.published != a.processed_once + a.duplicated + a.lost + a.dead_lettered)
        return fmt::format("published {} != processed once {} + duplicated {} + lost {} + dead-lettered {}",
                           a.published, a.processed_once, a.duplicated, a.lost, a.dead_lettered);
    if (a.unapplied > a.processed_once + a.duplicated)
        return fmt::format("unapplied {} exceeds the entries processed ({})", a.unapplied,
                           a.processed_once + a.duplicated);
    for (const int v : {a.redelivered, a.unexpected, a.stale_overwrites, a.side_effects, a.side_effects_out_of_order,
                        a.republished, a.reapplied, a.skipped, a.lost, a.duplicated, a.dead_lettered})
        if (v < 0) return fmt::format("a negative count ({})", v);
    if (a.side_effects_out_of_order > a.side_effects)
        return fmt::format("{} orders with side effects out of order, but {} side effects sent",
                           a.side_effects_out_of_order, a.side_effects);
    return std::nullopt;
}

std::optional<std::string> pairing_violation(const std::vector<HistoryRecord>& history) {
    // A fault is one (index, action, target): the nemesis fires it and completes it before it fires
    // it again, so its records alternate invoke, completion.
    using Key = std::tuple<int64_t, std::string, std::string>;
    std::map<Key, int> open;
    for (const auto& r : history) {
        if (r.op != Op::fault) continue;
        const Key k{r.data.value("fault", int64_t{0}), r.data.value("action", ""), r.data.value("target", "")};
        const std::string phase = r.data.value("phase", "");
        int& n = open[k];
        if (phase == "invoke") {
            if (n != 0)
                return fmt::format("fault {} ({} of {}) invoked again at {} ns before its last invoke completed",
                                   std::get<0>(k), std::get<1>(k), std::get<2>(k), r.t_ns);
            n = 1;
        } else if (phase == "ok" || phase == "fail") {
            if (n != 1)
                return fmt::format("fault {} ({} of {}) completed ({}) at {} ns with no invoke before it",
                                   std::get<0>(k), std::get<1>(k), std::get<2>(k), phase, r.t_ns);
            n = 0;
        } else {
            return fmt::format("a fault record at {} ns with phase \"{}\" (invoke, ok or fail expected)", r.t_ns, phase);
        }
    }
    for (const auto& [k, n] : open)
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
