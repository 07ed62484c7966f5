// When a consumer's XACKs go out (stream.ack): one per job as the job ends, or with "batch" one for
// every entry of a read once its last job is over (flush). Inside a claim round it remembers which
// entries it acknowledged, so that the round's stale copy of one is not run again.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "roles/consumer/context.h"

namespace relab {

class StreamAcks {
public:
    explicit StreamAcks(const ConsumerContext& c) : m_c(c) {}

    // XACK for an entry whose job is over: now, or with stream.ack "batch" at the next flush.
    void acknowledge(const std::string& id);
    // stream.ack "batch": one XACK for every entry acknowledged since the last flush. On a Redis
    // error they stay pending in the group, as after a failed XACK of one entry.
    void flush() {
        if (!m_unacked.empty()) flush_unacked();
    }

    // A claim round's entries are handled between these two: what is acknowledged meanwhile is
    // remembered (acked_in_round) until end_round.
    void begin_round();
    void end_round();
    bool acked_in_round(const std::string& id) const { return m_acked_this_round.count(id) > 0; }

private:
    void flush_unacked();

    const ConsumerContext& m_c;
    std::vector<std::string> m_unacked;  // stream.ack "batch": jobs over in this read, not yet acknowledged
    bool m_in_claim_round = false;
    std::set<std::string> m_acked_this_round;
};

}  // namespace relab
