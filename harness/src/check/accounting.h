// The stream labs' accounting, in the spirit of Jepsen's total-queue checker: every entry the
// producer was told it published is followed through the history to the jobs that processed it.
// Pure functions of recorded data.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ports/ports.h"
#include "scenario/scenario.h"

namespace relab {

// Each class counts stream entries (ids), not records, except stale_overwrites (writes).
//   published       ok publishes with an entry id: what the producer (or dispatcher) was told got in
//   processed_once  published entries with exactly one `write` (the job ran once; affected 0 counts:
//                   a refused CAS still ran)
//   duplicated      published entries with two writes or more (the job ran more than once)
//   unapplied       published entries processed, but no write of them changed a row (every write
//                   affected 0: a version check refused the transition; P4's skipped intermediates)
//   lost            published entries with no write at all (never processed) and not dead-lettered
//   dead_lettered   published entries with no write that a consumer XADDed to the dead-letter stream
//                   and acknowledged (a poison entry at recovery.max_deliveries): given up on, visibly
//   redelivered     entries received again after an ack of them (the group forgot the ack)
//   unexpected      entries received or written that no ok publish produced (an entry whose WAIT
//                   found no replica, recorded not_replicated, is neither published nor unexpected)
//   pending         in a trial that ended quiet (its group not drained, an observe with quiet_ms):
//                   published entries still in the group's PEL (a consumer died mid-job and nothing
//                   claimed the entry): the server's PEL when the observe lists it ("pel"), else
//                   entries received whose last delivery no ack followed
//   never_delivered in such a trial: published entries no consumer received
//   stale_overwrites  applied writes (affected > 0) of an older event version after a newer one of the
//                   same order, in time order
//   trimmed_undelivered  entries a trim (the nemesis's XTRIM) removed before any consumer received them:
//                   gone with no trace in the PEL
//   trimmed_pending entries a trim removed while received and not acknowledged: their PEL entries
//                   stay, and a read of them gives an ID with no body
// published = the sum of the classes in k_published_classes, each published entry in exactly one.
// Beside them, in a lab whose consumers send side effects (write.side_effect):
//   side_effects    side effects sent (`side_effect` records: rows of tmp_side_effects)
//   side_effects_out_of_order  orders whose side effects, in the table's seq order, are not in
//                   version order: a later-numbered one carries an older version than one before it
// Beside them, in a lab whose jobs run in a transaction (write.isolation):
//   serialization_failures  tries of a job's transaction PostgreSQL refused with 40001 and that rolled
//                   back (`serialization_failure` records): each was run again, or its entry given up on
// Beside them, counted per event (order, type, version) rather than per entry:
//   republished     events with ok publishes in two entries or more (an outbox row published by two
//                   dispatchers, or again after a dispatcher's crash before its mark)
//   reapplied       events whose write ran in two jobs or more, whichever entries carried them (a
//                   write the consumer's dedupe skipped is not one)
//   skipped         entries whose job the consumer's dedupe skipped: a copy of an event already applied
struct Accounting {
    int published = 0;
    int processed_once = 0;
    int duplicated = 0;
    int lost = 0;
    int redelivered = 0;
    int unexpected = 0;
    int stale_overwrites = 0;
    int unapplied = 0;
    int side_effects = 0;
    int side_effects_out_of_order = 0;
    int republished = 0;
    int reapplied = 0;
    int skipped = 0;
    int pending = 0;
    int never_delivered = 0;
    int dead_lettered = 0;
    int trimmed_undelivered = 0;
    int trimmed_pending = 0;
    int serialization_failures = 0;
    // The first few of each class (entry ids; for stale overwrites StaleOverwrite::describe()).
    std::vector<std::string> duplicated_examples;
    std::vector<std::string> lost_examples;
    std::vector<std::string> redelivered_examples;
    std::vector<std::string> unexpected_examples;
    std::vector<std::string> stale_examples;
    std::vector<std::string> unapplied_examples;
    std::vector<std::string> side_effect_examples;  // "#42: paid (v2) sent before created (v1)"
    std::vector<std::string> republished_examples;  // "#42 created v1 ×2"
    std::vector<std::string> reapplied_examples;
    std::vector<std::string> pending_examples;
    std::vector<std::string> never_delivered_examples;
    std::vector<std::string> dead_lettered_examples;
    std::vector<std::string> trimmed_undelivered_examples;
    std::vector<std::string> trimmed_pending_examples;
    std::vector<std::string> serialization_failure_examples;  // the entries whose transaction was refused

