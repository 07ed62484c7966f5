// A client of the idempotency labs: one process per client, sending its requests (POST /orders
// with an Idempotency-Key) through the middleware at their times, retrying per its policy. The
// business logic behind the middleware places an order in the orders table.
#pragma once

#include <string>

#include "ports/ports.h"
#include "scenario/scenario.h"

namespace relab {

// Start barrier: each client sets kIdemReadyKey + actor, then waits for kIdemGoKey, whose value is
// the trial origin on the Clock's scale (nanoseconds); request times count from it.
inline const std::string kIdemReadyKey = "relab:idem:ready:";
inline const std::string kIdemGoKey = "relab:idem:go";
// Set by the runner once the fault of that name is done (resend_after_fault).
inline const std::string kIdemFaultDoneKey = "relab:idem:fault-done:";

// Needs ports.order_table. Throws std::invalid_argument when the scenario has no such client.
void run_idem_client(const Scenario& s, const std::string& actor, RolePorts& ports, Millis barrier_timeout);

}  // namespace relab
