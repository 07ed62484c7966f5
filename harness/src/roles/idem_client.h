// A client of the idempotency labs: one process per client, sending its requests (POST /orders
// with an Idempotency-Key) through the middleware at their times, retrying per its policy. The
// business logic behind the middleware places an order in the orders table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ports/ports.h"
#include "roles/role_settings.h"
#include "scenario/scenario.h"

namespace relab {

// Start barrier: each client sets kIdemReadyKey + actor, then waits for kIdemGoKey, whose value is
// the trial origin on the Clock's scale (nanoseconds); request times count from it.
inline const std::string kIdemReadyKey = "relab:idem:ready:";
inline const std::string kIdemGoKey = "relab:idem:go";
// Set by the runner once the fault of that name is done (resend_after_fault).
inline const std::string kIdemFaultDoneKey = "relab:idem:fault-done:";

// The logical keys the middleware uses for the requests first sent at or before at_ms (the
// keys a fault or an observation at that time looks at), each once, in the scenario's order.
std::vector<std::string> idem_keys_due(const Scenario& s, int64_t at_ms);
// How long, from the trial origin, the clients may take at most: the last scheduled send plus
// every retry of every send, each with its work and a margin. The trial's time budget.
int64_t idem_activity_budget_ms(const Scenario& s);

// Needs ports.order_table. Throws std::invalid_argument when the settings have no such client.
void run_idem_client(const RoleSettings& s, const std::string& actor, RolePorts& ports, Millis barrier_timeout);

}  // namespace relab
