// A stream lab's trial supervisor, written once for both backends on the Control port: waits for
// the publishing roles while firing the scenario's faults as their triggers come due, waits for
// the group to drain (and for every fault to have fired), raises the stop flag and waits for the
// consumers to leave. Faults are recorded as nemesis records (invoke, then ok or fail).
#pragma once

#include <vector>

#include "roles/roles.h"
#include "ports/control.h"
#include "scenario/scenario.h"

namespace relab {

void supervise_stream_trial(const Scenario& s, const std::vector<RoleLaunch>& roles, Control& c);

// The last virtual/real instant a stream trial may run to, from its start: the barrier, the
// lab's last event and faults, publishing and draining, the stop.
Nanos stream_trial_budget(const Scenario& s);

// An idempotency lab's trial supervisor, on the same Control port and the same nemesis: waits for
// every client to be ready, gives the go signal (the origin, returned), fires the lab's faults as
// their triggers come due (adding which idempotency keys a server fault left, the key a killed
// client left behind) and waits for the clients to finish. Throws HarnessError when a client lost
// the store before any server fault began.
Nanos supervise_idem_trial(const Scenario& s, Control& c);
// The longest an idempotency trial may run, from the supervisor's start.
Nanos idem_trial_budget(const Scenario& s);

}  // namespace relab
