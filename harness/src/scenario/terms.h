// Every term an expectation may state (the keys of `expect` and `every_wrong_trial` beside `wrong`
// and `until_wrong`), defined once: its name, its words, what shape the loader reads, the figure of
// the trial it bounds, and what a lab needs for it to be measured. The loader, TrialTerms'
// empty() and describe() and the checker walk this table; a band on a figure the trial already
// counts is one row of it (terms.cpp).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace relab {

// What a term's value is, and so how it is read, described and checked.
enum class TermShape {
    final_status,      // {"42": "created"}: each order's exact final status
    stale_overwrites,  // {"order", "by", "over"}, or a list of them: applied writes that overwrote a newer one
    figure,            // a band on one figure of the trial's accounting; a bare count means exactly it
    figures,           // {"figure": band, ...}: bands on figures of one of the trial's figure tables
    has,               // history records that must occur
    never,             // history records that must not
    sequence,          // records that must occur in this order
    stream,            // the stream as XRANGE returns it, "order:type" per entry
    publish_delay,     // how late an order's first event reached the stream
};

// The trial's figure tables a term bounds: the accounting's (check/accounting.h), an idempotency
// trial's counts (check/idem_outcome.h), the load stats' (check/load_stats.h) and the soak's
// (check/soak_stats.h).
enum class FigureTable { accounting, idem_counts, load, soak };

// What a lab must do for the term to be measured at all: without it the loader refuses the term.
enum class TermNeeds { nothing, side_effects, soak, isolation };

struct TermRow {
    std::string_view name;  // its key in `expect` and `every_wrong_trial`
    // Its key at the top of `expect` when that differs (the older "every_trial_has"); empty: `name`.
    std::string_view top_name;
    TermShape shape;
    // figure: how the expectation's text names it ("processed once"); figures: what the loader's
    // refusal calls the table's figures.
    std::string_view words;
    std::string_view counts;  // figure: what the band counts, for the loader's refusal ("lost entries")
    FigureTable table = FigureTable::accounting;  // figure, figures: the figures it bounds
    std::string_view figure{};                    // figure: its name in `table` ("stale_overwrites")
    TermNeeds needs = TermNeeds::nothing;
};

// Every term, in the order the expectation's text lists them and the checker checks them.
std::span<const TermRow> term_rows();
// The figures a term of shape `figures` may bound in `table`.
const std::vector<std::string>& figure_names(FigureTable table);
// The accounting classes that flag an anomaly (check/accounting.h's AccountingFlag::anomaly; a unit
// test keeps the two equal): what an expectation's "may_appear" may name.
std::span<const std::string_view> anomaly_classes();
// What a lab lacks when the term's needs are not met, and how to give it: the loader's refusal.
std::string_view needs_text(TermNeeds needs);

}  // namespace relab
