// The fault vocabulary's behaviour: names, and what each action does through the Control port.
#pragma once

#include <string>

#include "fault/fault_spec.h"
#include "ports/control.h"

namespace relab {

// Performs `action` on `target` (a role's actor) and returns what happened, in words, for the
// fault's ok record. Throws std::runtime_error when it cannot (the fault's fail record says why).
std::string apply_fault(FaultAction action, const std::string& target, Control& c);

}  // namespace relab
