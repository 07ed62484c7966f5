// A Scenario back to a scenario file's JSON: what `relab explore` writes for a case it built in code.
#pragma once

#include <nlohmann/json.hpp>

#include "scenario/scenario.h"

namespace relab {

// The file that loads back to `s` (parse_scenario(write_scenario(s).dump(), ...) is equivalent to
// it): the described sections as desc::write_file writes them, the rest as the loader reads it.
// Made from the struct alone, never from s.source.
nlohmann::json write_scenario(const Scenario& s);

}  // namespace relab
