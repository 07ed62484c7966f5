// The fault vocabulary's behaviour: names, and what each action does through the Control port.
#pragma once

#include <string>

#include "fault/fault_spec.h"
#include "ports/control.h"

namespace relab {

// Performs fault `f`'s action on `target` (a role's actor or a server) and returns what happened
// for the fault's ok record: "text" in words, and the action's figures. Throws std::runtime_error
// when it cannot (the fault's fail record says why).
nlohmann::json apply_fault(const FaultSpec& f, const std::string& target, Control& c);

}  // namespace relab
