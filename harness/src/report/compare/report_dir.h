// The run reports saved in a folder (the *.json that `relab run --out-dir` or `--json` wrote),
// read back and merged into one RunReport that every format renders.
#pragma once

#include <string>
#include <vector>

#include "check/outcome.h"

namespace relab {

struct SavedReports {
    RunReport run;                     // every lab once, in file order
    std::vector<std::string> files;    // the run reports read, sorted by name
    std::vector<std::string> ignored;  // *.json that are not run reports (no "labs" array)
    std::vector<std::string> digests;  // lab digests (lab_digest.h: reports/reference); not shown
    // One line per lab whose verdict was not simply the one its file stated (recheck_verdict):
    // "FILE: lab ID (real): the file says held, but its 2 trials say broken (...); showing broken".
    std::vector<std::string> notes;
};

// Every lab's verdict is recomputed from its saved trials and scenario (recheck_verdict). Throws std::runtime_error naming the file when a *.json cannot be read or parsed, or holds a
// run report of the wrong shape.
SavedReports read_report_dir(const std::string& dir);
// The same for these files, read in the order given.
SavedReports read_report_files(const std::vector<std::string>& paths);

// Labs of all runs in order; a lab seen in several runs keeps its newest result at its first
// position, per backend (a lab's real and simulated results are both kept). Newest = the greatest
// (finished_at_us, sequence); a report without finished_at_us counts as finished when its run
// started (started_at_us, else started_at to the second); an exact tie goes to the later one in
// `runs`. The header (commit, seed, servers, start) is the run that started last.
RunReport merge_runs(const std::vector<RunReport>& runs);

}  // namespace relab
