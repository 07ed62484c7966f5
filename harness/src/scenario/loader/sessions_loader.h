// Loading a sessions lab ("kind": "sessions"), with the same checked reading as loader.cpp: every
// failure names the file, the JSON Pointer and what was expected.
#pragma once

#include "describe/json_reader.h"
#include "scenario/scenario.h"

namespace relab::scenario_json {

// "cases": each a title, its setup SQL, its sessions of psql or redis-cli steps, and what the
// tables hold at its end. Sets s.kind and s.cases.
void read_sessions_lab(const Reader& r, const Object& top, Scenario& s);

}  // namespace relab::scenario_json
