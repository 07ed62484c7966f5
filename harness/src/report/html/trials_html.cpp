// The parts of a lab's section that its trials make, for every family that runs trials: a chip per
// trial with its final state (worded by the family), the selected trials' timelines (drawn by the
// family), and the lab's text report.
#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ports/seed_text.h"
#include "report/html/html_sections.h"

namespace relab::html {

namespace {

// Up to this many trials a lab shows every trial's final-status chip; above, a tally of the
// outcomes and the chips (at most k_chips_max) folded away: a simulated lab may have millions.
constexpr size_t k_chips_shown = 100;
constexpr size_t k_chips_max = 1000;

void write_trial_figure(const LabResult& lab, const TrialOutcome& t, TrialDrawer draw, HtmlPage& page, std::ostream& out) {
    if (is_sim(lab) && t.history.empty()) return;  // a long simulated run keeps few histories
    const std::optional<TrialDrawing> drawing = draw(lab, t);
    if (!drawing) return;
    std::string caption = fmt::format("<b>trial {}</b>", t.trial);
    if (is_sim(lab)) caption += fmt::format(" (seed <code>{}</code>)", seed_text(t.seed));
    if (t.wrong) caption += " <span class=\"badge broken\">wrong</span>";
    caption += drawing->about;
    if (is_sim(lab) && !lab.replay_seed)
        caption += fmt::format("<br>replay: <code class=\"cmd\">{}</code>", esc(replay_command(lab, t.seed)));
    out << fmt::format("<figure class=\"timeline\" data-trial=\"{}\">\n<figcaption>{}</figcaption>\n", t.trial, caption);
    write_svg_timeline(drawing->timeline, ++page.svg_count, fmt::format("timeline of trial {}", t.trial), out);
    out << "</figure>\n";
}

}  // namespace

void write_finals(const LabResult& lab, const FinalsView& view, std::ostream& out) {
    auto chip = [&](const TrialOutcome& t) {
        std::string title = fmt::format("trial {}, seed {}", t.trial, is_sim(lab) ? seed_text(t.seed) : std::to_string(t.seed));
        for (const auto& w : t.wrong_orders) title += "; " + w;
        for (const auto& l : t.idem.leak_examples) title += "; " + l;
        out << fmt::format(R"(<span class="chip{}" title="{}"><b>{}</b> {}{}</span>)", t.wrong ? " wrong" : "",
                           esc(title), t.trial, esc(view.chip_text(lab, t)), t.wrong && view.single ? " ✕" : "")
            << '\n';
    };
    out << "<div class=\"finals\"><h3>" << view.heading << "</h3>\n";
    const size_t n = lab.trials.size();
    if (n > k_chips_shown) {
        // Every trial counted, the most frequent outcome first.
        std::map<std::pair<std::string, bool>, size_t> tally;
        for (const auto& t : lab.trials) ++tally[{view.chip_text(lab, t), t.wrong}];
        std::vector<std::pair<std::pair<std::string, bool>, size_t>> sorted(tally.begin(), tally.end());
        std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
        std::vector<std::string> parts;
        for (const auto& [what, k] : sorted)
            parts.push_back(fmt::format(R"(<span class="chip{}">{}{}</span> ×{})", what.second ? " wrong" : "",
                                        esc(what.first), what.second && view.single ? " ✕" : "", k));
        out << fmt::format("<p class=\"tally\">{} trials: {}</p>\n", n, fmt::join(parts, " "));
    }
    if (n <= k_chips_shown) {
        for (const auto& t : lab.trials) chip(t);
    } else {  // the tally says it all; every trial (up to a bound) on demand
        out << fmt::format("<details><summary>trials 1–{}</summary>\n", std::min(n, k_chips_max));
        for (size_t i = 0; i < n && i < k_chips_max; ++i) chip(lab.trials[i]);
        out << "</details>\n";
        if (n > k_chips_max) out << fmt::format("<p>… {} more trials, counted above</p>\n", n - k_chips_max);
    }
    out << "</div>\n";
}

void write_trial_timelines(const LabResult& lab, TrialDrawer draw, HtmlPage& page, std::ostream& out) {
    const auto selection = static_cast<int>(lab.trials.size()) <= page.opts.all_timelines_up_to ? TimelineSelection::all
                                                                                                 : page.opts.timelines;
    for (const TrialOutcome* t : selected_trials(lab.trials, selection)) write_trial_figure(lab, *t, draw, page, out);
}

void write_text_details(const LabResult& lab, std::ostream& out) {
    out << "<details><summary>text report</summary>\n<pre>" << esc(lab_text_report(lab)) << "</pre>\n</details>\n";
}

}  // namespace relab::html
