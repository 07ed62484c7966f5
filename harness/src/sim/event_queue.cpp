#include "sim/event_queue.h"

namespace relab::sim {

void EventQueue::push(const Event& e) {
    if (!m_has_next) {
        if (m_events.empty() || e.before(m_events.front())) {
            m_next = e;
            m_has_next = true;
            return;
        }
        heap_push(e);
        return;
    }
    if (e.before(m_next)) {
        heap_push(m_next);
        m_next = e;
        return;
    }
    heap_push(e);
}

void EventQueue::clear() {
    m_events.clear();
    m_has_next = false;
    m_reached = INT64_MIN;
}

// Sift-up and sift-down move a hole rather than swapping, so each level costs one move.
void EventQueue::heap_push(const Event& e) {
    m_events.emplace_back();
    Event* h = m_events.data();
    size_t i = m_events.size() - 1;
    while (i > 0) {
        const size_t parent = (i - 1) / 2;
        if (!e.before(h[parent])) break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = e;
}

EventQueue::Event EventQueue::heap_pop() {
    Event* h = m_events.data();
    const Event top = h[0];
    const Event last = h[m_events.size() - 1];
    const size_t n = m_events.size() - 1;  // the heap's size once `last` has a place
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && h[child + 1].before(h[child])) ++child;
        if (!h[child].before(last)) break;
        h[i] = h[child];
        i = child;
    }
    h[i] = last;
    m_events.pop_back();
    return top;
}

}  // namespace relab::sim
