// `relab diff OLD NEW`: which labs' outcomes changed between two runs, and which of the changes are
// regressions. Pure: it compares two RunDigests (lab_digest.h); read_digest makes one from a folder
// of run reports (reports/out) or from a digest file (reports/reference/reference.json).
//
// The rules, per lab (keyed by id, mutant and backend):
//   - held → broken                                  regression
//   - a new accounting anomaly: lost, duplicated, redelivered or unexpected 0 → more than 0
//                                                    regression, unless NEW's expectation bounds
//                                                    that class (its verdict judges it): changed
//   - the wrong rate left OLD's 95% interval (a deterministic lab, whose expectation says wrong = all,
//     none or exactly N: any change of the rate)   changed; a regression too unless NEW still holds
//   - broken → held, skipped ↔ ran, the expectation's text changed    changed
//   - in OLD, not in NEW                             missing (a regression with `strict`)
//   - in NEW, not in OLD                             new
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/compare/lab_digest.h"

namespace relab {

struct LabChange {
    enum class Kind { changed, missing, added };
    Kind kind = Kind::changed;
    std::string lab;                // LabDigest::name(): "08a-baseline (real)"
    std::string id, mutant, backend;
    std::vector<std::string> what;  // "held → broken", "wrong 10/10 → 0/10 (outside 69.2–100.0%)"
    bool regression = false;
};

struct DigestDiff {
    std::vector<LabChange> changes;  // NEW's order, then the labs missing from NEW in OLD's order
    int compared = 0;                // labs in both
    int regressions = 0;
    bool no_change() const { return changes.empty(); }
};

DigestDiff diff_digests(const RunDigest& old_run, const RunDigest& new_run, bool strict = false);

// One line per change ("regression  08a-baseline (real): held → broken; …"), then the summary line;
// "no change: N lab(s) compared" alone when nothing changed.
std::string diff_text(const DigestDiff& d);
nlohmann::json diff_json(const DigestDiff& d);

// A digest of what `path` holds: a folder of run reports (every *.json with "labs", merged as
// `relab report` merges them, verdicts recomputed; test-*.json, which `./run_labs.sh test` leaves,
// are left out), a folder of digest files, a run report file or a digest file. `notes` gets what
// the reader should know (files left out, verdicts recomputed). Throws std::runtime_error saying
// what is wrong and what to do.
RunDigest read_digest(const std::string& path, std::vector<std::string>& notes);

}  // namespace relab
