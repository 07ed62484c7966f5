// The process of one idempotency-lab client (`relab role --config`): its ports are a Kv that
// reconnects after a restart or failover (FailoverKv) and the orders table.
#pragma once

#include "run/role_process.h"
#include "scenario/scenario.h"

namespace relab {

// Returns the exit status; throws what the role throws (run_role_process reports it).
int run_idem_role_process(const RoleConfig& c, const Scenario& s);

}  // namespace relab
