// Loading the idempotency labs' parts of a scenario file (idem_spec.h), with the same checked
// reading as loader.cpp: every failure names the file, the JSON Pointer and what was expected.
#pragma once

#include "describe/json_reader.h"
#include "scenario/scenario.h"

namespace relab::scenario_json {

// A step of a session with "client": "redis".
SessionStep read_redis_step(const Reader& r, const json& v, const std::string& path);

// "servers": {"redis": {name: value, ...}, "replica": bool, "postgres": {name: value, ...}}: the
// servers the lab starts itself (lab_servers.h; "postgres" only where the caller allows it: stream labs).
LabServers read_servers(const Object& o);

// A workload with an "idem" object: sets s.kind (idem_cluster with "cluster", idem_benchmark with
// "benchmark", idem_clients otherwise) and fills s.idem. The stream workload's fields (orders,
// events, consumers, ...) do not apply and are refused, as are idem fields of another idem kind.
void read_idem_workload(const Object& top, Scenario& s);

}  // namespace relab::scenario_json
