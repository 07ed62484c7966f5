#include "util/interrupt.h"

#include <atomic>
#include <csignal>
#include <string>

namespace relab {

namespace {

std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free flag");

extern "C" void on_interrupt_signal(int sig) {
    int expected = 0;
    g_signal.compare_exchange_strong(expected, sig);
}

}  // namespace

Interrupted::Interrupted(int signal_number)
    : std::runtime_error("interrupted by signal " + std::to_string(signal_number)),
      m_signal(signal_number) {}

void install_interrupt_handlers() {
    struct sigaction sa {};
    sa.sa_handler = on_interrupt_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
}

bool interrupted() { return g_signal.load() != 0; }

int interrupt_signal() { return g_signal.load(); }

void throw_if_interrupted() {
    if (int sig = g_signal.load(); sig != 0) throw Interrupted(sig);
}

void clear_interrupt() { g_signal.store(0); }

}  // namespace relab
