// The lab's actors, written once against the ports. The real backend runs each in its own
// process; the simulator runs them cooperatively on virtual time.
#pragma once

#include <string>

#include "ports/ports.h"
#include "scenario/scenario.h"

namespace relab {

// The logical key whose existence tells idle consumers to exit.
inline const std::string kStopKey = "relab:stop";

// Reads the group until told to stop: receive, [lock], job (a sleep), write, [release], XACK.
void run_consumer(const Scenario& s, const std::string& actor, RolePorts& ports);

// Waits for every consumer to block in XREADGROUP (the start barrier), records the trial origin
// ("start"), then publishes the scenario's events at their times.
void run_producer(const Scenario& s, RolePorts& ports, Millis barrier_timeout);

std::string lock_key_for(const LockSpec& lock, int64_t order);

}  // namespace relab