    // No figure that flags a trial (AccountingFlag) is above zero: nothing to flag.
    bool clean() const;
    // Counts added; examples are a trial's own and are not summed.
    Accounting& operator+=(const Accounting& other);
    bool operator==(const Accounting&) const = default;
};

// The classes a published entry falls in, exactly one each: their counts sum to `published`.
inline constexpr int Accounting::*k_published_classes[] = {&Accounting::processed_once, &Accounting::duplicated,
                                                            &Accounting::lost, &Accounting::dead_lettered};
// Why `a`'s published entries are not split into its classes, or nullopt: every class of
// k_published_classes between 0 and `published`, and together exactly `published`; pending and
// never delivered (shares of the published entries, each entry in one at most) together at most it.
std::optional<std::string> published_split_violation(const Accounting& a);

// Where the text report prints a figure.
enum class AccountingPart {
    entries,       // the accounting line: what became of the published entries
    side_effects,  // after it, in a lab whose consumers sent side effects
    beside,        // beside the line when not zero (a report's last column)
    per_event,     // the per-event line, and beside the accounting line when not zero
};

// What a figure above zero says of a trial.
enum class AccountingFlag {
    none,
    flagged,  // the trial's accounting is not clean: worth a look
    anomaly,  // flagged, and a regression (relab diff) in a lab that had none of it before
};

// One figure of the accounting, its count and how every report names it.
struct AccountingFigure {
    std::string_view name;  // its key in JSON reports and digests; what an expectation term names
    int Accounting::*count;
    std::vector<std::string> Accounting::*examples;  // its first few; nullptr: none are kept
    std::string_view one, many;  // its words after the count: "1 stale overwrite", "2 stale overwrites"
    std::string_view detail;     // its label among a trial's details (accounting_details); empty: none
    AccountingPart part;
    AccountingFlag flag;
};

// Every figure of Accounting, in the order the text report prints them. JSON reports (written and
// read back), digests, the checker's terms and the text report all walk this list.
std::span<const AccountingFigure> accounting_figures();
// The figure named `name`, or nullptr.
const AccountingFigure* accounting_figure(std::string_view name);
// Whether reports of `a` carry the figure: a side effect's only where some were sent.
bool reported(const AccountingFigure& f, const Accounting& a);

// At most this many examples are kept per class.
inline constexpr size_t k_accounting_examples = 3;

// The accounting of one trial's history, in time order (ties in recorded order).
// A publish whose entry is in the stream: an ok one, or one whose XADD ran but whose reply was lost.
bool reached_stream(const HistoryRecord& r);

// `stale`, when given, receives every stale overwrite the count counts (the examples keep only a
// few, as text): what an expectation's stale-overwrite terms are checked against, with no second pass.
Accounting account(const std::vector<HistoryRecord>& history, std::vector<StaleOverwrite>* stale = nullptr);

// Applied writes of an older event after a newer one of the same order, in time order.
std::vector<StaleOverwrite> stale_overwrites(const std::vector<HistoryRecord>& history);

// Per order whose side effects went out of version order, the first inversion in seq order:
// "#42: paid (v2) sent before created (v1)". Orders by id.
std::vector<std::string> side_effects_out_of_order(const std::vector<HistoryRecord>& history);

// The side_effect records of a trial against the rows its tmp_side_effects holds at the end: the
// same (seq, order, type, version), one for one. Throws HarnessError naming the first difference: a
// side effect the history and the table disagree on is relab's failure, never a result.
void check_side_effects_recorded(const std::vector<HistoryRecord>& history, const std::vector<SideEffectRow>& rows);

// "2 published · 2 processed once · 0 duplicated · 0 lost · 1 redelivered after ack · 0 unexpected ·
// 1 stale overwrite"
std::string accounting_text(const Accounting& a);
// The non-zero classes with their examples, one item each: "duplicated 1: 1-0", "lost 1: 2-0", ...
std::vector<std::string> accounting_details(const Accounting& a);
// The counts beyond the entry classes, those that are not zero, for a report's last column:
// "1 unapplied · 4 events published again · 1 entry skipped as a duplicate · 2 side effects sent,
// 1 order out of version order"; empty when all are zero.
std::string accounting_more_text(const Accounting& a);
// The per-event counts, empty when all three are 0: "2 events published again (#42 created v1 ×2, …) ·
// 0 written again · 1 skipped as a duplicate".
std::string republish_text(const Accounting& a);

}  // namespace relab
