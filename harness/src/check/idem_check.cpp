#include "check/idem_check.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "check/record_fields.h"
#include "util/numbers.h"

namespace relab {

namespace {
using record_fields::int_field;
using record_fields::text_field;
}  // namespace

void IdemCounts::add(const IdemCounts& o) {
    for (auto field : {&IdemCounts::sends, &IdemCounts::orders, &IdemCounts::duplicates, &IdemCounts::created,
                       &IdemCounts::replays, &IdemCounts::conflicts, &IdemCounts::mismatches, &IdemCounts::layer4,
                       &IdemCounts::errors, &IdemCounts::leaks, &IdemCounts::unanswered, &IdemCounts::vanished})
        this->*field = add_clamped(this->*field, o.*field);
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
        answered.insert({text_field(r.data, "request"), int_field(r.data, "attempt", 0)});
        const int64_t code = int_field(r.data, "code", 0);
        const std::string source = text_field(r.data, "source");
        if (source == "created") ++c.created;
        if (source == "replay") ++c.replays;
        if (source == "layer4") ++c.layer4;
        if (source == "vanished") ++c.vanished;
        if (code == 409 && source != "layer4") ++c.conflicts;
        if (code == 422) ++c.mismatches;
        if (code >= 500) ++c.errors;
        if (code >= 200 && code < 300) {
            const auto body = nlohmann::json::parse(text_field(r.data, "body"), nullptr, false);
            if (body.is_object() && body.contains("order_id") && body["order_id"].is_number_integer()) {
                const int64_t order = body["order_id"];
                const int64_t asker = int_field(r.data, "user_id", -1);
                const auto it = owner.find(order);
                if (it != owner.end() && it->second != asker) {
                    ++c.leaks;
                    if (t.leak_examples.size() < 5)
                        t.leak_examples.push_back(fmt::format("leak: user {} ({}) was served order {} of user {}", asker,
                                                              text_field(r.data, "request"), order, it->second));
                }
            }
        }
    }
    for (const auto& r : history) {
        if (r.op != Op::send) continue;
        ++c.sends;
        if (!answered.count({text_field(r.data, "request"), int_field(r.data, "attempt", 0)})) ++c.unanswered;
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

std::vector<Measurement> idem_fault_measurements(const Scenario& s, const std::vector<HistoryRecord>& history) {
    std::vector<Measurement> out;
    std::vector<const HistoryRecord*> sorted;
    for (const auto& r : history) sorted.push_back(&r);
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->t_ns < b->t_ns; });
    for (const HistoryRecord* r : sorted) {
        const auto& d = r->data;
        if (r->actor != "nemesis" || r->op != Op::fault || text_field(d, "phase") != "ok") continue;
        const int64_t index = int_field(d, "fault", 0);
        if (index < 1 || index > static_cast<int64_t>(s.faults.size())) continue;
        const FaultSpec& f = s.faults[static_cast<size_t>(index - 1)];
        const std::string action = text_field(d, "action");
        const int64_t before = int_field(d, "idem_keys_before", 0);
        const int64_t after = int_field(d, "idem_keys_after", 0);
        if (action == "flood") {
            out.push_back({"evicted_keys after the flood (" + text_field(d, "policy", "?") + ")",
                           with_thousands(int_field(d, "evicted_keys", 0)), f.documented, f.note, f.note_vi});
            out.push_back({"OOM errors of the flood's writes", with_thousands(int_field(d, "oom_errors", 0)), "", "", ""});
            out.push_back({"idempotency keys left after the flood", fmt::format("{} of {}", after, before), "", "", ""});
        } else if (action == "restart" && fault_target_of(s.faults, static_cast<size_t>(index - 1)) == FaultTarget::redis) {
            out.push_back({"idempotency keys lost by the crash (" + text_field(d, "persistence", "?") + ")",
                           fmt::format("{} of {}", before - after, before), f.documented, f.note, f.note_vi});
        } else if (action == "failover") {
            out.push_back({"idempotency keys on the promoted replica", fmt::format("{} of {}", after, before),
                           f.documented, f.note, f.note_vi});
            out.push_back({"Sentinel failover: kill → +switch-master",
                           fmt::format("{} ms", int_field(d, "switch_ms", 0)), "", "", ""});
        } else if (action == "kill" && d.contains("key")) {
            // How long the dead client's key kept answering 409.
            const std::string key = text_field(d, "key");
            int conflicts = 0;
            const HistoryRecord* freed = nullptr;
            const HistoryRecord* last = nullptr;
            int64_t pttl_end = -3;
            for (const HistoryRecord* a : sorted) {
                if (a->t_ns <= r->t_ns) continue;
                if (a->op == Op::observe && text_field(a->data, "key") == key) pttl_end = int_field(a->data, "pttl_ms", -3);
                if (a->op != Op::answer || freed) continue;
                last = a;
                if (int_field(a->data, "code", 0) == 409)
                    ++conflicts;
                else if (text_field(a->data, "source") == "created")
                    freed = a;
            }
            std::string measured;
            if (freed) {
                measured = fmt::format("freed {:.1f} s after the client died ({} × 409 before, then 201)",
                                       static_cast<double>(freed->t_ns - r->t_ns) / 1e9, conflicts);
            } else {
                measured = fmt::format("still in_progress at the end ({} × 409 over {:.1f} s); PTTL left {} s (≈ {:.1f} h)",
                                       conflicts, static_cast<double>((last ? last->t_ns : r->t_ns) - r->t_ns) / 1e9,
                                       with_thousands(pttl_end / 1000), static_cast<double>(pttl_end) / 3.6e6);
            }
            out.push_back({"key of the killed client", measured, f.documented, f.note, f.note_vi});
        }
    }
    return out;
}

}  // namespace relab
