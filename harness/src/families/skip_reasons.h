// Why a backend cannot run a lab (it is then reported as skipped, with the reason), by family.
#pragma once

#include <optional>
#include <string>

#include "scenario/scenario.h"

namespace relab {

// What the simulator cannot model of a stream lab's servers and faults; nullopt: it runs it.
std::optional<std::string> stream_sim_skip_reason(const Scenario& s);
// The same for an idempotency-client lab (replicas and WAIT too).
std::optional<std::string> idem_sim_skip_reason(const Scenario& s);
// SET with NX and GET together came in Redis 7.0 (the middleware's claim, and Redis steps that use
// it): why a lab that runs on the run's Redis cannot run on this version. Labs on servers of their
// own use the machine's redis-server and are not judged here. nullopt: it can.
std::optional<std::string> nx_get_skip_reason(const Scenario& s, const std::string& redis_version);

}  // namespace relab
