// Loading a stream lab (a workload without "idem"), with the same checked reading as loader.cpp:
// every failure names the file, the JSON Pointer and what was expected.
#pragma once

#include "describe/json_reader.h"
#include "scenario/scenario.h"

namespace relab::scenario_json {

// The stream, the orders and events (given or generated), the consumers, the write, the lock,
// buffer and fanout, the publishers, the shards, the soak, the sim's settings, the recovery, the
// lab's own servers and its faults, with the rules across them. Sets s.kind and those parts of s.
void read_stream_lab(const Reader& r, const Object& top, Scenario& s);

}  // namespace relab::scenario_json
