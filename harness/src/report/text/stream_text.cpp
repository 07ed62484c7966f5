// The stream labs' text section: the selected trials' timelines, every trial's final state, the
// accounting, the verdict, and the figures after it.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ports/seed_text.h"
#include "report/lab_summary.h"
#include "report/shard_facts.h"
#include "report/text/record_text.h"
#include "report/text/stream_text.h"

namespace relab {

namespace {

// The "final status per trial" line lists at most this many trials.
constexpr size_t k_statuses_shown = 50;
// The accounting lists the details of at most this many trials.
constexpr size_t k_accounting_trials_shown = 5;

// One trial's entry on the "final status per trial" line.
std::string trial_status_text(const TextWords& w, const Scenario& s, const TrialOutcome& t) {
    const StreamLab& flow = s.flow();
    const char* cross = "✕";
    if (flow.orders.size() <= 1) {
        const OrderRow* row = nullptr;
        if (!flow.orders.empty())
            row = final_row(t, flow.orders.front().id);
        else if (!t.final_rows.empty())
            row = &t.final_rows.front();
        return (row ? row_state_text(*row, carries_amounts(flow)) : std::string(w.no_row)) + (t.wrong ? cross : "");
    }
    std::string text;
    for (const auto& order : flow.orders) {
        const OrderRow* row = final_row(t, order.id);
        const bool wrong = !row || !order.expected_final.matches(*row);
        if (!text.empty()) text += ' ';
        text += fmt::format("#{}={}{}", order.id, row ? row_state_text(*row, carries_amounts(flow)) : std::string(w.no_row),
                            wrong ? cross : "");
    }
    return text;
}

// S2: hundreds of entries; the shards' counts, the reshard and the wrong orders, then the
// timeline of the orders that explain the trial.
void write_shard_trial_text(const TextContext& tc, const LabResult& lab, const TrialOutcome& t, std::ostream& out) {
    const Scenario& s = lab.scenario;
    const ShardTrialFacts f = shard_facts(s, t);
    out << " — " << shard_facts_text(f, s.flow().orders.size()) << '\n';
    if (!f.shard_map.empty()) out << "  " << fmt::format("{}", fmt::join(f.shard_map, ", ")) << '\n';
    const TrialOutcome focus = shard_focus(s, t);
    out << "  " << pick(tc.opts.lang, "timeline of ", "timeline của ")
        << (f.wrong_orders.empty() ? pick(tc.opts.lang, "the first order", "đơn đầu tiên")
                                   : pick(tc.opts.lang, "the first orders that ended wrong", "các đơn sai đầu tiên"))
        << ":\n";
    print_stream_timeline(tc.w, lab, focus, out);
}

// One trial with a history: its heading, the stream, then the timeline (or the dispatcher's
// rounds).
void write_stream_trial_text(const TextContext& tc, const LabResult& lab, const TrialOutcome& t, std::ostream& out) {
    const Scenario& s = lab.scenario;
    const StreamLab& flow = s.flow();
    out << tc.w.trial << ' ' << t.trial;
    if (lab.backend == "sim") out << " (seed " << seed_text(t.seed) << ")";
    if (flow.shard.enabled) return write_shard_trial_text(tc, lab, t, out);
    const bool several_orders = flow.orders.size() > 1;
    if (flow.stream_line == "xrange") {
        // As the article's producer-side labs print it: XRANGE orders - + : id paid(v=2)  ...
        out << " — XRANGE " << flow.stream.key << " - + :";
        for (const auto& e : t.stream)
            out << (&e == &t.stream.front() ? " " : "  ") << e.id << ' '
                << (several_orders ? "#" + e.field("order") + " " : "") << e.field("type") << "(v=" << e.field("v")
                << ")";
        if (t.stream.empty()) out << ' ' << tc.w.empty_stream;
    } else {
        out << " — stream: ";
        if (t.stream.empty()) out << tc.w.empty_stream;
        for (size_t i = 0; i < t.stream.size(); ++i)
            out << (i ? ", " : "") << entry_text(t.stream[i], several_orders);
    }
    out << '\n';
    if (flow.dispatcher.enabled)
        write_dispatcher_trial_text(tc, lab, t, out);
    else
        print_stream_timeline(tc.w, lab, t, out);
}

// The first trials' final states; with hundreds of orders, how many ended right per trial.
void write_final_statuses_text(const TextContext& tc, const LabResult& lab, std::ostream& out) {
    const Scenario& s = lab.scenario;
    const StreamLab& flow = s.flow();
    const bool several_orders = flow.orders.size() > 1;
    out << "  " << tc.w.final_status;
    const size_t shown = std::min(lab.trials.size(), k_statuses_shown);
    const bool many_orders = flow.shard.enabled || flow.orders.size() > 20;
    if (many_orders)
        for (size_t i = 0; i < shown; ++i)
            out << (i == 0 ? " " : " | ")
                << fmt::format("{}/{} {}", flow.orders.size() - lab.trials[i].wrong_orders.size(), flow.orders.size(),
                               expected_final(s));
    for (size_t i = 0; i < shown && !many_orders; ++i)
        out << (i == 0 ? " " : several_orders ? " | " : " ") << trial_status_text(tc.w, s, lab.trials[i]);
    if (shown < lab.trials.size())
        out << fmt::format(fmt::runtime(pick(tc.opts.lang, " … ({} more)", " … (thêm {} lần)")),
                           lab.trials.size() - shown);
    out << '\n';
}

// Every published entry followed to its jobs, summed over the trials; then the trials with
// something to flag, each with its first examples.
void write_accounting_text(const TextContext& tc, const LabResult& lab, std::ostream& out) {
    if (lab.trials.empty()) return;
    out << "  " << pick(tc.opts.lang, "accounting:", "đối soát:") << ' ' << accounting_text(accounting_total(lab))
        << '\n';
    // Per event: the same event in several entries (republished), written by several jobs,
    // copies the consumer's dedupe skipped; trial 1's examples.
    Accounting per_event = accounting_total(lab);
    per_event.republished_examples = lab.trials.front().accounting.republished_examples;
    per_event.reapplied_examples = lab.trials.front().accounting.reapplied_examples;
    if (const std::string text = republish_text(per_event); !text.empty())
        out << "  " << pick(tc.opts.lang, "per event:", "theo sự kiện:") << ' ' << text
            << pick(tc.opts.lang, " (examples from trial 1)", " (ví dụ từ lần 1)") << '\n';
    size_t flagged = 0;
    for (const auto& t : lab.trials) {
        const auto details = accounting_details(t.accounting);
        if (details.empty()) continue;
        if (++flagged > k_accounting_trials_shown) continue;
        out << "    " << tc.w.trial << ' ' << t.trial << ": " << fmt::format("{}", fmt::join(details, "; ")) << '\n';
    }
    if (flagged > k_accounting_trials_shown)
        out << "    " << fmt::format(fmt::runtime(pick(tc.opts.lang, "… {} more trials like these", "… thêm {} lần như vậy")),
                                     flagged - k_accounting_trials_shown)
            << '\n';
}

}  // namespace

void write_stream_text(const TextContext& tc, const LabResult& lab, std::ostream& out) {
    for (const TrialOutcome* t : selected_trials(lab.trials, tc.opts.timelines)) {
        // A long simulated run keeps few timelines; the others have no history to print.
        if (t->history.empty()) continue;
        write_stream_trial_text(tc, lab, *t, out);
    }
    write_final_statuses_text(tc, lab, out);
    out << "  " << fmt::format(fmt::runtime(tc.w.wrong_state), expected_final(lab.scenario), lab.wrong, lab.total)
        << '\n';
    write_accounting_text(tc, lab, out);
    if (lab.backend == "sim") write_wrong_rate_text(tc, lab, out);
    write_verdict_text(tc, lab, out);
    write_stream_figures_text(tc, lab, out);
}

}  // namespace relab
