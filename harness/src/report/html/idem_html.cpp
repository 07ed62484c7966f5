// The idempotency labs' part of the page: with clients, the orders and answers counted per trial,
// the orders each trial left and the timelines of the requests; every one of them, the time scale
// and the figures measured beside the article's.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "report/html/html_sections.h"
#include "report/idem_facts.h"

namespace relab::html {

namespace {

// An idempotency workload: orders and answers counted per trial and over all trials.
void write_idem_counts(const LabResult& lab, std::ostream& out) {
    const IdemCounts total = idem_total(lab);
    const auto header = idem_count_cells(total);
    out << "<table class=\"counts\">\n<thead><tr><th></th>";
    for (const auto& c : header) out << "<th>" << esc(c.label) << "</th>";
    out << "</tr></thead>\n<tbody>\n";
    auto row = [&](const std::string& name, const IdemCounts& counts, const char* cls) {
        out << "<tr" << cls << "><th>" << esc(name) << "</th>";
        const auto cells = idem_count_cells(counts);
        for (size_t i = 0; i < header.size(); ++i) {
            const IdemCountCell* c = i < cells.size() && cells[i].label == header[i].label ? &cells[i] : nullptr;
            const int value = c ? c->value : 0;
            out << "<td" << (c && c->bad ? " class=\"bad\"" : "") << ">" << value << "</td>";
        }
        out << "</tr>\n";
    };
    if (lab.trials.size() > 1 && lab.trials.size() <= k_count_rows) {
        for (const auto& t : lab.trials) row(fmt::format("trial {}", t.trial), t.idem.counts, "");
        row("all trials", total, " class=\"total\"");
    } else if (lab.trials.size() > k_count_rows) {
        // Many (simulated) trials: one row per distinct outcome, the most frequent first.
        std::vector<std::pair<const TrialOutcome*, size_t>> groups;  // first trial of the outcome, trials
        std::map<std::vector<int>, size_t> group_of;                 // the row's values → index in groups
        for (const auto& t : lab.trials) {
            std::vector<int> values;  // the row as shown (its labels follow from the values)
            for (const auto& c : idem_count_cells(t.idem.counts)) values.push_back(c.value);
            const auto [it, added] = group_of.try_emplace(std::move(values), groups.size());
            if (added)
                groups.emplace_back(&t, 1);
            else
                ++groups[it->second].second;
        }
        std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
        for (size_t i = 0; i < groups.size() && i < k_count_rows; ++i)
            row(fmt::format("{} trial{} like trial {}", groups[i].second, groups[i].second == 1 ? "" : "s",
                            groups[i].first->trial),
                groups[i].first->idem.counts, "");
        if (groups.size() > k_count_rows)
            out << fmt::format("<tr><th colspan=\"{}\">… {} other outcomes, counted in the total</th></tr>\n",
                               header.size() + 1, groups.size() - k_count_rows);
        row(fmt::format("all {} trials", lab.trials.size()), total, " class=\"total\"");
    } else {
        row(lab.trials.empty() ? "total" : fmt::format("trial {}", lab.trials[0].trial), total, " class=\"total\"");
    }
    out << "</tbody>\n</table>\n";
    std::vector<std::string> leaks;
    for (const auto& t : lab.trials)
        for (const auto& l : t.idem.leak_examples)
            if (leaks.size() < 5) leaks.push_back(fmt::format("trial {}: {}", t.trial, l));
    if (!leaks.empty()) {
        out << "<ul class=\"leaks\">\n";
        for (const auto& l : leaks) out << "<li>✕ " << esc(l) << "</li>\n";
        out << "</ul>\n";
    }
}

void write_scaling(const LabResult& lab, std::ostream& out) {
    const std::string& scaling = lab.scenario.idem().scaling;
    if (!scaling.empty()) out << "<p class=\"scaling\">time scale: " << esc(scaling) << "</p>\n";
}

// A trial's chip: the orders it left, and what was wrong with them.
std::string idem_chip_text(const LabResult&, const TrialOutcome& t) {
    const IdemCounts& c = t.idem.counts;
    std::string text = fmt::format("{} order{}", c.orders, c.orders == 1 ? "" : "s");
    if (c.duplicates > 0) text += fmt::format(", {} duplicate{}", c.duplicates, c.duplicates == 1 ? "" : "s");
    if (c.leaks > 0) text += fmt::format(", {} leak{}", c.leaks, c.leaks == 1 ? "" : "s");
    return text;
}

// A lane per client, a bar per request; nothing when no client sent anything (the benchmark).
std::optional<TrialDrawing> draw_idem_trial(const LabResult&, const TrialOutcome& t) {
    Timeline tl = idem_trial_timeline(t);
    if (std::none_of(tl.bars.begin(), tl.bars.end(), [](const TimelineBar& b) { return b.kind == TimelineBar::Kind::request; }))
        return std::nullopt;
    return TrialDrawing{std::move(tl), " — " + esc(idem_counts_brief(t.idem.counts))};
}

}  // namespace

std::string idem_clients_measured_caption(const LabResult&) { return "<p>trials with a duplicate order or a leak</p>"; }

void write_idem_clients_html(const LabResult& lab, HtmlPage& page, std::ostream& out) {
    write_idem_counts(lab, out);
    write_scaling(lab, out);
    write_figures(lab, out);
    write_finals(lab, FinalsView{"orders per trial", true, idem_chip_text}, out);
    write_trial_timelines(lab, draw_idem_trial, page, out);
    write_text_details(lab, out);
}

std::string idem_figures_measured_caption(const LabResult&) {
    return "<p>a benchmark: its figures are below, beside the article's</p>";
}

void write_idem_figures_html(const LabResult& lab, HtmlPage& page, std::ostream& out) {
    write_scaling(lab, out);
    write_figures(lab, out);
    write_trial_timelines(lab, draw_idem_trial, page, out);
    write_text_details(lab, out);
}

}  // namespace relab::html
