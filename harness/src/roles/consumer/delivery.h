// Where a consumer's entries come from: its own pending entries first (recovery.pending_first:
// XREADGROUP ... 0, as a restarted worker gets back what it was given before it died), then new
// ones ('>'), and with recovery.autoclaim what others left idle (XAUTOCLAIM rounds, in the
// consumer's loop or in the reaper). Each entry is recorded as received (with how it came) and
// handed to the consumer (DeliverySink), which runs, holds or dispatches it.
#pragma once

#include <string>

#include "roles/consumer/acks.h"
#include "roles/consumer/context.h"

namespace relab {

// What the delivery loop asks of the consumer it feeds.
class DeliverySink {
public:
    virtual ~DeliverySink() = default;
    // An entry received, its event read from it.
    virtual void process(const StreamEntry& entry, const Event& ev) = 0;
    // A read's entries are handed on: its batched writes and XACKs go out.
    virtual void flush() = 0;
    // Before each read of new entries: what is due then is done; how long that read may block at
    // most (`block` or less).
    virtual Millis before_read(Millis block) = 0;
    // Nothing received is still held (a reorder buffer's, the fanout's FIFOs): with the stop key
    // set, the loop may end.
    virtual bool holds_nothing() const = 0;
    // Part of the consumer failed (a fanout worker): the loop ends at once.
    virtual bool failed() const = 0;
};

class ConsumerDelivery {
public:
    ConsumerDelivery(const ConsumerContext& c, StreamAcks& acks, DeliverySink& sink)
        : m_c(c), m_acks(acks), m_sink(sink) {}

    // The consumer's loop: ends when the stop key is set and nothing it holds is left. Redis
    // errors are ridden out (ConsumerContext::ride_out).
    void read_loop();
    // The reaper: every autoclaim.every_ms, a claim round, until the stop key is set.
    void run_reaper();
    // One full XAUTOCLAIM scan from 0-0; each claimed entry is processed like a new one.
    void claim_round();

private:
    // Its own pending entries after `after`, until none is left (then `done`); each read flushed.
    void read_pending(std::string& after, bool& done);
    // Records the entry as received `via` "pending", "new" or "claim" and hands it on; an entry
    // deleted from the stream meanwhile has nothing to process and is acknowledged.
    void receive(const StreamEntry& entry, const char* via);

    const ConsumerContext& m_c;
    StreamAcks& m_acks;
    DeliverySink& m_sink;
};

}  // namespace relab
