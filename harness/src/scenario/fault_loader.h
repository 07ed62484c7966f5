// The "faults" and "recovery" fields of a stream lab's scenario file.
#pragma once

#include "scenario/json_reader.h"
#include "scenario/scenario.h"

namespace relab {

// /recovery: {"pending_first": true, "autoclaim": {"min_idle_ms", "every_ms", "count", "in"}}.
RecoverySpec read_recovery(const scenario_json::Object& o);
// /faults: the nemesis's schedule. `actors` are the lab's roles, the targets a fault may name.
std::vector<FaultSpec> read_faults(const scenario_json::Reader& r, const nlohmann::json& v, const std::string& path,
                                   const std::vector<std::string>& actors);

}  // namespace relab
