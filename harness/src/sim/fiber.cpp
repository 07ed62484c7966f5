#include "sim/fiber.h"

#include "sim/fiber_sanitizer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <boost/context/preallocated.hpp>
#include <boost/context/stack_context.hpp>

#include <cerrno>
#include <memory>
#include <stdexcept>
#include <system_error>

namespace __cxxabiv1 {
struct __cxa_eh_globals;
extern "C" __cxa_eh_globals* __cxa_get_globals() noexcept;
}  // namespace __cxxabiv1

namespace relab::sim {

namespace {

// libstdc++'s struct __cxa_eh_globals (unwind-cxx.h) on non-ARM targets.
struct EhGlobals {
    void* caught_exceptions;
    unsigned int uncaught_exceptions;
};

// A thread's globals stay where they are for its life: asked for once per thread, not at every
// switch (__cxa_get_globals is a call into libstdc++ and a TLS lookup).
EhGlobals* eh_globals() {
    static thread_local EhGlobals* const globals = reinterpret_cast<EhGlobals*>(__cxxabiv1::__cxa_get_globals());
    return globals;
}

ExceptionState swap_exception_state(const ExceptionState& next) {
    EhGlobals* g = eh_globals();
    const ExceptionState previous{g->caught_exceptions, g->uncaught_exceptions};
    g->caught_exceptions = next.caught;
    g->uncaught_exceptions = next.uncaught;
    return previous;
}

size_t page_size() {
    static const size_t size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return size;
}

// The stack belongs to FiberStack, which outlives every context made on it.
struct BorrowedStack {
    boost::context::stack_context allocate() { throw std::logic_error("BorrowedStack allocates nothing"); }
    void deallocate(boost::context::stack_context&) noexcept {}
};

}  // namespace

FiberStack::FiberStack(size_t bytes) {
    const size_t page = page_size();
    m_usable_bytes = (bytes + page - 1) / page * page;
    m_mapping_bytes = m_usable_bytes + page;
    m_mapping = mmap(nullptr, m_mapping_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m_mapping == MAP_FAILED) {
        m_mapping = nullptr;
        throw std::system_error(errno, std::generic_category(), "mmap of a fiber stack");
    }
    if (mprotect(m_mapping, page, PROT_NONE) != 0) {
        const int err = errno;
        munmap(m_mapping, m_mapping_bytes);
        m_mapping = nullptr;
        throw std::system_error(err, std::generic_category(), "mprotect of a fiber stack's guard page");
    }
    m_usable = static_cast<char*>(m_mapping) + page;
}

FiberStack::~FiberStack() {
    if (m_mapping) munmap(m_mapping, m_mapping_bytes);
}

Fiber::Fiber(size_t stack_bytes) : m_stack(stack_bytes) {}

Fiber::~Fiber() {
    end_context();
    sanitizer::destroy_fiber(m_san.tsan_fiber);
}

void Fiber::start(std::string name, std::function<void()> body) {
    end_context();
    m_name = std::move(name);
    m_body = std::move(body);
    m_error = nullptr;
    m_cancel = false;
    m_entered = false;
    m_discard = false;
    m_exceptions = ExceptionState{};
    // TSan: a new history for each context, because Boost.Context's entry frame is pushed onto the
    // history current while the context is made, and never popped.
    sanitizer::destroy_fiber(m_san.tsan_fiber);
    m_san.tsan_fiber = sanitizer::create_fiber();
    void* const scheduler = sanitizer::current_fiber();
    sanitizer::switch_to(m_san.tsan_fiber);
    boost::context::stack_context sctx;
    sctx.sp = m_stack.top();
    sctx.size = m_stack.size();
    m_context = boost::context::fiber(std::allocator_arg, boost::context::preallocated(sctx.sp, sctx.size, sctx),
                                      BorrowedStack{},
                                      [this](boost::context::fiber&& caller) { return enter(std::move(caller)); });
    sanitizer::switch_to(scheduler);
    m_state = FiberState::ready;
}

boost::context::fiber Fiber::enter(boost::context::fiber&& caller) {
    sanitizer::arrived_on_stack(nullptr, &m_san.scheduler_bottom, &m_san.scheduler_size);
    m_caller = std::move(caller);
    m_entered = true;
    try {
        if (!m_discard) run_body();
    } catch (const boost::context::detail::forced_unwind&) {
        // end_context() unwinding a suspended fiber: this stack is left for good.
        sanitizer::leaving_stack(nullptr, m_san.scheduler_bottom, m_san.scheduler_size);
        throw;
    }
    sanitizer::leaving_stack(nullptr, m_san.scheduler_bottom, m_san.scheduler_size);
    return std::move(m_caller);
}

void Fiber::resume() {
    const ExceptionState scheduler = swap_exception_state(m_exceptions);
    // TSan: only the scheduler's side switches, before the jump and after the return, so that
    // every frame is pushed and popped on the same history.
    void* const scheduler_fiber = sanitizer::current_fiber();
    sanitizer::switch_to(m_san.tsan_fiber);
    sanitizer::leaving_stack(&m_san.scheduler_fake_stack, m_stack.bottom(), m_stack.size());
    m_context = std::move(m_context).resume();
    sanitizer::arrived_on_stack(m_san.scheduler_fake_stack, nullptr, nullptr);
    sanitizer::switch_to(scheduler_fiber);
    m_exceptions = swap_exception_state(scheduler);
}

void Fiber::yield() {
    sanitizer::leaving_stack(&m_san.fiber_fake_stack, m_san.scheduler_bottom, m_san.scheduler_size);
    try {
        m_caller = std::move(m_caller).resume();
    } catch (const boost::context::detail::forced_unwind&) {
        // Back on this stack to unwind it (end_context()): ASan must know it is live again.
        sanitizer::arrived_on_stack(m_san.fiber_fake_stack, &m_san.scheduler_bottom, &m_san.scheduler_size);
        throw;
    }
    sanitizer::arrived_on_stack(m_san.fiber_fake_stack, &m_san.scheduler_bottom, &m_san.scheduler_size);
}

void Fiber::end_context() {
    if (!m_context) return;
    if (!m_entered) {
        // Never ran: resumed to the end of enter(), which skips the body, so the sanitizers see
        // both switches (Boost.Context's own unwinding would run no code of ours on that stack).
        m_discard = true;
        resume();
        return;
    }
    // Suspended in its body: Boost.Context unwinds the stack (forced_unwind through yield()).
    void* const scheduler_fiber = sanitizer::current_fiber();
    sanitizer::switch_to(m_san.tsan_fiber);
    sanitizer::leaving_stack(&m_san.scheduler_fake_stack, m_stack.bottom(), m_stack.size());
    m_context = boost::context::fiber{};
    sanitizer::arrived_on_stack(m_san.scheduler_fake_stack, nullptr, nullptr);
    sanitizer::switch_to(scheduler_fiber);
}

void Fiber::run_body() {
    try {
        m_body();
    } catch (const boost::context::detail::forced_unwind&) {
        throw;  // Boost.Context unwinding a context it destroys: must reach its own handler
    } catch (const FiberCancelled&) {
    } catch (...) {
        m_error = std::current_exception();
    }
    m_body = nullptr;  // destroys what the body captured while the fiber's stack is still live
    m_state = FiberState::finished;
}

}  // namespace relab::sim
