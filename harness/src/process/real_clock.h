#pragma once

#include <csignal>
#include <chrono>

#include "ports/ports.h"

namespace relab {

// CLOCK_MONOTONIC is one clock for every process on the machine, so records of different role
// processes can be merged by time.
class RealClock : public Clock {
public:
    Nanos now() override {
        return std::chrono::duration_cast<Nanos>(std::chrono::steady_clock::now().time_since_epoch());
    }
    // Sleeps d; in a role process told that its trial ended (below), at most 1 ms.
    void sleep_for(Nanos d) override;
};

// The end of a trial, told to a role process by kTrialEndSignal besides the stop key: a role asleep
// in RealClock::sleep_for (a reaper between its rounds, a retry's pause) wakes at once and looks at
// the key, instead of at the end of its sleep, and no later sleep of the process is over 1 ms (so a
// loop that looks again soon does not spin). The supervisor sends it once every entry is
// acknowledged and the stop key is set: nothing a role does then is in the trial's history.
constexpr int kTrialEndSignal = SIGUSR1;
// Installs the handler (a flag; SA_RESTART, so only sleeps and socket timeouts see EINTR). The role
// spawner installs it before it forks the roles, which inherit it: the signal never finds a role
// without it. A process that never installed it must never be sent the signal.
void install_trial_end_wakeup();
bool trial_end_signalled();

}  // namespace relab
