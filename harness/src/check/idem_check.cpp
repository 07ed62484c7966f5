#include "check/idem_check.h"

#include <map>
#include <set>

#include <fmt/format.h>

namespace relab {

void IdemCounts::add(const IdemCounts& o) {
    sends += o.sends;
    orders += o.orders;
    duplicates += o.duplicates;
    created += o.created;
    replays += o.replays;
    conflicts += o.conflicts;
    mismatches += o.mismatches;
    layer4 += o.layer4;
    errors += o.errors;
    leaks += o.leaks;
    unanswered += o.unanswered;
}

IdemTrial count_idem_trial(const std::vector<HistoryRecord>& history, std::vector<PlacedOrder> orders) {
    IdemTrial t;
    IdemCounts& c = t.counts;
    c.orders = static_cast<int>(orders.size());
    std::map<std::string, int> per_key;
    std::map<int64_t, int64_t> owner;  // order id -> user
    for (const auto& o : orders) {
        if (++per_key[o.idem_key] > 1) ++c.duplicates;
        owner[o.id] = o.user_id;
    }
    std::set<std::pair<std::string, int64_t>> answered;  // (request, attempt)
    for (const auto& r : history) {
        if (r.op != Op::answer) continue;
        answered.insert({r.data.value("request", ""), r.data.value("attempt", int64_t{0})});
        const int code = r.data.value("code", 0);
        const std::string source = r.data.value("source", "");
        if (source == "created") ++c.created;
        if (source == "replay") ++c.replays;
        if (source == "layer4") ++c.layer4;
        if (code == 409 && source != "layer4") ++c.conflicts;
        if (code == 422) ++c.mismatches;
        if (code >= 500) ++c.errors;
        if (code >= 200 && code < 300) {
            const auto body = nlohmann::json::parse(r.data.value("body", ""), nullptr, false);
            if (body.is_object() && body.contains("order_id") && body["order_id"].is_number_integer()) {
                const int64_t order = body["order_id"];
                const int64_t asker = r.data.value("user_id", int64_t{-1});
                const auto it = owner.find(order);
                if (it != owner.end() && it->second != asker) {
                    ++c.leaks;
                    if (t.leak_examples.size() < 5)
                        t.leak_examples.push_back(fmt::format("leak: user {} ({}) was served order {} of user {}", asker,
                                                              r.data.value("request", ""), order, it->second));
                }
            }
        }
    }
    for (const auto& r : history) {
        if (r.op != Op::send) continue;
        ++c.sends;
        if (!answered.count({r.data.value("request", ""), r.data.value("attempt", int64_t{0})})) ++c.unanswered;
    }
    t.orders = std::move(orders);
    return t;
}

TrialOutcome check_idem_trial(const Scenario& s, int trial, uint64_t seed, std::vector<HistoryRecord> history,
                              std::vector<PlacedOrder> orders) {
    TrialOutcome out = classify_trial(s, trial, seed, std::move(history), {}, {});
    out.idem = count_idem_trial(out.history, std::move(orders));
    out.wrong = out.idem.counts.wrong();
    evaluate_trial(s, out);
    return out;
}

}  // namespace relab
