// The idempotency labs' part of the JSON report: per trial "idem" (counts, orders, leaks), per
// lab summary "measurements" and "idem" (the counts over all trials), and "redis": true on Redis
// steps. Written by run_to_json and read back by run_from_json.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "check/outcome.h"

namespace relab {

// Adds the lab's idempotency data to its JSON (as lab_json made it); nothing for other labs.
void add_idem_json(const LabResult& lab, nlohmann::json& lab_json);
// The inverse: fills what add_idem_json wrote into `lab`, read from the report at `path` (its lab's
// JSON Pointer, /labs/N); absent fields leave the defaults, a field of the wrong type is a
// std::runtime_error naming its JSON Pointer, as run_from_json's own.
void read_idem_json(const nlohmann::json& lab_json, const std::string& path, LabResult& lab);

}  // namespace relab
