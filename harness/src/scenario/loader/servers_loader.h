// Loading a lab's own servers (lab_servers.h), with the same checked reading as loader.cpp: every
// failure names the file, the JSON Pointer and what was expected.
#pragma once

#include "describe/json_reader.h"
#include "scenario/lab_servers.h"

namespace relab::scenario_json {

// "servers": {"redis": {name: value, ...}, "replica": bool, "cache": {...}, "postgres": {...}}: the
// servers the lab starts itself ("cache" and "postgres" only where the caller's Object allows them).
LabServers read_servers(const Object& o);

}  // namespace relab::scenario_json
