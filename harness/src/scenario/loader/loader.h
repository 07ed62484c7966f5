// Scenario files -> Scenario: the loader's entry points (loader.cpp), and the labs derived from a
// loaded one (a mutant, the arrangement beside it, a resized workload), each validated like a file.
#pragma once

#include <string>
#include <vector>

#include "scenario/scenario.h"

namespace relab {

// Parses and validates one file. Throws ScenarioError naming file, JSON path and reason.
// JSON with // and /* */ comments is accepted.
Scenario load_scenario(const std::string& path);
Scenario parse_scenario(const std::string& text, const std::string& file_for_errors);

// Every *.json in dir but schema.json, sorted by file name. The first bad file throws.
std::vector<Scenario> load_scenario_dir(const std::string& dir);

// The paths a mutant's patch touches (each op's path, and a move's or copy's from), sorted, once each.
std::vector<std::string> mutant_paths(const Mutant& m);

// The lab with `mutant`'s patch applied, validated like a file; throws ScenarioError when the
// patch does not apply or the result is not a valid scenario.
Scenario apply_mutant(const Scenario& s, const Mutant& mutant);
// The arrangement beside the lab (its StreamLab::beside's patch applied, without a beside or a throughput_ratio
// of its own), validated like a file. Requires a stream lab with a beside.
Scenario beside_scenario(const Scenario& s);

// The lab with its generated workload resized to `orders` orders (its "generate"/"orders"); the
// title says so. Throws ScenarioError when the result is not valid (a slow job beyond the last order).
Scenario with_generated_orders(const Scenario& s, int orders);

}  // namespace relab
