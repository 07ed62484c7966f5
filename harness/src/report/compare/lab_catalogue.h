// docs/labs.md, the lab catalogue, generated from the scenario files and the reference run: every
// lab with its id, part, group, what it shows, the mechanism its expectation checks, the article's
// figure and words, and the figure the reference run measured. `relab list --format markdown`.
#pragma once

#include <string>
#include <vector>

#include "report/compare/lab_digest.h"
#include "scenario/scenario.h"

namespace relab {

// One scenario folder's labs, in the order `relab list` shows them.
struct CatalogueFolder {
    std::string label;       // "scenarios/", "scenarios/load/"
    std::string how_to_run;  // Markdown: "`relab run` with no lab named"
    std::vector<Scenario> labs;
};

struct CatalogueInput {
    std::vector<CatalogueFolder> folders;
    RunDigest reference;          // the reference run's labs (none: every lab says so)
    std::string reference_label;  // where it was read: "reports/reference/reference.json"
    std::string regenerate;       // the command that writes the catalogue, named in its header
};

std::string lab_catalogue_markdown(const CatalogueInput& in);

}  // namespace relab
