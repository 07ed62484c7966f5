// What the summary formats (HTML, Markdown, JUnit) say about a lab, worded once for all of them.
#pragma once

#include <string>
#include <string_view>

#include "check/outcome.h"

namespace relab {

enum class Verdict { held, broken, skipped };

Verdict verdict_of(const LabResult& lab);
const char* verdict_text(Verdict v);  // "held", "broken", "skipped"

struct LabCounts {
    int labs = 0;
    int held = 0;
    int broken = 0;
    int skipped = 0;
};
LabCounts count_labs(const RunReport& run);

// "10/10 — wrong 10/10; created overwrites at 816 ms", "10/10", the text alone, or "" when the
// scenario documents nothing; relab's choice follows in brackets. The text is relab's summary, not
// the article's words: a table that shows it says so in its header (k_documented_header).
std::string documented_text(const Documented& d);
// The header of a summary table's documented_text column.
inline constexpr const char* k_documented_header = "documented (relab's summary)";
// Its count alone: "10/10", "3", or "" when the scenario documents no count.
std::string documented_count(const Documented& d);
// "5/20" (wrong trials / trials), "1/3 cases"; "" for a skipped lab.
std::string measured_text(const LabResult& lab);
// The order status a workload lab expects at the end ("paid"); "" for session labs.
std::string expected_final(const Scenario& s);
// "sim" or "real": what the lab ran on (JSON without a backend is "real").
std::string backend_of(const LabResult& lab);
bool is_sim(const LabResult& lab);
// Where a lab's result goes in a page or a merged report: its id, with "-sim" for a simulated run, so
// that the real and the simulated result of one lab stand side by side.
std::string lab_key(const LabResult& lab);
// A simulated lab: "23.7% (95% CI 21.9–25.6%) over 2000 trials", or "replay of trial seed 0x…" for
// a --replay run; "" for a real or skipped lab.
std::string wrong_rate_text(const LabResult& lab);
// "relab run 08c-s4a --backend sim --replay 0x82a9ac146215b853"
std::string replay_command(const LabResult& lab, uint64_t seed);
// The trial of the lab that ran with this seed, or nullptr.
const TrialOutcome* trial_of_seed(const LabResult& lab, uint64_t seed);
// The order's row at the trial's end, or nullptr when the trial left none.
const OrderRow* final_row(const TrialOutcome& t, int64_t order_id);
// The measured cell of a summary table: measured_text, then for a simulated lab its wrong rate and
// for an idempotency workload its orders and duplicates: "474/2000 (23.7%, 95% CI 21.9–25.6%)",
// "1/1: 150 orders, 50 duplicates".
std::string measured_cell_text(const LabResult& lab);
// S2's sharded labs: "3–12 of 200 orders wrong per trial, 739 events/s".
std::string shard_brief(const LabResult& lab);

// A stream lab: a workload that publishes to a stream and consumes it (not an idempotency lab, not
// scripted sessions). Its trials have an accounting.
bool is_stream_lab(const LabResult& lab);
// The accounting of every trial of the lab, counts summed (no examples: those are per trial).
Accounting accounting_total(const LabResult& lab);

// The text report of this lab alone, as `relab run` prints it (English, trial 1 + first wrong).
std::string lab_text_report(const LabResult& lab);

// Text for XML and HTML: & < > " ' escaped; control characters XML cannot carry are dropped.
std::string markup_escape(std::string_view text);

}  // namespace relab
