// The fault vocabulary's behaviour: what each action does, as a composition of the Control port's
// primitives written once for both backends (fault/faults.cpp).
#pragma once

#include <string>

#include "fault/fault_spec.h"
#include "ports/control.h"

namespace relab {

// Performs fault `f`'s action on `target` (its own target, resolved: a role, a server, "clients"),
// composed of the Control port's primitives, and returns what happened for the fault's ok record:
// "text" in words, and the action's figures. Throws std::runtime_error when it cannot (the fault's
// fail record says why).
nlohmann::json apply_fault(const FaultSpec& f, const Target& target, Control& c);

}  // namespace relab
