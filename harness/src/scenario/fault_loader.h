// The "faults" and "recovery" fields of a stream lab's scenario file.
#pragma once

#include "scenario/json_reader.h"
#include "scenario/scenario.h"

namespace relab {

// /recovery: {"pending_first": true, "autoclaim": {"min_idle_ms", "every_ms", "count", "in"}}, read
// by the table recovery_fields() (fault/fault_spec.h): its keys, types and bounds.
RecoverySpec read_recovery(const scenario_json::Reader& r, const nlohmann::json& v, const std::string& path);
// /faults: the nemesis's schedule. `actors` are the lab's roles and servers ("redis", "postgres",
// ...), the targets a fault may name besides "clients" and "matched"; which action may act on
// which kind of target is fault/faults.cpp's table.
std::vector<FaultSpec> read_faults(const scenario_json::Reader& r, const nlohmann::json& v, const std::string& path,
                                   const std::vector<std::string>& actors);

}  // namespace relab
