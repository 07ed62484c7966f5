// P3's reorder buffer (RoleSettings::buffer): per order, the next version goes through (and then
// what was held of the versions after it), a later one waits unacknowledged, an older one is
// late (dropped or applied). With a gap timeout, an order whose oldest held event waited that
// long gives up on its gap.
#pragma once

#include <cstdint>
#include <map>

#include "roles/consumer/acks.h"
#include "roles/consumer/context.h"

namespace relab {

class ReorderBuffer {
public:
    ReorderBuffer(const ConsumerContext& c, StreamAcks& acks, JobRunner& jobs) : m_c(c), m_acks(acks), m_jobs(jobs) {}

    // An event received: run now, held, or late.
    void take(const StreamEntry& entry, const Event& ev);
    // Before each read: what waited gap_timeout_ms runs, its gap given up.
    void release_timed_out() {
        if (m_c.settings().buffer.gap_timeout_ms > 0 && !m_held.empty()) release_gaps_due();
    }
    // How long the next read may block: no later than the first held event's gap timeout.
    Millis block(Millis block) const {
        if (m_c.settings().buffer.gap_timeout_ms <= 0 || m_held.empty()) return block;
        return block_until_first_due(block);
    }
    bool empty() const { return m_held.empty(); }

private:
    struct Held {
        StreamEntry entry;
        Event ev;
        Nanos since;
    };

    void release_in_order(int64_t order);
    void release_gaps_due();
    Millis block_until_first_due(Millis block) const;

    const ConsumerContext& m_c;
    StreamAcks& m_acks;
    JobRunner& m_jobs;
    std::map<int64_t, int64_t> m_last_applied;              // per order: the last version applied
    std::map<int64_t, std::map<int64_t, Held>> m_held;      // per order: the events held back, by version
};

}  // namespace relab
