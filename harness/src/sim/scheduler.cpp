#include "sim/scheduler.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace relab::sim {

Scheduler::Scheduler(size_t stack_bytes) : m_stack_bytes(stack_bytes) { m_events.reserve(256); }

Scheduler::~Scheduler() {
    try {
        cancel_all();
    } catch (...) {
    }
}

void Scheduler::reset(Nanos start, uint64_t schedule_seed, bool random_ties) {
    if (m_current != kNoFiber) throw std::logic_error("Scheduler::reset called from inside a fiber");
    cancel_all();
    clear_events();
    m_now = start.count();
    m_seq = 0;
    m_random_ties = random_ties;
    m_rng = SeededRng(schedule_seed);
    for (int i = 0; i < m_fibers; ++i) {
        m_slots[static_cast<size_t>(i)].joiners.clear();
        m_slots[static_cast<size_t>(i)].wake_pending = false;
        m_slots[static_cast<size_t>(i)].paused = false;
        m_slots[static_cast<size_t>(i)].held_wake = false;
    }
    m_fibers = 0;
    m_live_fibers = 0;
    m_failure = nullptr;
    m_failed_fiber.clear();
    m_events_run = 0;
}

void Scheduler::push(const Event& e) {
    // The earliest event waits beside the heap: a polling fiber's next step (its request, the
    // reply, the end of its sleep) is usually the earliest, and goes in and out without a heap
    // operation.
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

Scheduler::Event Scheduler::pop() {
    if (m_has_next) {
        m_has_next = false;
        return m_next;
    }
    return heap_pop();
}

void Scheduler::clear_events() {
    m_events.clear();
    m_has_next = false;
}

// Sift-up and sift-down move a hole rather than swapping, so each level costs one move.
void Scheduler::heap_push(const Event& e) {
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

Scheduler::Event Scheduler::heap_pop() {
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

void Scheduler::no_fiber(FiberId f) { throw std::out_of_range(fmt::format("no fiber {}", f)); }

FiberId Scheduler::spawn(std::string name, std::function<void()> body, Nanos start) {
    if (static_cast<size_t>(m_fibers) == m_slots.size()) {
        m_slots.emplace_back();
        m_slots.back().fiber = std::make_unique<Fiber>(m_stack_bytes);
    }
    const FiberId id = m_fibers++;
    Slot& s = m_slots[static_cast<size_t>(id)];
    s.joiners.clear();
    s.wake_pending = true;
    s.paused = false;
    s.held_wake = false;
    s.fiber->start(std::move(name), std::move(body));
    ++m_live_fibers;
    at(start, &Scheduler::resume_event, this, static_cast<uint64_t>(id));
    return id;
}

bool Scheduler::finished(FiberId f) const { return slot(f).fiber->state() == FiberState::finished; }

const std::string& Scheduler::name(FiberId f) const { return slot(f).fiber->name(); }

void Scheduler::resume_event(void* ctx, uint64_t fiber) {
    static_cast<Scheduler*>(ctx)->resume(static_cast<FiberId>(fiber));
}

void Scheduler::resume(FiberId f) {
    Slot& s = slot(f);
    Fiber& fiber = *s.fiber;
    s.wake_pending = false;
    if (fiber.state() == FiberState::finished) return;
    if (s.paused) {
        s.held_wake = true;
        return;
    }
    m_current = f;
    fiber.set_state(FiberState::running);
    fiber.resume();
    m_current = kNoFiber;
    if (fiber.state() != FiberState::finished) return;
    --m_live_fibers;
    if (fiber.error() && !m_failure) {
        m_failure = fiber.error();
        m_failed_fiber = fiber.name();
    }
    // The fiber may have spawned others meanwhile, moving the slots: look ours up again. wake()
    // only queues events, so the list stays put while it is read (and keeps its capacity).
    Slot& done = slot(f);
    for (FiberId j : done.joiners) wake(j, now());
    done.joiners.clear();
}

bool Scheduler::run_next_here(Action action, void* ctx, uint64_t arg) {
    if (m_current == kNoFiber) throw std::logic_error("Scheduler::run_next_here called outside a fiber");
    if (!next_is(action, ctx, arg)) return false;
    const Event e = take_next();
    const FiberId me = m_current;
    m_current = kNoFiber;  // as on the scheduler's stack
    e.action(e.ctx, e.arg);
    m_current = me;
    return true;
}

void Scheduler::suspend() {
    if (m_current == kNoFiber) throw std::logic_error("Scheduler::suspend called outside a fiber");
    Slot& s = slot(m_current);
    Fiber& fiber = *s.fiber;
    if (fiber.cancel_requested()) throw FiberCancelled{};
    // Its own wake-up comes next: what run() would do (take it, move the clock, resume this
    // fiber, which is not paused), without leaving the fiber.
    if (!s.paused && next_is(&Scheduler::resume_event, this, static_cast<uint64_t>(m_current))) {
        take_next();
        s.wake_pending = false;
        return;
    }
    fiber.set_state(FiberState::suspended);
    fiber.yield();
    // Resumed by resume(), which set m_current back to this fiber.
    if (fiber.cancel_requested()) throw FiberCancelled{};
}

void Scheduler::kill(FiberId f) {
    Slot& s = slot(f);
    if (s.fiber->state() == FiberState::finished) return;
    s.fiber->request_cancel();
    unpause(f);
}

void Scheduler::pause(FiberId f) { slot(f).paused = true; }

void Scheduler::unpause(FiberId f) {
    Slot& s = slot(f);
    s.paused = false;
    if (!s.held_wake) return;
    s.held_wake = false;
    wake(f, now());
}

void Scheduler::sleep_until(Nanos t) {
    wake(m_current, t);
    suspend();
}

void Scheduler::join(FiberId f) {
    if (finished(f)) return;
    slot(f).joiners.push_back(m_current);
    suspend();
}

Scheduler::Stop Scheduler::run(Nanos limit) {
    if (m_current != kNoFiber) throw std::logic_error("Scheduler::run called from inside a fiber");
    m_limit = limit.count();
    while (const Event* next = front()) {
        if (m_failure) return Stop::fiber_failed;
        if (next->t > limit.count()) return Stop::time_limit;
        const Event e = take_next();
        e.action(e.ctx, e.arg);
    }
    return m_failure ? Stop::fiber_failed : Stop::idle;
}

void Scheduler::cancel_all() {
    if (m_current != kNoFiber) throw std::logic_error("Scheduler::cancel_all called from inside a fiber");
    clear_events();
    // A body that swallows FiberCancelled and suspends again is cancelled again; one that keeps
    // doing so is abandoned (its stack objects leak) rather than looping forever.
    for (int round = 0; round < 8 && m_live_fibers > 0; ++round) {
        for (int i = 0; i < m_fibers; ++i) {
            Slot& s = m_slots[static_cast<size_t>(i)];
            Fiber& fiber = *s.fiber;
            const FiberState st = fiber.state();
            if (st == FiberState::finished) continue;
            if (st == FiberState::ready) {
                // Never ran: nothing on its stack to unwind.
                fiber.set_state(FiberState::finished);
                --m_live_fibers;
                continue;
            }
            fiber.request_cancel();
            resume(i);
        }
        clear_events();
    }
    for (int i = 0; i < m_fibers; ++i) m_slots[static_cast<size_t>(i)].fiber->set_state(FiberState::finished);
    m_live_fibers = 0;
}

std::vector<std::string> Scheduler::unfinished() const {
    std::vector<std::string> out;
    for (int i = 0; i < m_fibers; ++i) {
        const Fiber& f = *m_slots[static_cast<size_t>(i)].fiber;
        if (f.state() != FiberState::finished) out.push_back(f.name());
    }
    return out;
}

}  // namespace relab::sim
