// Loading a scenario's "documented" object: what the article reported, its words verbatim with
// their section, and relab's own summary and choices, kept apart so that the reports can mark
// which words are the article's.
#pragma once

#include "describe/json_reader.h"
#include "scenario/scenario.h"

namespace relab::scenario_json {

// The top level's "documented" object. A quote needs its article and section, and a section or an
// article without a quote is refused: a citation of nothing would read as the article's words.
Documented read_documented(const Reader& r, const json& v, const std::string& path);

// The top level's "compare" object: the comparison table the lab is a row of, and optionally the
// article's figures as that table's first row.
Comparison read_comparison(const Reader& r, const json& v, const std::string& path);

}  // namespace relab::scenario_json
