// Ctrl-C and SIGTERM turn into an exception at the next wait loop, so the stack unwinds through the
// RAII objects that stop servers, reap children and remove temp dirs.
#pragma once

#include <stdexcept>

namespace relab {

// A SIGINT or SIGTERM arrived. Maps to exit status 128 + signal.
class Interrupted : public std::runtime_error {
public:
    explicit Interrupted(int signal_number);
    int signal_number() const { return m_signal; }

private:
    int m_signal;
};

// SIGINT and SIGTERM only set a flag (async-signal-safe); SA_RESTART, so blocking calls elsewhere
// are not broken by EINTR. Idempotent. A second signal is remembered like the first.
void install_interrupt_handlers();

bool interrupted();
// The signal that arrived first, 0 if none.
int interrupt_signal();
// Throws Interrupted("interrupted by signal N") once a signal arrived. Wait loops call it at least
// every 20 ms.
void throw_if_interrupted();
// Forgets a received signal; for tests that raise one on purpose.
void clear_interrupt();

}  // namespace relab
