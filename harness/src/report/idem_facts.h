// What the summary formats (HTML, Markdown) say about the idempotency labs (article 002), worded
// once for both: the counts of orders and answers, each scripted step beside what was expected and
// what the article printed, and the figures measured beside the article's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "check/outcome.h"
#include "util/numbers.h"

namespace relab {

// A lab that ran clients through the middleware (not skipped): it has counts to show. (The
// benchmark is an idempotency workload that sends no request: it has figures only.)
bool is_idem_workload(const LabResult& lab);
// The counts over every trial of the lab.
IdemCounts idem_total(const LabResult& lab);

struct IdemCountCell {
    std::string label;  // "orders", "duplicates", "201", "replays", "409", "422", "layer 4", "5xx", "leaks"
    int value = 0;
    bool bad = false;   // a duplicate order or a leak: what makes a trial wrong
    bool operator==(const IdemCountCell&) const = default;
};
// In that order, then "sends"; "unanswered" only when some send had no answer, "vanished" when a
// claim's key vanished between Cache::add() and Cache::get().
std::vector<IdemCountCell> idem_count_cells(const IdemCounts& c);
// "150 orders, 50 duplicates", with ", 1 leak" when there was one.
std::string idem_counts_brief(const IdemCounts& c);

// The spec of each step of a case, in the case's (start) order, or nullptr where the scenario has
// none: a session's steps are matched in order.
std::vector<const SessionStep*> step_specs(const CaseOutcome& c, const SessionCase& spec);
// The reply as redis-cli (or psql) printed it: the tag, or "(error) …" / "ERROR: …".
std::string reply_text(const StepOutcome& step);
// What the scenario expected of a step: "(nil)", "(error) WRONGTYPE…", "(integer) 100…400",
// "UPDATE 1", "ERROR 40001"; "" when it expected nothing in particular.
std::string expected_reply_text(const SessionStep& step);
// "1.9 MB", "2.0 GB": decimal units, as the article counts.
std::string decimal_bytes(double bytes);
// An integer reply times the projection's keys, in decimal units ("2.0 MB"); nullopt when the reply
// is not an integer.
std::optional<std::string> projected_total(const StepOutcome& step, const MemoryProjection& p);

// The figures this machine measured beside the article's: the lab's measurements, then for every
// Redis step whose documented reply comes with a note on why this machine differs, the command and
// its reply, and every projection (reply × keys). Measurements without a documented figure are
// kept only when `with_undocumented`.
std::vector<Measurement> documented_figures(const LabResult& lab, bool with_undocumented = true);

}  // namespace relab
