// The "faults" field of a lab's scenario file.
#pragma once

#include "describe/json_reader.h"
#include "scenario/scenario.h"

namespace relab {

// /faults: the nemesis's schedule. `actors` are the lab's roles and servers ("redis", "postgres",
// ...), the targets a fault may name besides "clients" and "matched"; which action may act on
// which kind of target is fault/faults.cpp's table.
std::vector<FaultSpec> read_faults(const scenario_json::Reader& r, const nlohmann::json& v, const std::string& path,
                                   const std::vector<std::string>& actors);

}  // namespace relab
