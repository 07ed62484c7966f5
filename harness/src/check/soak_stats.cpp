#include "check/soak_stats.h"

#include <unordered_map>

#include "check/accounting.h"
#include "check/record_fields.h"
#include "fault/fault_spec.h"

namespace relab {

namespace {

// The entry a receive or ack names, with its stream when the record names one (S2's shards).
std::string soak_entry_key(const HistoryRecord& r) {
    const std::string id(record_entry(r));
    const std::string stream = record_fields::text_field(r.data, "stream");
    return id.empty() || stream.empty() ? id : stream + " " + id;
}

// A role of the lab, not a server: the targets whose kills a soak counts.
bool soak_role_target(const std::string& target) { return fault_target_kind(target) == FaultTarget::role; }

}  // namespace

SoakStats soak_stats(const std::vector<HistoryRecord>& history) {
    using record_fields::int_field;
    using record_fields::text_field;
    SoakStats out;
    // Per entry: whether it was received, and whether an ack came after its last receipt.
    struct Seen {
        bool received = false;
        bool acked = false;
        bool recovered = false;
    };
    std::unordered_map<std::string, Seen> entries;
    for (const auto& r : history) {
        switch (r.op) {
            case Op::receive: {
                const std::string key = soak_entry_key(r);
                if (key.empty()) break;
                Seen& e = entries[key];
                if (e.received && !e.acked && !e.recovered) {
                    e.recovered = true;
                    ++out.recovered;
                    if (out.examples.recovered.size() < k_accounting_examples) out.examples.recovered.push_back(key);
                }
                e.received = true;
                e.acked = false;
                break;
            }
            case Op::ack: {
                const std::string key = soak_entry_key(r);
                if (!key.empty()) entries[key].acked = true;
                break;
            }
            case Op::fault: {
                // The schedule's own faults (relab's stop at a deadline is fault 0), on the lab's roles.
                if (r.actor != "nemesis" || int_field(r.data, "fault") <= 0) break;
                const std::string phase = text_field(r.data, "phase");
                if (phase == "fail") {
                    ++out.fault_failures;
                    break;
                }
                if (phase != "ok" || !soak_role_target(text_field(r.data, "target"))) break;
                const std::string action = text_field(r.data, "action");
                if (action == "kill") ++out.kills;
                if (action == "restart") {
                    ++out.restarts;
                    if (r.data.value("killed", false)) ++out.kills;
                }
                break;
            }
            case Op::observe: {
                if (r.actor != "relab" || !r.data.contains("consumer_group")) break;
                out.measured = true;
                out.pending = int_field(r.data, "pending", -1);
                out.undelivered = int_field(r.data, "undelivered", -1);
                out.deadline_passed = r.data.value("deadline_passed", false);
                out.deadline_ms = int_field(r.data, "deadline_ms");
                out.end_ms = r.t_ns / 1'000'000;
                break;
            }
            default: break;
        }
    }
    return out;
}

}  // namespace relab
