// The simulator's only notion of time and order (FoundationDB sim2, Seastar manual_clock).
// Virtual time is integer nanoseconds and moves only when the scheduler takes the next event.
// Events run in (time, tie) order; the tie is drawn from the schedule's seeded generator, so
// simultaneous events are ordered by the seed, never by how the code happens to queue them.
// Fibers (the roles) run cooperatively: one at a time, until they suspend.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "ports/ports.h"
#include "ports/seeded_rng.h"
#include "sim/event_queue.h"
#include "sim/fiber_slots.h"

namespace relab::sim {

class Scheduler {
public:
    using Action = EventQueue::Action;

    enum class Stop {
        idle,          // no event left
        time_limit,    // the next event lies beyond the limit
        fiber_failed,  // a fiber's body threw; see failure()
    };

    explicit Scheduler(size_t stack_bytes = 256 * 1024);
    ~Scheduler();
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

    // Starts afresh at `start`: no events, no fibers (stacks are kept for reuse). Ties are drawn
    // from a generator seeded with schedule_seed; with random_ties false they fall back to the
    // order events were queued in (for tests that pin an order).
    void reset(Nanos start, uint64_t schedule_seed, bool random_ties = true);

    Nanos now() const { return Nanos{m_now}; }
    // The generator for every schedule-shaping choice (latencies, ties). Roles have their own.
    SeededRng& rng() { return m_rng; }

    // Runs action(ctx, arg) at time t on the scheduler's own stack. t earlier than now means now.
    void at(Nanos t, Action action, void* ctx, uint64_t arg = 0) {
        const int64_t when = t.count() > m_now ? t.count() : m_now;
        m_queue.push(Event{when, m_random_ties ? m_rng.next() : m_seq++, action, ctx, arg});
    }
    // As at(), after every other event at t and with no draw from the generator: a watchdog that
    // leaves the rest of the schedule exactly as it would be without it.
    void at_last(Nanos t, Action action, void* ctx, uint64_t arg = 0) {
        const int64_t when = t.count() > m_now ? t.count() : m_now;
        m_queue.push(Event{when, UINT64_MAX, action, ctx, arg});
    }

    // A fiber that starts running `body` at time `start`.
    FiberId spawn(std::string name, std::function<void()> body, Nanos start);
    FiberId current() const { return m_current; }
    bool finished(FiberId f) const { return m_slots[f].fiber->state() == FiberState::finished; }
    const std::string& name(FiberId f) const { return m_slots[f].fiber->name(); }
    int fiber_count() const { return m_slots.live(); }

    // --- inside a fiber ---
    // Gives up the CPU until wake(current()). Throws FiberCancelled when the fiber is cancelled.
    // When the fiber's own wake-up is the next event run() would take (nothing else is due
    // before it), it is taken here instead: the clock moves to it and the fiber goes on, with no
    // switch to the scheduler and back. Same events, same order, same clock.
    void suspend();
    // From a fiber that has just queued (action, ctx, arg) and is about to suspend: when that
    // event is the next one run() would take, within run()'s limit, takes it off the queue,
    // moves the clock to it and runs it here (outside any fiber, as run() would), and returns
    // true; false, touching nothing, otherwise. For server-side actions only: ones that queue
    // events and wake fibers but never suspend, resume a fiber themselves, or throw.
    bool run_next_here(Action action, void* ctx, uint64_t arg = 0);
    // Schedules a suspended fiber's resumption at t. A fiber is woken at most once per suspend.
    void wake(FiberId f, Nanos t) {
        Slot& s = m_slots[f];
        if (s.wake_pending || s.fiber->state() == FiberState::finished) return;
        s.wake_pending = true;
        at(t, &Scheduler::resume_event, this, static_cast<uint64_t>(f));
    }
    void sleep_until(Nanos t);
    void sleep_for(Nanos d) { sleep_until(now() + d); }
    // Suspends until fiber f has finished.
    void join(FiberId f);

    // --- faults on a fiber (from outside it: the trial's supervisor) ---
    // SIGKILL: the fiber never runs its own code again. One waiting on a timer or a reply unwinds
    // when that event comes (server-side work in flight still uses its stack until then); one
    // waiting on nothing must be woken by whoever holds it (SimWorld::drop_fiber).
    void kill(FiberId f);
    // SIGSTOP / SIGCONT: a wake-up that comes while the fiber is paused is held until it resumes.
    void pause(FiberId f);
    void unpause(FiberId f);
    bool paused(FiberId f) const { return m_slots[f].paused; }

    // Runs events until none is left, the next lies beyond `limit`, or a fiber failed.
    Stop run(Nanos limit);
    // The first fiber error (with the fiber's name), or null.
    std::exception_ptr failure() const { return m_failure; }
    const std::string& failed_fiber() const { return m_failed_fiber; }
    // Unwinds every unfinished fiber (its suspend() throws FiberCancelled), so the objects on its
    // stack are destroyed. Leaves no events queued.
    void cancel_all();
    // Names of fibers that have not finished, in spawn order.
    std::vector<std::string> unfinished() const { return m_slots.unfinished(); }
    uint64_t events_run() const { return m_events_run; }

private:
    using Event = EventQueue::Event;
    using Slot = FiberSlots::Slot;

    static void resume_event(void* ctx, uint64_t fiber);
    void resume(FiberId f);
    // What run() does with the next event before running it: off the queue, the clock to it.
    Event take_next() {
        const Event e = m_queue.pop();
        m_now = e.t;
        ++m_events_run;
        return e;
    }
    // The next event is (action, ctx, arg) and due within the running run()'s limit.
    bool next_is(Action action, const void* ctx, uint64_t arg) const {
        const Event* e = m_queue.front();
        return e && e->action == action && e->ctx == ctx && e->arg == arg && e->t <= m_limit;
    }

    int64_t m_now = 0;
    int64_t m_limit = INT64_MAX;  // the running run()'s limit
    uint64_t m_seq = 0;
    bool m_random_ties = true;
    SeededRng m_rng{0};
    EventQueue m_queue;
    FiberSlots m_slots;
    FiberId m_current = kNoFiber;
    std::exception_ptr m_failure;
    std::string m_failed_fiber;
    uint64_t m_events_run = 0;
};

}  // namespace relab::sim
