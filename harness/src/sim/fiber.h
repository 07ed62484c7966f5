// A cooperative fiber: a stack of its own and a saved CPU context (Boost.Context, which switches
// without a system call, unlike swapcontext). Only the simulator's scheduler resumes fibers, on
// one thread; a fiber runs until it yields back by itself.
#pragma once

#include <boost/context/fiber.hpp>

#include <cstddef>
#include <exception>
#include <functional>
#include <string>

namespace relab::sim {

// An mmap'ed stack with an inaccessible guard page below it, so an overflow faults instead of
// overwriting a neighbour. Mapped once per fiber slot and reused across trials.
class FiberStack {
public:
    explicit FiberStack(size_t bytes);
    ~FiberStack();
    FiberStack(const FiberStack&) = delete;
    FiberStack& operator=(const FiberStack&) = delete;
    void* bottom() const { return m_usable; }
    void* top() const { return static_cast<char*>(m_usable) + m_usable_bytes; }
    size_t size() const { return m_usable_bytes; }

private:
    void* m_mapping = nullptr;
    size_t m_mapping_bytes = 0;
    void* m_usable = nullptr;
    size_t m_usable_bytes = 0;
};

// The C++ runtime keeps "exceptions being handled" per thread. Fibers share the thread, so each
// fiber keeps its own copy and resume() swaps them; otherwise a fiber suspended inside a catch
// block would see another fiber's exceptions (libstdc++'s __cxa_eh_globals).
struct ExceptionState {
    void* caught = nullptr;
    unsigned int uncaught = 0;
};

enum class FiberState { ready, running, suspended, finished };

class Fiber {
public:
    explicit Fiber(size_t stack_bytes);
    ~Fiber();
    Fiber(const Fiber&) = delete;
    Fiber& operator=(const Fiber&) = delete;

    // Prepares the fiber to run `body` from the start at its next resume(). Reuses the stack.
    void start(std::string name, std::function<void()> body);
    // From the scheduler: runs the fiber until it yields or its body ends.
    void resume();
    // From inside the fiber: back to the resume() that ran it.
    void yield();

    const std::string& name() const { return m_name; }
    FiberState state() const { return m_state; }
    void set_state(FiberState s) { m_state = s; }
    // What the body threw, other than the scheduler's own cancellation.
    std::exception_ptr error() const { return m_error; }
    bool cancel_requested() const { return m_cancel; }
    void request_cancel() { m_cancel = true; }

private:
    // What the sanitizers know of this fiber's switches (sim/fiber_sanitizer.h); unused without them.
    struct SanitizerMarks {
        void* scheduler_fake_stack = nullptr;  // ASan: the scheduler's, while the fiber runs
        void* fiber_fake_stack = nullptr;      // ASan: the fiber's, while it is suspended
        const void* scheduler_bottom = nullptr;  // ASan: the stack that resumed the fiber
        size_t scheduler_size = 0;
        void* tsan_fiber = nullptr;  // TSan: this context's history, new at every start()
    };

    void run_body();
    // The context's body: `m_body` unless the context is discarded before it ran.
    boost::context::fiber enter(boost::context::fiber&& caller);
    // Ends the context left from the last start(), if any, before its stack is reused or unmapped.
    void end_context();

    FiberStack m_stack;
    boost::context::fiber m_context;  // the fiber, while it is not running
    boost::context::fiber m_caller;   // the scheduler, while the fiber runs
    ExceptionState m_exceptions;      // the fiber's, while it is not running
    std::string m_name;
    std::function<void()> m_body;
    FiberState m_state = FiberState::finished;
    std::exception_ptr m_error;
    bool m_cancel = false;
    bool m_entered = false;  // the context has run: a suspended one is unwound, not discarded
    bool m_discard = false;  // the next resume() ends a context that never ran, without its body
    SanitizerMarks m_san;
};

// Thrown inside a fiber the scheduler cancels, to unwind its stack. Deliberately not derived from
// std::exception, so role code catching std::exception does not swallow it.
struct FiberCancelled {};

}  // namespace relab::sim
