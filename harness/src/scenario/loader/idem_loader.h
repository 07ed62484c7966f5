// Loading the idempotency labs' parts of a scenario file, with the same checked reading as
// loader.cpp: every failure names the file, the JSON Pointer and what was expected.
#pragma once

#include "describe/json_reader.h"
#include "scenario/scenario.h"

namespace relab::scenario_json {

// A step of a session with "client": "redis".
SessionStep read_redis_step(const Reader& r, const json& v, const std::string& path);

// A workload with an "idem" object: sets s.kind (idem_cluster with "cluster", idem_benchmark with
// "benchmark", idem_clients otherwise), fills s.idem and, for a lab with clients, its own servers
// and faults. The stream workload's fields do not apply and are refused, as are idem fields of
// another idem kind.
void read_idem_lab(const Reader& r, const Object& top, Scenario& s);

}  // namespace relab::scenario_json
