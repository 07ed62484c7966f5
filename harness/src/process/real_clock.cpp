#include "process/real_clock.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <ctime>

namespace relab {

namespace {

// An atomic, not a volatile sig_atomic_t: a role's task threads read it while the signal handler
// writes it on another thread, a data race that only an atomic orders (ThreadSanitizer found it).
std::atomic<bool> g_trial_ended{false};
static_assert(std::atomic<bool>::is_always_lock_free, "a signal handler may only touch a lock-free atomic");

extern "C" void on_trial_end(int) { g_trial_ended.store(true, std::memory_order_relaxed); }

bool trial_ended() { return g_trial_ended.load(std::memory_order_relaxed); }

}  // namespace

void install_trial_end_wakeup() {
    struct sigaction sa {};
    sa.sa_handler = on_trial_end;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(kTrialEndSignal, &sa, nullptr);
}

bool trial_end_signalled() { return trial_ended(); }

void RealClock::sleep_for(Nanos d) {
    const auto deadline = std::chrono::steady_clock::now() + d;
    for (;;) {
        Nanos left = std::chrono::duration_cast<Nanos>(deadline - std::chrono::steady_clock::now());
        if (trial_ended()) left = std::min<Nanos>(left, std::chrono::milliseconds(1));
        if (left.count() <= 0) return;
        timespec ts{static_cast<time_t>(left.count() / 1'000'000'000), static_cast<long>(left.count() % 1'000'000'000)};
        const bool ended_before = trial_ended();
        // 0: slept all of it. EINTR: the trial's end (or another handled signal): the time left is
        // taken again, at most 1 ms once the trial has ended.
        if (::nanosleep(&ts, nullptr) == 0 || ended_before) return;
    }
}

}  // namespace relab
