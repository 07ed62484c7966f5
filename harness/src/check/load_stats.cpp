#include "check/load_stats.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

namespace relab {

namespace {

std::string text_of(const nlohmann::json& d, const char* key) {
    const auto it = d.find(key);
    return it != d.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

// Entry ids are unique per stream: S2's shards each have their own.
std::string entry_key(const HistoryRecord& r) { return text_of(r.data, "stream") + "/" + std::string(record_entry(r)); }


int64_t nearest_rank(const std::vector<int64_t>& sorted, double q) {
    if (sorted.empty()) return 0;
    const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    return sorted[std::min(sorted.size(), std::max<size_t>(rank, 1)) - 1];
}

// One published entry's times (ns, -1: not seen), and its event.
struct EntryTimes {
    int64_t published = -1, started = -1, written = -1;
    int64_t order = 0;
    std::string type;
};

// What the history says of each entry, and the span the figures are taken over.
struct EntryHistory {
    std::unordered_map<std::string, EntryTimes> entries;  // by entry_key
    std::map<std::string, bool> writers;                  // the actors that wrote
    int64_t first_publish = -1, last_write = -1;
};

// Each entry's ok publish, its job's start (a receive, or S3's take) and its first write.
EntryHistory entry_history(const std::vector<HistoryRecord>& history) {
    EntryHistory h;
    for (const auto& r : history) {
        switch (r.op) {
            case Op::publish: {
                if (text_of(r.data, "result") != "ok" || record_entry(r).empty()) break;
                EntryTimes& e = h.entries[entry_key(r)];
                if (e.published < 0) e.published = r.t_ns;
                if (const std::optional<EventView> ev = record_event(r)) {
                    e.order = ev->order;
                    e.type = std::string(ev->type);
                }
                if (h.first_publish < 0 || r.t_ns < h.first_publish) h.first_publish = r.t_ns;
                break;
            }
            case Op::receive:
            case Op::take: {
                auto it = h.entries.find(entry_key(r));
                // A take (S3's worker) is the job's start; the reader's receive only queued it.
                if (it != h.entries.end() && it->second.written < 0 && (r.op == Op::take || it->second.started < 0))
                    it->second.started = r.t_ns;
                break;
            }
            case Op::write: {
                auto it = h.entries.find(entry_key(r));
                h.writers[r.actor] = true;
                if (it == h.entries.end() || it->second.written >= 0) break;
                it->second.written = r.t_ns;
                h.last_write = std::max(h.last_write, r.t_ns);
                break;
            }
            default: break;
        }
    }
    return h;
}

// events, slots, the latencies and, over the span from first publish to last write, the rate
// and how busy the slots were.
void throughput_and_latency(const EntryHistory& h, LoadStats& out) {
    std::vector<int64_t> latencies;
    int64_t busy_ns = 0;
    for (const auto& [key, e] : h.entries) {
        if (e.written < 0 || e.published < 0) continue;
        latencies.push_back((e.written - e.published) / 1000);
        if (e.started >= 0) busy_ns += e.written - e.started;
    }
    std::sort(latencies.begin(), latencies.end());
    out.events = static_cast<int64_t>(latencies.size());
    out.slots = static_cast<int>(h.writers.size());
    if (!latencies.empty()) {
        out.latency_p50_us = nearest_rank(latencies, 0.50);
        out.latency_p99_us = nearest_rank(latencies, 0.99);
        out.latency_max_us = latencies.back();
    }
    if (h.first_publish >= 0 && h.last_write > h.first_publish) {
        const int64_t span = h.last_write - h.first_publish;
        out.span_us = span / 1000;
        out.events_per_s = static_cast<double>(out.events) * 1e9 / static_cast<double>(span);
        if (out.slots > 0)
            out.utilisation_pct = 100.0 * static_cast<double>(busy_ns) / (static_cast<double>(span) * out.slots);
    }
}

// Head-of-line blocking: while each slow job ran, how long events of other orders waited. An
// event waited behind it when it was XADDed before the job ended and had not started before
// the job began: also one queued before it (a consumer behind the producer, as S1 is on a slow
// machine), not only one XADDed while it ran.
void head_of_line(const Scenario& s, const EntryHistory& h, LoadStats& out) {
    for (const auto& slow : s.flow().load.slow_jobs) {
        const EntryTimes* job = nullptr;
        for (const auto& [key, e] : h.entries)
            if (e.order == slow.order && e.type == slow.type && e.started >= 0 && e.written >= 0) job = &e;
        if (!job) continue;
        if (out.hol_ms < 0) out.hol_ms = 0;
        for (const auto& [key, e] : h.entries) {
            if (e.order == slow.order || e.published < 0 || e.published >= job->written) continue;
            if (e.started >= 0 && e.started < job->started) continue;
            ++out.hol_events;
            if (e.started < 0 || e.started >= job->written) ++out.hol_blocked;
            if (e.started >= 0) out.hol_ms = std::max(out.hol_ms, (e.started - e.published) / 1'000'000);
        }
    }
}

}  // namespace

LoadStats load_stats(const Scenario& s, const std::vector<HistoryRecord>& history, int64_t wrong_orders) {
    LoadStats out;
    out.wrong_orders = wrong_orders;
    const EntryHistory h = entry_history(history);
    throughput_and_latency(h, out);
    head_of_line(s, h, out);
    return out;
}

bool wants_load_stats(const Scenario& s) {
    const StreamLab* flow = s.flow_if();
    return flow && (flow->load.enabled || !s.expect.every_trial.load.empty() || !s.expect.every_wrong_trial.load.empty());
}

}  // namespace relab
