// The stream labs' part of the page: every trial's final state, the accounting table, and the
// selected trials' timelines (an S2 trial's: the orders that ended wrong).
#include <fmt/format.h>

#include "report/html/html_sections.h"
#include "report/shard_facts.h"

namespace relab::html {

namespace {

std::string stream_entries_text(const TrialOutcome& t, bool several_orders) {
    if (t.stream.empty()) return "(empty)";
    std::string text;
    for (const auto& e : t.stream) {
        if (!text.empty()) text += ", ";
        std::string v = e.field("v");
        if (v.empty()) v = e.field("version");
        text += e.id + " " + (several_orders ? "#" + e.field("order") + " " : "") + e.field("type") + " (v=" + v + ")";
    }
    return text;
}

// A trial's chip: the final state of its order, or of each of its orders.
std::string stream_chip_text(const LabResult& lab, const TrialOutcome& t) {
    const Scenario& s = lab.scenario;
    const StreamLab& flow = s.flow();
    std::string text;
    if (flow.orders.size() <= 1) {
        const OrderRow* row = flow.orders.empty() ? (t.final_rows.empty() ? nullptr : &t.final_rows.front())
                                               : final_row(t, flow.orders.front().id);
        return row ? row_state_text(*row, carries_amounts(flow)) : std::string("(no row)");
    }
    for (const auto& order : flow.orders) {
        const OrderRow* row = final_row(t, order.id);
        const bool wrong = !row || !order.expected_final.matches(*row);
        if (!text.empty()) text += ' ';
        text += fmt::format("#{}={}{}", order.id, row ? row_state_text(*row, carries_amounts(flow)) : "(no row)",
                            wrong ? "✕" : "");
    }
    return text;
}

// S2: hundreds of orders; the lanes show the orders that ended wrong (or the first one).
std::optional<TrialDrawing> draw_stream_trial(const LabResult& lab, const TrialOutcome& t) {
    const Scenario& s = lab.scenario;
    const StreamLab& flow = s.flow();
    const bool several_orders = flow.orders.size() > 1;
    if (!flow.shard.enabled) return TrialDrawing{trial_timeline(t, several_orders), " — stream: " + esc(stream_entries_text(t, several_orders))};
    return TrialDrawing{trial_timeline(shard_focus(s, t), several_orders),
                        " — " + esc(shard_facts_text(shard_facts(s, t), flow.orders.size())) +
                            "<br>timeline: the first orders that ended wrong (or the first order), their events on each shard"};
}

// A stream lab's accounting: every published entry followed to its jobs. A row per trial (only
// the trials with something to flag when there are many), then the sum; the first examples of
// each class beside its trial.
void write_accounting(const LabResult& lab, std::ostream& out) {
    if (lab.trials.empty()) return;
    out << "<div class=\"accounting\"><h3>accounting</h3>\n<table class=\"counts accounting\">\n<thead><tr><th></th>"
           "<th>published</th><th>processed once</th><th>duplicated</th><th>lost</th><th>redelivered after ack</th>"
           "<th>unexpected</th><th>stale overwrites</th><th>more</th><th>examples</th></tr></thead>\n<tbody>\n";
    auto row = [&](const std::string& name, const Accounting& a, const char* cls, bool with_examples) {
        auto cell = [&](int n, bool flags) {
            return fmt::format("<td{}>{}</td>", flags && n > 0 ? " class=\"bad\"" : "", n);
        };
        std::string examples;
        if (with_examples)
            for (const auto& d : accounting_details(a)) examples += (examples.empty() ? "" : "; ") + d;
        out << "<tr" << cls << "><th>" << esc(name) << "</th>" << cell(a.published, false)
            << cell(a.processed_once, false) << cell(a.duplicated, true) << cell(a.lost, true)
            << cell(a.redelivered, true) << cell(a.unexpected, true) << cell(a.stale_overwrites, true) << "<td>"
            << esc(accounting_more_text(a)) << "</td><td>"
            << (examples.empty() ? "" : "<code>" + esc(examples) + "</code>") << "</td></tr>\n";
    };
    const bool every_trial = lab.trials.size() <= k_count_rows;
    size_t shown = 0, flagged = 0;
    for (const auto& t : lab.trials) {
        const bool flags = !t.accounting.clean();
        flagged += flags;
        if ((every_trial || flags) && shown < k_count_rows) {
            row(fmt::format("trial {}", t.trial), t.accounting, "", true);
            ++shown;
        }
    }
    if (!every_trial && flagged > shown)
        out << fmt::format("<tr><th colspan=\"10\">… {} other trials with something to flag, counted in the total</th></tr>\n",
                           flagged - shown);
    if (lab.trials.size() > 1)
        row(fmt::format("all {} trials", lab.trials.size()), accounting_total(lab), " class=\"total\"", false);
    out << "</tbody>\n</table>\n</div>\n";
}

}  // namespace

std::string stream_measured_caption(const LabResult& lab) {
    return "<p>" + esc(fmt::format("trials with a wrong final state (not {})", expected_final(lab.scenario))) + "</p>";
}

void write_stream_html(const LabResult& lab, HtmlPage& page, std::ostream& out) {
    write_finals(lab, FinalsView{"final status per trial", lab.scenario.flow().orders.size() <= 1, stream_chip_text}, out);
    write_accounting(lab, out);
    write_trial_timelines(lab, draw_stream_trial, page, out);
    write_text_details(lab, out);
}

}  // namespace relab::html
