#include "sim/scheduler.h"

#include <stdexcept>

namespace relab::sim {

Scheduler::Scheduler(size_t stack_bytes) : m_slots(stack_bytes) {}

Scheduler::~Scheduler() {
    try {
        cancel_all();
    } catch (...) {
    }
}

void Scheduler::reset(Nanos start, uint64_t schedule_seed, bool random_ties) {
    if (m_current != kNoFiber) throw std::logic_error("Scheduler::reset called from inside a fiber");
    cancel_all();
    m_queue.clear();
    m_now = start.count();
    m_seq = 0;
    m_random_ties = random_ties;
    m_rng = SeededRng(schedule_seed);
    m_slots.reset();
    m_failure = nullptr;
    m_failed_fiber.clear();
    m_events_run = 0;
}

FiberId Scheduler::spawn(std::string name, std::function<void()> body, Nanos start) {
    const FiberId id = m_slots.add(std::move(name), std::move(body));
    at(start, &Scheduler::resume_event, this, static_cast<uint64_t>(id));
    return id;
}

void Scheduler::resume_event(void* ctx, uint64_t fiber) {
    static_cast<Scheduler*>(ctx)->resume(static_cast<FiberId>(fiber));
}

void Scheduler::resume(FiberId f) {
    Slot& s = m_slots[f];
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
    m_slots.finished_one();
    if (fiber.error() && !m_failure) {
        m_failure = fiber.error();
        m_failed_fiber = fiber.name();
    }
    // The fiber may have spawned others meanwhile, moving the slots: look ours up again. wake()
    // only queues events, so the list stays put while it is read (and keeps its capacity).
    Slot& done = m_slots[f];
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
    Slot& s = m_slots[m_current];
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
    Slot& s = m_slots[f];
    if (s.fiber->state() == FiberState::finished) return;
    s.fiber->request_cancel();
    unpause(f);
}

void Scheduler::pause(FiberId f) { m_slots[f].paused = true; }

void Scheduler::unpause(FiberId f) {
    Slot& s = m_slots[f];
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
    m_slots[f].joiners.push_back(m_current);
    suspend();
}

Scheduler::Stop Scheduler::run(Nanos limit) {
    if (m_current != kNoFiber) throw std::logic_error("Scheduler::run called from inside a fiber");
    m_limit = limit.count();
    while (const Event* next = m_queue.front()) {
        if (m_failure) return Stop::fiber_failed;
        if (next->t > limit.count()) return Stop::time_limit;
        const Event e = take_next();
        e.action(e.ctx, e.arg);
    }
    return m_failure ? Stop::fiber_failed : Stop::idle;
}

void Scheduler::cancel_all() {
    if (m_current != kNoFiber) throw std::logic_error("Scheduler::cancel_all called from inside a fiber");
    m_queue.clear();
    // A body that swallows FiberCancelled and suspends again is cancelled again; one that keeps
    // doing so is abandoned (its stack objects leak) rather than looping forever.
    for (int round = 0; round < 8 && m_slots.live() > 0; ++round) {
        for (int i = 0; i < m_slots.size(); ++i) {
            Fiber& fiber = *m_slots[i].fiber;
            const FiberState st = fiber.state();
            if (st == FiberState::finished) continue;
            if (st == FiberState::ready) {
                // Never ran: nothing on its stack to unwind.
                fiber.set_state(FiberState::finished);
                m_slots.finished_one();
                continue;
            }
            fiber.request_cancel();
            resume(i);
        }
        m_queue.clear();
    }
    for (int i = 0; i < m_slots.size(); ++i) m_slots[i].fiber->set_state(FiberState::finished);
    m_slots.none_live();
}

}  // namespace relab::sim
