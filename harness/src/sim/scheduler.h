// The simulator's only notion of time and order (FoundationDB sim2, Seastar manual_clock).
// Virtual time is integer nanoseconds and moves only when the scheduler takes the next event.
// Events run in (time, tie) order; the tie is drawn from the schedule's seeded generator, so
// simultaneous events are ordered by the seed, never by how the code happens to queue them.
// Fibers (the roles) run cooperatively: one at a time, until they suspend.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ports/ports.h"
#include "ports/seeded_rng.h"
#include "sim/fiber.h"

namespace relab::sim {

using FiberId = int;
inline constexpr FiberId kNoFiber = -1;

class Scheduler {
public:
    // An event's work: a plain function and its arguments, so queueing one never allocates.
    using Action = void (*)(void* ctx, uint64_t arg);

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
        push(Event{when, m_random_ties ? m_rng.next() : m_seq++, action, ctx, arg});
    }
    // As at(), after every other event at t and with no draw from the generator: a watchdog that
    // leaves the rest of the schedule exactly as it would be without it.
    void at_last(Nanos t, Action action, void* ctx, uint64_t arg = 0) {
        const int64_t when = t.count() > m_now ? t.count() : m_now;
        push(Event{when, UINT64_MAX, action, ctx, arg});
    }

    // A fiber that starts running `body` at time `start`.
    FiberId spawn(std::string name, std::function<void()> body, Nanos start);
    FiberId current() const { return m_current; }
    bool finished(FiberId f) const;
    const std::string& name(FiberId f) const;
    int fiber_count() const { return m_live_fibers; }

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
        Slot& s = slot(f);
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
    bool paused(FiberId f) const { return slot(f).paused; }

    // Runs events until none is left, the next lies beyond `limit`, or a fiber failed.
    Stop run(Nanos limit);
    // The first fiber error (with the fiber's name), or null.
    std::exception_ptr failure() const { return m_failure; }
    const std::string& failed_fiber() const { return m_failed_fiber; }
    // Unwinds every unfinished fiber (its suspend() throws FiberCancelled), so the objects on its
    // stack are destroyed. Leaves no events queued.
    void cancel_all();
    // Names of fibers that have not finished, in spawn order.
    std::vector<std::string> unfinished() const;
    uint64_t events_run() const { return m_events_run; }

private:
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
    struct Slot {
        std::unique_ptr<Fiber> fiber;
        std::vector<FiberId> joiners;
        bool wake_pending = false;
        bool paused = false;
        bool held_wake = false;  // woken while paused
    };

    static void resume_event(void* ctx, uint64_t fiber);
    void resume(FiberId f);
    Slot& slot(FiberId f) {
        if (static_cast<unsigned>(f) >= static_cast<unsigned>(m_fibers)) no_fiber(f);
        return m_slots[static_cast<size_t>(f)];
    }
    const Slot& slot(FiberId f) const {
        if (static_cast<unsigned>(f) >= static_cast<unsigned>(m_fibers)) no_fiber(f);
        return m_slots[static_cast<size_t>(f)];
    }
    [[noreturn]] static void no_fiber(FiberId f);
    // The queue: m_next, when there is one, is earlier than every event of the binary min-heap
    // in m_events. pop() takes the earliest.
    void push(const Event& e);
    Event pop();
    // What run() does with the next event before running it: off the queue, the clock to it.
    Event take_next() {
        const Event e = pop();
        m_now = e.t;
        ++m_events_run;
        return e;
    }
    const Event* front() const {
        if (m_has_next) return &m_next;
        return m_events.empty() ? nullptr : &m_events.front();
    }
    void clear_events();
    void heap_push(const Event& e);
    Event heap_pop();
    // The next event is (action, ctx, arg) and due within the running run()'s limit.
    bool next_is(Action action, const void* ctx, uint64_t arg) const {
        const Event* e = front();
        return e && e->action == action && e->ctx == ctx && e->arg == arg && e->t <= m_limit;
    }

    size_t m_stack_bytes;
    int64_t m_now = 0;
    int64_t m_limit = INT64_MAX;  // the running run()'s limit
    uint64_t m_seq = 0;
    bool m_random_ties = true;
    SeededRng m_rng{0};
    std::vector<Event> m_events;  // a binary min-heap under Event::before
    Event m_next{};               // with m_has_next: earlier than every event in m_events
    bool m_has_next = false;
    std::vector<Slot> m_slots;    // kept across resets for their stacks
    int m_fibers = 0;             // slots in use this run
    int m_live_fibers = 0;
    FiberId m_current = kNoFiber;
    std::exception_ptr m_failure;
    std::string m_failed_fiber;
    uint64_t m_events_run = 0;
};

}  // namespace relab::sim
