// A run's labs in brief: per lab its verdict, wrong count with the 95% interval and accounting
// totals, no trials, no histories. `relab diff --save-reference` writes it (reports/reference/
// reference.json, a few tens of KB for a full run); `relab diff` compares two of them, each read from
// such a file or made from a folder of run reports.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/outcome.h"

namespace relab {

// The top-level key that marks a digest file (a run report has "labs" instead).
inline constexpr const char* k_digest_format = "relab-lab-digest/1";

struct LabDigest {
    std::string id;
    std::string mutant;            // "" for the lab itself
    std::string backend = "real";  // "real" or "sim"
    std::string output;            // the report file stem it came from
    std::string kind;              // LabKind as text: "stream", "sessions", ...
    std::string verdict;           // "held", "broken" or "skipped"
    std::string expectation;       // Expectation::describe()
    // The expectation's wrong count is all, none or an exact number: any change of the wrong count
    // matters. A racy lab (at least / at most / between) is compared through the interval.
    bool deterministic = false;
    int trials = 0;  // trials, or cases of a session lab
    int wrong = 0;
    double wrong_rate = 0;
    double ci_low = 0;  // Wilson 95% interval of wrong / trials
    double ci_high = 1;
    std::map<std::string, int> accounting;  // stream labs: the totals over the trials; empty otherwise
    // The accounting anomalies the expectation bounds in every trial ("duplicated": {"at_most": 10}):
    // the lab's own verdict judges them, so their first appearance is not a regression by itself.
    std::vector<std::string> bounded;
    // The accounting anomalies the expectation says may appear in any number ("may_appear"): their
    // first appearance is not a regression either.
    std::vector<std::string> may_appear;
    std::string failure;                    // the first reason a broken lab broke
    std::string skip_reason;

    // "08a-baseline (real)", "08c-s4a [no-lock] (sim)"
    std::string name() const;
    // What identifies the lab across runs: id, mutant, backend.
    std::string key() const;
};

struct RunDigest {
    std::string relab_commit;
    uint64_t seed = 0;
    std::string started_at;
    std::string redis_version;
    std::string pg_version;
    std::vector<LabDigest> labs;
};

LabDigest digest_lab(const LabResult& lab);
RunDigest digest_run(const RunReport& run);

bool is_digest_json(const nlohmann::json& j);
nlohmann::json digest_to_json(const RunDigest& d);
// The file's text: the header, then one lab per line (small, and a git diff of it reads well).
std::string digest_text(const RunDigest& d);
// Throws std::runtime_error saying which field is missing or of the wrong type.
RunDigest digest_from_json(const nlohmann::json& j);

}  // namespace relab
