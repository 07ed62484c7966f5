// The scheduler's queue of events, taken earliest first in (time, tie) order. The earliest event
// waits beside a binary min-heap: a polling fiber's next step (its request, the reply, the end of
// its sleep) is usually the earliest, and goes in and out without a heap operation.
#pragma once

#include <cstdint>
#include <vector>

#include "util/check.h"

namespace relab::sim {

class EventQueue {
public:
    // An event's work: a plain function and its arguments, so queueing one never allocates.
    using Action = void (*)(void* ctx, uint64_t arg);

    // Ordered by (t, tie). The tie is a draw from the schedule's generator, or the queueing
    // sequence without random ties. Two draws that collide (one chance in 2^64) are ordered by
    // where the heap holds them: still the same for the same seed.
    struct Event {
        int64_t t;
        uint64_t tie;
        Action action;
        void* ctx;
        uint64_t arg;
        bool before(const Event& o) const { return t < o.t || (t == o.t && tie < o.tie); }
    };

    EventQueue() { m_events.reserve(256); }

    void push(const Event& e);
    // Takes the earliest event off the queue; the queue must not be empty. The scheduler's clock
    // is the time of the event it took last, so an event earlier than that one (queued in the past,
    // or a heap out of order) throws std::logic_error: time never moves back.
    Event pop() {
        if (!m_has_next) return reached(heap_pop());
        m_has_next = false;
        return reached(m_next);
    }
    // The earliest event, or null when none is queued.
    const Event* front() const {
        if (m_has_next) return &m_next;
        return m_events.empty() ? nullptr : &m_events.front();
    }
    // Empties the queue and forgets the time reached: the next event may be at any time.
    void clear();

private:
    const Event& reached(const Event& e) {
        RELAB_CHECK(e.t >= m_reached, "the scheduler's time never moves back");
        m_reached = e.t;
        return e;
    }
    void heap_push(const Event& e);
    Event heap_pop();

    std::vector<Event> m_events;  // a binary min-heap under Event::before
    Event m_next{};               // with m_has_next: earlier than every event in m_events
    bool m_has_next = false;
    int64_t m_reached = INT64_MIN;  // the time of the event taken last
};

}  // namespace relab::sim
