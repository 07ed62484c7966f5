#include "roles/consumer/buffer.h"

#include <algorithm>
#include <chrono>

#include "util/json_object.h"

namespace relab {

void ReorderBuffer::take(const StreamEntry& entry, const Event& ev) {
    int64_t& last = m_last_applied[ev.order];
    if (ev.v == last + 1) {
        // A failed job leaves the order's gap open: its later versions stay held (the key is blocked).
        if (!m_jobs.run_job(entry, ev)) return;
        last = ev.v;
        release_in_order(ev.order);
    } else if (ev.v > last + 1) {
        m_c.record(Op::buffer_hold, json_object("waiting_for", last + 1), entry.id, &ev);
        m_held[ev.order].emplace(ev.v, Held{entry, ev, m_c.ports().clock.now()});
    } else {
        const bool drop = m_c.settings().buffer.late == BufferSpec::Late::drop;
        m_c.record(Op::late, json_object("last_applied", last, "action", drop ? "drop" : "apply"), entry.id, &ev);
        if (drop) {
            m_acks.acknowledge(entry.id);
        } else {
            m_jobs.run_job(entry, ev);
        }
    }
}

// What the order's buffer holds from its next version on, in version order.
void ReorderBuffer::release_in_order(int64_t order) {
    auto held = m_held.find(order);
    int64_t& last = m_last_applied[order];
    Clock& clock = m_c.ports().clock;
    while (held != m_held.end() && !held->second.empty() && held->second.begin()->first == last + 1) {
        const Held h = held->second.begin()->second;
        held->second.erase(held->second.begin());
        const int64_t held_ms = (clock.now() - h.since).count() / 1'000'000;
        m_c.record(Op::buffer_release, json_object("reason", "in_order", "held_ms", held_ms), h.entry.id, &h.ev);
        if (!m_jobs.run_job(h.entry, h.ev)) return;  // held versions are not poison, but a failed one blocks the rest
        last = h.ev.v;
    }
    if (held != m_held.end() && held->second.empty()) m_held.erase(held);
}

void ReorderBuffer::release_gaps_due() {
    const int64_t gap_timeout_ms = m_c.settings().buffer.gap_timeout_ms;
    Clock& clock = m_c.ports().clock;
    for (auto it = m_held.begin(); it != m_held.end();) {
        const int64_t order = it->first;
        const Held h = it->second.begin()->second;
        ++it;  // release_in_order may erase this order's entry
        if (clock.now() - h.since < Millis{gap_timeout_ms}) continue;
        int64_t& last = m_last_applied[order];
        nlohmann::json skipped = nlohmann::json::array();
        for (int64_t v = last + 1; v < h.ev.v; ++v) skipped.push_back(v);
        m_held[order].erase(m_held[order].begin());
        const int64_t held_ms = (clock.now() - h.since).count() / 1'000'000;
        m_c.record(Op::buffer_release,
                   json_object("reason", "gap_timeout", "held_ms", held_ms, "skipped", std::move(skipped)), h.entry.id,
                   &h.ev);
        m_jobs.run_job(h.entry, h.ev);
        last = h.ev.v;
        release_in_order(order);
    }
}

Millis ReorderBuffer::block_until_first_due(Millis block) const {
    const int64_t gap_timeout_ms = m_c.settings().buffer.gap_timeout_ms;
    Nanos first = Nanos::max();
    for (const auto& [order, held] : m_held) first = std::min(first, held.begin()->second.since);
    const Nanos due = first + Millis{gap_timeout_ms};
    const Nanos now = m_c.ports().clock.now();
    const Millis left = due > now ? std::chrono::ceil<Millis>(due - now) : Millis{1};
    return std::max(Millis{1}, std::min(block, left));
}

}  // namespace relab
