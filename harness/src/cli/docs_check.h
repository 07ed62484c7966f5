// The docs lint test's checks of README.md and docs/*.md (ctest docs_lint, label lint):
//   - every relative link and #anchor resolves, into other files' headings too (GitHub's anchors),
//     and no link leaves the repository; a code span shaped like a repository path names one that exists;
//   - every lab id, part and group named exists: a backticked token shaped like a lab id
//     (08x-…, idem-…, load-…, soak-…), a backticked token in a table column headed id, part(s)
//     or group(s), and every lab argument of `relab run` / `./run_labs.sh`;
//   - every `relab` subcommand and option shown in a code block or a code span exists, checked
//     against relab's own command line (cli_spec());
//   - each generated file equals what its generator prints now, or the check names the command.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "cli/cli_spec.h"

namespace relab {

struct GeneratedDoc {
    std::string file;     // relative to the root: "docs/labs.md"
    std::string text;     // what the generator prints now
    std::string command;  // what writes it: "./build/relab list --format markdown > docs/labs.md"
};

struct DocsFacts {
    std::set<std::string> lab_names;  // what `relab run` takes by name: ids, parts, outputs, groups, all
    std::vector<CliCommandSpec> cli;  // relab's command line
    std::vector<GeneratedDoc> generated;
};

// The problems found in `docs` (paths relative to `root`), one line each:
// "FILE:LINE: what is wrong and what to do". Empty when the docs are sound.
std::vector<std::string> check_docs(const std::string& root, const std::vector<std::string>& docs,
                                    const DocsFacts& facts);

// README.md and every docs/*.md under `root` that exist, sorted.
std::vector<std::string> doc_files(const std::string& root);

// The repository's own facts: the labs under root/scenarios, relab's command line, and
// docs/labs.md and docs/scenarios.md as `relab list --format markdown` and `relab schema --format
// markdown` print them from root/scenarios and root/reports/reference.
DocsFacts repo_docs_facts(const std::string& root);

}  // namespace relab
