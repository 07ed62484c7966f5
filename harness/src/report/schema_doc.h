// docs/scenarios.md, the scenario file reference, generated from scenarios/schema.json alone: every
// property with its JSON path, type, default, unit, description and example, and every rule across
// fields. The schema is the one source; `relab schema --format markdown` prints this.
#pragma once

#include <string>
#include <vector>

namespace relab {

// The reference as Markdown, from the schema's text (its members keep the file's order);
// `regenerate` is the command that writes it, named in its header. Throws std::runtime_error
// listing what undocumented_in_schema() finds: a reference with a hole is not printed.
std::string schema_markdown(const std::string& schema_text, const std::string& regenerate);

// What the reference could not describe: each property (as its JSON path within the schema) that
// has no "description", on itself or on the definition it names, and each rule (an "allOf" item,
// or a constraint of its own) without one. Empty when the schema is fully described.
std::vector<std::string> undocumented_in_schema(const std::string& schema_text);

}  // namespace relab
