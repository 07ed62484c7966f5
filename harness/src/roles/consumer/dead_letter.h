// What a consumer does with a job that failed (a poison entry, "fails": true): records it and
// leaves the entry pending for its next delivery; once the entry has been delivered
// recovery.max_deliveries times, XADDs it to the dead-letter stream (the lab's stream key +
// ":dead", with where it came from and how often it was delivered) and acknowledges it.
#pragma once

#include "roles/consumer/acks.h"
#include "roles/consumer/context.h"

namespace relab {

class DeadLetter {
public:
    DeadLetter(const ConsumerContext& c, StreamAcks& acks) : m_c(c), m_acks(acks) {}

    // The job of `entry` failed on this delivery. Returns whether the entry is done with
    // (dead-lettered); false: it stays pending.
    bool job_failed(const StreamEntry& entry, const Event& ev);

private:
    const ConsumerContext& m_c;
    StreamAcks& m_acks;
};

}  // namespace relab
