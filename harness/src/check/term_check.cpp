// The checker's half of the expectation terms (scenario/terms.h): each term the expectation
// states, against one trial. A term of shape figure or figures reads its figure from the table it
// names; the other shapes look at the trial's history, final rows and stream.
#include <algorithm>
#include <map>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "check/outcome.h"

namespace relab {

namespace {

using nlohmann::json;

// What the checker reports a term of the trial's for: a line each, led by the caller's lead.
struct Unmet {
    const std::string& lead;
    std::vector<std::string>& lines;
    void operator()(const std::string& what) const { lines.push_back(lead + what); }
};

bool record_matches(const RecordMatch& m, const HistoryRecord& r) {
    if (r.op != m.op) return false;
    if (!m.actor.empty() && r.actor != m.actor) return false;
    if (!record_has_fields(r, m.fields)) return false;
    for (const auto& [key, band] : m.bands) {
        auto it = r.data.find(key);
        if (it == r.data.end() || !it->is_number()) return false;
        // Compared as a real number: a ratio of 1.2 is not >= 2, and a figure of 0.7 is not >= 1.
        const double x = it->get<double>();
        if ((band.at_least && x < static_cast<double>(*band.at_least)) ||
            (band.at_most && x > static_cast<double>(*band.at_most)))
            return false;
    }
    return true;
}

std::optional<int64_t> idem_count(const IdemCounts& c, std::string_view name) {
    static const std::map<std::string, int IdemCounts::*, std::less<>> fields = {
        {"sends", &IdemCounts::sends},         {"orders", &IdemCounts::orders},
        {"duplicates", &IdemCounts::duplicates}, {"created", &IdemCounts::created},
        {"replays", &IdemCounts::replays},     {"conflicts", &IdemCounts::conflicts},
        {"mismatches", &IdemCounts::mismatches}, {"layer4", &IdemCounts::layer4},
        {"errors", &IdemCounts::errors},       {"leaks", &IdemCounts::leaks},
        {"unanswered", &IdemCounts::unanswered}, {"vanished", &IdemCounts::vanished}};
    const auto it = fields.find(name);
    if (it == fields.end()) return std::nullopt;
    return c.*(it->second);
}

// A figure of the trial as a term reads it: its value, or why there is none. `unknown`: no figure
// of that name (a line of its own); otherwise `missing` says why it was not measured.
struct FigureReading {
    std::optional<int64_t> value;
    std::string missing;
    bool unknown = false;
};

FigureReading accounting_reading(const Accounting& a, std::string_view name) {
    const AccountingFigure* f = accounting_figure(name);
    if (!f) return {std::nullopt, fmt::format("no accounting figure named {}", name), true};
    // Without a single side effect sent, a count of them is not a measurement: say so.
    if (!reported(*f, a)) return {std::nullopt, "no side effect was sent"};
    return {a.*f->count, {}};
}

FigureReading read_figure(const TrialOutcome& t, FigureTable table, std::string_view name) {
    switch (table) {
        case FigureTable::accounting: return accounting_reading(t.accounting, name);
        case FigureTable::idem_counts:
            if (const auto v = idem_count(t.idem.counts, name)) return {v, {}};
            return {std::nullopt, fmt::format("no count named {}", name), true};
        case FigureTable::load:
            if (const auto v = load_figure(t.load, std::string(name))) return {v, {}};
            return {std::nullopt, fmt::format("no load figure named {}", name), true};
        case FigureTable::soak:
            if (const auto v = soak_figure(t.soak, std::string(name))) return {v, {}};
            if (t.soak.measured) return {std::nullopt, fmt::format("no soak figure named {}", name), true};
            return {std::nullopt, "the consumer group was not read at the trial's end"};
    }
    return {};
}

// `name` as the term or the figure reads in the expectation's file.
void check_band(const std::string& name, const Band& b, const FigureReading& r, const Unmet& fail) {
    if (r.value) {
        if (!b.contains(*r.value)) fail(fmt::format("{} {} (measured {})", name, b.describe(), *r.value));
    } else if (r.unknown) {
        fail(r.missing);
    } else {
        fail(fmt::format("{} {}: {}", name, b.describe(), r.missing));
    }
}

void check_final(const TrialTerms& terms, const TrialOutcome& t, const Unmet& fail) {
    for (const auto& [order, want] : terms.final_status) {
        // A copy to capture: clang 14 (the fuzz build's) cannot capture a structured binding.
        const int64_t id = order;
        const auto row = std::find_if(t.final_rows.begin(), t.final_rows.end(), [&](const OrderRow& r) { return r.id == id; });
        if (row == t.final_rows.end())
            fail(fmt::format("#{} = {} (no row)", order, want.describe()));
        else if (!want.matches(*row))
            fail(fmt::format("#{} = {} (it ended {})", order, want.describe(), row_state_text(*row, want.amount.has_value())));
    }
}

void check_stale_overwrites(const TrialTerms& terms, const TrialOutcome& t, const Unmet& fail) {
    const std::vector<StaleOverwrite>& seen = t.stale_overwrites;
    for (const auto& want : terms.stale_overwrites) {
        const bool found = std::any_of(seen.begin(), seen.end(), [&](const StaleOverwrite& so) {
            return so.order == want.order && so.by == want.by && so.over == want.over;
        });
        if (found) continue;
        std::vector<std::string> got;
        for (const auto& so : seen) got.push_back(so.describe());
        fail(fmt::format("stale overwrite: {} (seen: {})", want.describe(),
                         got.empty() ? std::string("none") : fmt::format("{}", fmt::join(got, ", "))));
    }
}

void check_has(const TrialTerms& terms, const TrialOutcome& t, const Unmet& fail) {
    for (const auto& m : terms.has)
        if (std::none_of(t.history.begin(), t.history.end(), [&](const HistoryRecord& r) { return record_matches(m, r); }))
            fail("no " + m.describe());
}

void check_never(const TrialTerms& terms, const TrialOutcome& t, const Unmet& fail) {
    for (const auto& m : terms.never) {
        const auto it =
            std::find_if(t.history.begin(), t.history.end(), [&](const HistoryRecord& r) { return record_matches(m, r); });
        if (it != t.history.end()) fail(fmt::format("{} at {} ms, which must not happen", m.describe(), it->t_ns / 1'000'000));
    }
}

// Why `r` is not the record `step` wants for being the same as an earlier step's, or nullopt.
std::optional<std::string> differs_from_step(const SequenceStep& step, const HistoryRecord& r, const HistoryRecord& earlier) {
    for (const auto& f : step.same_fields) {
        const json m = record_field(r, f), e = record_field(earlier, f);
        const auto mine = m.is_null() ? std::string{"(none)"} : m.dump();
        const auto theirs = e.is_null() ? std::string{"(none)"} : e.dump();
        if (mine != theirs) return fmt::format("its {} {} differs from step {}'s {}", f, mine, step.same_as_step, theirs);
    }
    return std::nullopt;
}

// Where the sequence stands: the record each step matched and when.
struct SequenceMatch {
    std::vector<int64_t> at_ns;
    std::vector<size_t> at_index;
    size_t from = 0;  // the first record the next step may match
};

// The line for step k (0-based) that found no record.
std::string missed_step_text(const SequenceStep& step, size_t k, size_t base, const std::optional<std::string>& differs,
                             const std::optional<int64_t>& nearest_gap) {
    std::string bound = step.gap_ms ? fmt::format(", {} ms after step {}", step.gap_ms->describe(), base) : std::string{};
    if (step.same_as_step > 0)
        bound += fmt::format(" (same {} as step {})", fmt::join(step.same_fields, ", "), step.same_as_step);
    std::string why;
    if (differs)
        why = *differs;
    else if (nearest_gap)
        why = fmt::format("came {} ms after step {}", *nearest_gap, base);
    else
        why = k == 0 ? "never happened" : fmt::format("never followed step {}", k);
    return fmt::format("sequence step {} ({}{}) {}", k + 1, step.match.describe(), bound, why);
}

// The earliest record matching step k after the previous step's; a step with a gap bound takes the
// earliest record that also keeps the bound. False (and a line) when there is none.
bool match_step(const SequenceStep& step, size_t k, const TrialOutcome& t, SequenceMatch& m, const Unmet& fail) {
    const size_t base = step.from_step > 0 ? static_cast<size_t>(step.from_step) : k;  // 1-based
    std::optional<int64_t> nearest_gap;
    std::optional<std::string> differs;  // the first match whose same_as fields differ
    for (size_t i = m.from; i < t.history.size(); ++i) {
        const HistoryRecord& r = t.history[i];
        if (!record_matches(step.match, r)) continue;
        if (step.gap_ms && base >= 1) {
            const int64_t gap = (r.t_ns - m.at_ns[base - 1]) / 1'000'000;
            if (!nearest_gap) nearest_gap = gap;
            if (!step.gap_ms->contains(gap)) continue;
        }
        if (step.same_as_step > 0) {
            const auto why = differs_from_step(step, r, t.history[m.at_index[static_cast<size_t>(step.same_as_step) - 1]]);
            if (why) {
                if (!differs) differs = why;
                continue;
            }
        }
        m.at_ns.push_back(r.t_ns);
        m.at_index.push_back(i);
        m.from = i + 1;
        return true;
    }
    fail(missed_step_text(step, k, base, differs, nearest_gap));
    return false;
}

void check_sequence(const TrialTerms& terms, const TrialOutcome& t, const Unmet& fail) {
    SequenceMatch m;
    for (size_t k = 0; k < terms.sequence.size(); ++k)
        if (!match_step(terms.sequence[k], k, t, m, fail)) return;
}

void check_stream(const TrialTerms& terms, const TrialOutcome& t, const Unmet& fail) {
    if (terms.stream.empty()) return;
    std::vector<std::string> seen;
    for (const auto& e : t.stream) seen.push_back(e.field("order") + ":" + e.field("type"));
    if (seen != terms.stream)
        fail(fmt::format("stream order {} (expected {})", fmt::join(seen, " "), fmt::join(terms.stream, " ")));
}

void check_publish_delays(const TrialTerms& terms, const TrialOutcome& t, const Unmet& fail) {
    for (const auto& b : terms.publish_delay_ms) {
        const auto it = t.publish_delay_us.find(b.order);
        if (it == t.publish_delay_us.end())
            fail(fmt::format("#{} never reached the stream", b.order));
        else if (it->second < b.min_ms * 1000 || it->second > b.max_ms * 1000)
            fail(fmt::format("#{} delayed {} ms (expected {}–{} ms)", b.order, it->second / 1000, b.min_ms, b.max_ms));
    }
}

void check_term(const TermRow& row, const TrialTerms& terms, const TrialOutcome& t, const Unmet& fail) {
    switch (row.shape) {
        case TermShape::final_status: return check_final(terms, t, fail);
        case TermShape::stale_overwrites: return check_stale_overwrites(terms, t, fail);
        case TermShape::figure:
            if (const auto b = terms.bands.find(row.name); b != terms.bands.end())
                check_band(b->first, b->second, read_figure(t, row.table, row.figure), fail);
            return;
        case TermShape::figures:
            for (const auto& [name, b] : terms.figure_bands(row)) check_band(name, b, read_figure(t, row.table, name), fail);
            return;
        case TermShape::has: return check_has(terms, t, fail);
        case TermShape::never: return check_never(terms, t, fail);
        case TermShape::sequence: return check_sequence(terms, t, fail);
        case TermShape::stream: return check_stream(terms, t, fail);
        case TermShape::publish_delay: return check_publish_delays(terms, t, fail);
    }
}

// Appends to `unmet` one line per term of `terms` the trial does not show, each led by `lead`.
void check_terms(const TrialTerms& terms, const TrialOutcome& t, const std::string& lead, std::vector<std::string>& unmet) {
    const Unmet fail{lead, unmet};
    for (const TermRow& row : term_rows()) check_term(row, terms, t, fail);
}

}  // namespace

void evaluate_trial(const Scenario& s, TrialOutcome& t) {
    t.unmet.clear();
    check_terms(s.expect.every_trial, t, "", t.unmet);
    if (t.wrong) check_terms(s.expect.every_wrong_trial, t, "wrong trial: ", t.unmet);
}

}  // namespace relab
