// The "exec" fields of a scenario's role objects (exec_spec.h): a consumer, the producer, a
// dispatcher or the idempotency clients given as a program. Read with the loader's checked reading:
// every failure names the file, the JSON Pointer and what was expected.
#pragma once

#include <optional>

#include "describe/json_reader.h"
#include "scenario/scenario.h"

namespace relab::scenario_json {

// `known` with the exec fields added: the fields of a role object that may be a program.
std::vector<std::string> with_exec_fields(std::vector<std::string> known);

// The program a role object names ("exec", "env", "trace", "dir", "check", "install"), or nullopt
// when it has no "exec" (its other exec fields are then refused).
std::optional<ExecSpec> read_exec(const Object& o);

// A role object that must be a program: read_exec, its "exec" required.
ExecSpec read_program(const Object& o);

// "consumers": a count (relab's own consumers), or {"count": N, "exec": [...], ...}: N copies of a
// program. Sets s.consumers and, for a program, s.exec.by_role["consumer"].
void read_consumers(const Object& top, Scenario& s);

// What a lab with programs may not also ask of relab's own consumer (a reorder buffer, fanout,
// shards): refused, naming the field, since the program would silently not do it.
void refuse_exec_conflicts(const Object& top, const Scenario& s);

}  // namespace relab::scenario_json
