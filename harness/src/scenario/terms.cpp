#include "scenario/terms.h"

#include <fmt/format.h>

#include "scenario/scenario.h"

namespace relab {

namespace {

using S = TermShape;
using F = FigureTable;

// clang-format off
constexpr TermRow k_terms[] = {
    {"final", "", S::final_status, "", ""},
    {"stale_overwrite", "", S::stale_overwrites, "", ""},
    {"lost", "", S::figure, "lost", "lost entries", F::accounting, "lost"},
    {"duplicated", "", S::figure, "duplicated", "duplicated entries", F::accounting, "duplicated"},
    {"redelivered", "", S::figure, "redelivered", "entries redelivered after ack", F::accounting, "redelivered"},
    {"unexpected", "", S::figure, "unexpected", "unexpected entries", F::accounting, "unexpected"},
    {"pending", "", S::figure, "pending", "entries left pending (received, never acknowledged)", F::accounting, "pending"},
    {"never_delivered", "", S::figure, "never delivered", "entries never delivered", F::accounting, "never_delivered"},
    {"dead_lettered", "", S::figure, "dead-lettered", "entries dead-lettered (XADDed to the dead-letter stream)",
     F::accounting, "dead_lettered"},
    {"trimmed_undelivered", "", S::figure, "trimmed before delivery",
     "entries trimmed from the stream before any consumer received them", F::accounting, "trimmed_undelivered"},
    {"trimmed_pending", "", S::figure, "trimmed while pending",
     "entries trimmed from the stream while received and not acknowledged", F::accounting, "trimmed_pending"},
    {"processed_once", "", S::figure, "processed once", "entries processed once", F::accounting, "processed_once"},
    {"reordered", "", S::figure, "reordered", "stale overwrites", F::accounting, "stale_overwrites"},
    {"unapplied", "", S::figure, "unapplied", "entries whose every write was refused", F::accounting, "unapplied"},
    {"serialization_failures", "", S::figure, "serialization failures",
     "transactions refused with 40001 (write.isolation) and rolled back", F::accounting, "serialization_failures",
     TermNeeds::isolation},
    {"side_effects_out_of_order", "", S::figure, "side effects out of order",
     "orders with side effects out of version order", F::accounting, "side_effects_out_of_order",
     TermNeeds::side_effects},
    {"republished", "", S::figure, "republished", "events published again", F::accounting, "republished"},
    {"reapplied", "", S::figure, "reapplied", "events written again", F::accounting, "reapplied"},
    {"skipped", "", S::figure, "skipped", "entries skipped as duplicates", F::accounting, "skipped"},
    {"counts", "", S::figures, "", "", F::idem_counts},
    {"load", "", S::figures, "", "", F::load},
    {"soak", "", S::figures, "", "", F::soak, "", TermNeeds::soak},
    {"has", "every_trial_has", S::has, "", ""},
    {"never", "", S::never, "", ""},
    {"sequence", "", S::sequence, "", ""},
    {"stream", "every_trial_stream", S::stream, "", ""},
    {"publish_delay_ms", "", S::publish_delay, "", ""},
};
// clang-format on

}  // namespace

std::span<const TermRow> term_rows() { return k_terms; }

std::span<const std::string_view> anomaly_classes() {
    static constexpr std::string_view classes[] = {"duplicated", "lost",    "trimmed_undelivered", "trimmed_pending",
                                                   "redelivered", "unexpected", "pending",          "never_delivered"};
    return classes;
}

const std::vector<std::string>& figure_names(FigureTable table) {
    static const std::vector<std::string> idem_counts = {"sends",     "orders",     "duplicates", "created",
                                                         "replays",   "conflicts",  "mismatches", "layer4",
                                                         "errors",    "leaks",      "unanswered", "vanished"};
    static const std::vector<std::string> none;
    switch (table) {
        case FigureTable::accounting: return none;  // each term of it names its one figure
        case FigureTable::idem_counts: return idem_counts;
        case FigureTable::load: return load_figure_names();
        case FigureTable::soak: return soak_figure_names();
    }
    return none;
}

std::string_view needs_text(TermNeeds needs) {
    switch (needs) {
        case TermNeeds::nothing: return "";
        case TermNeeds::side_effects:
            return "no side effect is sent in this lab: add \"side_effect\": true under /write";
        case TermNeeds::soak: return "the soak figures are measured in a soak lab: add \"soak\": {\"drain_ms\": N}";
        case TermNeeds::isolation:
            return "no job runs in a transaction in this lab, so none can fail to serialize: add \"isolation\": "
                   "\"repeatable_read\" (or \"serializable\") under /write";
    }
    return "";
}

const TrialTerms::FigureBands& TrialTerms::figure_bands(const TermRow& row) const {
    if (row.shape == TermShape::figure) return bands;
    switch (row.table) {
        case FigureTable::accounting: return bands;
        case FigureTable::idem_counts: return counts;
        case FigureTable::load: return load;
        case FigureTable::soak: return soak;
    }
    return bands;
}

TrialTerms::FigureBands& TrialTerms::figure_bands(const TermRow& row) {
    return const_cast<FigureBands&>(std::as_const(*this).figure_bands(row));
}

std::optional<Band> TrialTerms::band(std::string_view term) const {
    const auto it = bands.find(term);
    if (it == bands.end()) return std::nullopt;
    return it->second;
}

bool TrialTerms::states(const TermRow& row) const {
    switch (row.shape) {
        case TermShape::final_status: return !final_status.empty();
        case TermShape::stale_overwrites: return !stale_overwrites.empty();
        case TermShape::figure: return bands.count(row.name) > 0;
        case TermShape::figures: return !figure_bands(row).empty();
        case TermShape::has: return !has.empty();
        case TermShape::never: return !never.empty();
        case TermShape::sequence: return !sequence.empty();
        case TermShape::stream: return !stream.empty();
        case TermShape::publish_delay: return !publish_delay_ms.empty();
    }
    return false;
}

bool TrialTerms::empty() const {
    for (const TermRow& row : k_terms)
        if (states(row)) return false;
    return true;
}

namespace {

std::string step_text(const SequenceStep& step) {
    std::string text = step.match.describe();
    if (step.gap_ms)
        text += step.from_step > 0 ? fmt::format(" ({} ms after step {})", step.gap_ms->describe(), step.from_step)
                                   : " (" + step.gap_ms->describe() + " ms later)";
    if (step.same_as_step > 0)
        text += fmt::format(" (same {} as step {})", fmt::join(step.same_fields, ", "), step.same_as_step);
    return text;
}

// The term's part of the expectation's text, one item per thing it states.
void describe_term(const TermRow& row, const TrialTerms& t, std::vector<std::string>& parts) {
    switch (row.shape) {
        case TermShape::final_status:
            for (const auto& [order, want] : t.final_status) parts.push_back(fmt::format("#{} = {}", order, want.describe()));
            return;
        case TermShape::stale_overwrites:
            for (const auto& so : t.stale_overwrites) parts.push_back(so.describe());
            return;
        case TermShape::figure:
            if (const auto b = t.band(row.name)) parts.push_back(fmt::format("{} {}", row.words, b->describe()));
            return;
        case TermShape::figures:
            for (const auto& [name, band] : t.figure_bands(row)) parts.push_back(name + " " + band.describe());
            return;
        case TermShape::has:
            for (const auto& m : t.has) parts.push_back("has " + m.describe());
            return;
        case TermShape::never:
            for (const auto& m : t.never) parts.push_back("never " + m.describe());
            return;
        case TermShape::sequence: {
            std::vector<std::string> steps;
            for (const auto& step : t.sequence) steps.push_back(step_text(step));
            if (!steps.empty()) parts.push_back(fmt::format("in order: {}", fmt::join(steps, " → ")));
            return;
        }
        case TermShape::stream:
            if (!t.stream.empty()) parts.push_back(fmt::format("stream order {}", fmt::join(t.stream, " ")));
            return;
        case TermShape::publish_delay:
            for (const auto& d : t.publish_delay_ms)
                parts.push_back(fmt::format("#{} delayed {}–{} ms", d.order, d.min_ms, d.max_ms));
            return;
    }
}

}  // namespace

std::string TrialTerms::describe() const {
    std::vector<std::string> parts;
    for (const TermRow& row : k_terms) describe_term(row, *this, parts);
    return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace relab
