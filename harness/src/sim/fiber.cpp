#include "sim/fiber.h"

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
    // An unfinished context is unwound by Boost.Context while the stack still exists.
    m_context = boost::context::fiber{};
}

void Fiber::start(std::string name, std::function<void()> body) {
    m_context = boost::context::fiber{};
    m_name = std::move(name);
    m_body = std::move(body);
    m_error = nullptr;
    m_cancel = false;
    m_exceptions = ExceptionState{};
    boost::context::stack_context sctx;
    sctx.sp = m_stack.top();
    sctx.size = m_stack.size();
    m_context = boost::context::fiber(std::allocator_arg, boost::context::preallocated(sctx.sp, sctx.size, sctx),
                                      BorrowedStack{}, [this](boost::context::fiber&& caller) {
                                          m_caller = std::move(caller);
                                          run_body();
                                          return std::move(m_caller);
                                      });
    m_state = FiberState::ready;
}

void Fiber::resume() {
    const ExceptionState scheduler = swap_exception_state(m_exceptions);
    m_context = std::move(m_context).resume();
    m_exceptions = swap_exception_state(scheduler);
}

void Fiber::yield() { m_caller = std::move(m_caller).resume(); }

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
