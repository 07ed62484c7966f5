// The idempotency labs' part of the JSON report: per trial "idem" (counts, orders, leaks), per
// lab summary "measurements" and "idem" (the counts over all trials), and "redis": true on Redis
// steps. Written by run_to_json and read back by run_from_json.
#pragma once

#include <nlohmann/json.hpp>

#include "check/outcome.h"

namespace relab {

// Adds the lab's idempotency data to its JSON (as lab_json made it); nothing for other labs.
void add_idem_json(const LabResult& lab, nlohmann::json& lab_json);
// The inverse: fills what add_idem_json wrote; absent fields leave the defaults.
void read_idem_json(const nlohmann::json& lab_json, LabResult& lab);

}  // namespace relab
