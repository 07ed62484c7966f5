// scenarios/schema.json as the described structs give it: the $defs of every described section
// and the top-level properties that hold them are generated from the descriptions
// (describe/describe.h); what no description gives yet (the rules across fields, the expectation,
// the session labs) stays as the file has it. `relab schema --format json`
// writes the result, and the docs lint fails while the committed file differs from it.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace relab {

// The committed schema's text with every described part put in its place, formatted as the file is.
std::string schema_with_descriptions(const std::string& schema_text);

}  // namespace relab
