// The soak labs' accounting at the end of a run: per soak lab (trial 1), every published entry
// sorted into processed, still pending in the group, never delivered or lost, beside the kills
// and restarts the nemesis made, what the group gave back after them and the wrong orders. As
// text (stdout, soak-table.txt) and as JSON (soak-table.json).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/outcome.h"

namespace relab {

struct SoakRow {
    std::string id;        // the lab's id, "/mutant" after it for a mutant
    std::string title;
    std::string verdict;   // held / broken
    std::vector<std::string> failures;  // why it broke, the first few
    int64_t orders = 0;
    int64_t wrong_orders = 0;  // orders not in their expected final state
    Accounting accounting;     // trial 1's
    SoakStats soak;            // trial 1's
    LoadStats load;            // trial 1's
    double elapsed_s = 0;      // the lab's wall time
    int64_t role_peak_rss_kb = 0;  // the largest role process, 0 when not measured
};

// Every soak lab of the report ("soak" in its scenario) that ran, in report order.
std::vector<SoakRow> soak_rows(const std::vector<LabResult>& labs);

// One trial's accounting in a line: "100002 events sent · 100002 processed (…) · 0 pending · …".
std::string soak_accounting_text(const Accounting& a, const SoakStats& k, int64_t wrong_orders, int64_t orders);
// Its faults and timing: "44 kills (44 restarts, 0 failed) · 35 entries delivered again after a
// kill · drained at 134.6 s (deadline 163.3 s)".
std::string soak_faults_text(const SoakStats& k);

void write_soak_table(const std::vector<SoakRow>& rows, std::ostream& out);
nlohmann::json soak_table_json(const std::vector<SoakRow>& rows);

}  // namespace relab
