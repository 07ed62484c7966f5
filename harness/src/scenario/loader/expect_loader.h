// Reading a scenario's "expect" object (scenario.h's Expectation): how many trials or cases go
// wrong, the terms every trial and every wrong trial states (terms.h's table), what may appear, the
// throughput ratio and until_wrong. Read with the loader's checked reading: every failure names the
// file, the JSON Pointer and what was expected.
#pragma once

#include <string>

#include "describe/json_reader.h"
#include "scenario/scenario.h"

namespace relab::scenario_json {

// `trials` is how many trials (workload) or cases (sessions) the count is over.
Expectation read_expect(const Reader& r, const json& v, const std::string& path, LabKind kind, int trials,
                        const std::string& trials_name);

// A term is refused where the lab does not measure its figure: there it could never hold. (The soak
// figures are read from the group relab observes at a soak trial's end; side effects are counted
// only where consumers send them; serialization failures only where jobs run in a transaction.)
void check_term_needs(const Reader& r, const Scenario& s, const std::string& expect_path);

}  // namespace relab::scenario_json
