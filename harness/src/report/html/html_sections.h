// The HTML page in parts. html_reporter.cpp writes the page's head and summary (page_sections.cpp),
// then each lab: its heading, the parts every family shares (common_html.cpp, trials_html.cpp) and
// its family's body, which html_family() picks by the lab's kind (family_sections.cpp, the one
// place of the HTML report that decides by kind). Each family's parts live in a file of their own.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "report/html/html_parts.h"
#include "report/reporter.h"

namespace relab::html {

// What the page's parts are written with: the options, and a count that gives each SVG its ids.
struct HtmlPage {
    const HtmlOptions& opts;
    int svg_count = 0;
};

// What a family's labs show in the page.
struct HtmlFamily {
    // Under the measured count, what it counts: "<p>trials with a duplicate order or a leak</p>".
    std::string (*measured_caption)(const LabResult& lab);
    // The lab after its verdict: what sums up its trials (or its cases), their timelines and its
    // text report.
    void (*body)(const LabResult& lab, HtmlPage& page, std::ostream& out);
};

// The family of a lab of this kind (family_sections.cpp).
HtmlFamily html_family(LabKind kind);

// The stream labs (stream_html.cpp): every trial's final state, the accounting, the timelines.
std::string stream_measured_caption(const LabResult& lab);
void write_stream_html(const LabResult& lab, HtmlPage& page, std::ostream& out);
// The scripted sessions labs (sessions_html.cpp): each case's timeline, a Redis case step by step,
// the transcript.
std::string sessions_measured_caption(const LabResult& lab);
void write_sessions_html(const LabResult& lab, HtmlPage& page, std::ostream& out);
// The idempotency labs (idem_html.cpp): with clients, the counts of orders and answers, the figures,
// the orders per trial and the timelines; without (the benchmark, the cluster lab), the figures.
std::string idem_clients_measured_caption(const LabResult& lab);
void write_idem_clients_html(const LabResult& lab, HtmlPage& page, std::ostream& out);
std::string idem_figures_measured_caption(const LabResult& lab);
void write_idem_figures_html(const LabResult& lab, HtmlPage& page, std::ostream& out);

// The page above its labs (page_sections.cpp): the head, the run's facts and counts, a row per lab,
// the load labs side by side, the comparison tables.
void write_page_head(const RunReport& run, std::ostream& out);
void write_summary_table(const RunReport& run, std::ostream& out);
void write_load_section(const RunReport& run, std::ostream& out);
void write_comparisons(const RunReport& run, std::ostream& out);

// The parts every lab shares (common_html.cpp).
//
// The documented result beside the measured one, `caption` under the measured count.
void write_documented_vs_measured(const LabResult& lab, const std::string& caption, std::ostream& out);
// A simulated lab: the first failing seeds, each with the command that replays it.
void write_failing_seeds(const LabResult& lab, std::ostream& out);
// The expectation with its verdict, and each failure.
void write_expectation(const LabResult& lab, std::ostream& out);
// The figures this machine measured beside the article's, with the reason where they differ.
void write_figures(const LabResult& lab, std::ostream& out);

// A table of counts per trial (an idempotency lab's, a stream lab's accounting) has a row for at most
// this many trials; the others are summed up.
inline constexpr size_t k_count_rows = 20;

// The parts of the labs that run trials (trials_html.cpp).
//
// How a family's chips word a trial's final state.
struct FinalsView {
    const char* heading;  // "final status per trial"
    bool single;          // the ✕ of a wrong trial goes after the whole chip
    // What the chip says about a trial, without its number.
    std::string (*chip_text)(const LabResult& lab, const TrialOutcome& t);
};
// A chip per trial, or above a bound a tally of the outcomes with the chips folded away.
void write_finals(const LabResult& lab, const FinalsView& view, std::ostream& out);

// A trial as its family draws it, and what the caption says of it after its number.
struct TrialDrawing {
    Timeline timeline;
    std::string about;  // HTML: " — stream: …"
};
// nullopt when there is nothing to draw.
using TrialDrawer = std::optional<TrialDrawing> (*)(const LabResult& lab, const TrialOutcome& t);
// The selected trials' timelines (every trial of a lab with few), each drawn by `draw`.
void write_trial_timelines(const LabResult& lab, TrialDrawer draw, HtmlPage& page, std::ostream& out);
// The lab's text report, folded away.
void write_text_details(const LabResult& lab, std::ostream& out);

}  // namespace relab::html
