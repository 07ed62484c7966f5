// Every time limit the trial supervisors use, in one table: the real backend and the simulator
// read the same values, so a trial that times out on one times out on the other.
#pragma once

#include "ports/ports.h"

namespace relab::timeouts {

// A consumer blocked in XREADGROUP before the producer starts (the start barrier).
inline constexpr Millis kBarrier{10'000};
// Publishing and draining a stream lab, after the barrier (plus the lab's last event time).
inline constexpr Millis kPublishAndDrain{60'000};
// After the stop flag: consumers leave within one BLOCK plus this.
inline constexpr Millis kStopGrace{5'000};
// A fault's `after` trigger still waiting when everything else is done.
inline constexpr Millis kFaultTrigger{30'000};
// A killed role's process reaped; a paused or resumed one seen in its new state.
inline constexpr Millis kSignalTakesEffect{5'000};
// A restarted redis-server answering and done loading its RDB or AOF.
inline constexpr Millis kServerRestart{10'000};
// Sentinel's election: the primary killed until every sentinel names the promoted replica.
inline constexpr Millis kFailover{20'000};
// How often a supervisor looks again while a fault may be due (real and sim alike).
inline constexpr Millis kFaultPoll{1};
// Idempotency labs: the clients all ready, the go signal's lead, a fault's client step.
inline constexpr Millis kIdemStart{20'000};
inline constexpr Millis kIdemOriginAhead{20};
inline constexpr Millis kIdemAfter{30'000};

}  // namespace relab::timeouts
