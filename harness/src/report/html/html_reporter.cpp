// index.html: the run as a page to look at. One self-contained file (inline CSS and SVG, no
// script, nothing fetched): a summary table, then per lab the documented result beside the
// measured one, the final status of every trial, a swimlane timeline of the selected trials
// (every case of a session lab) and the lab's text report.
// This file holds the frame: the page's head and summary, then each lab's heading, the parts every
// family shares and its family's body (html_sections.h).
#include <algorithm>

#include <fmt/format.h>

#include "report/html/html_sections.h"
#include "report/idem_facts.h"

namespace relab {

namespace html {

namespace {

void write_lab(const LabResult& lab, HtmlPage& page, std::ostream& out) {
    const Scenario& s = lab.scenario;
    const Verdict v = verdict_of(lab);
    out << fmt::format("<section class=\"lab {}\" id=\"{}\">\n", verdict_text(v), anchor(lab));
    out << fmt::format("<h2>{} <code>{}</code> {} {}</h2>\n", badge(v), esc(s.id), backend_tag(lab), esc(s.title));
    if (!lab.verdict_note.empty()) out << "<p class=\"verdict-note\">⚠ " << esc(lab.verdict_note) << "</p>\n";
    if (lab.skipped) {
        out << "<p class=\"skip\">skipped: " << esc(lab.skip_reason) << "</p>\n</section>\n";
        return;
    }
    const HtmlFamily family = html_family(s.kind);
    write_documented_vs_measured(lab, family.measured_caption(lab), out);
    write_failing_seeds(lab, out);
    write_expectation(lab, out);
    family.body(lab, page, out);
    out << "</section>\n";
}

class HtmlReporter : public Reporter {
public:
    explicit HtmlReporter(const HtmlOptions& opts) : m_opts(opts) {}

    void report(const RunReport& run, std::ostream& out) override {
        HtmlPage page{m_opts};
        write_page_head(run, out);
        write_summary_table(run, out);
        write_load_section(run, out);
        write_comparisons(run, out);
        write_legend(out);
        if (std::any_of(run.labs.begin(), run.labs.end(), [](const LabResult& l) { return is_idem_workload(l); }))
            write_idem_legend(out);
        for (const auto& lab : run.labs) write_lab(lab, page, out);
        out << "</body>\n</html>\n";
    }

private:
    HtmlOptions m_opts;
};

}  // namespace

}  // namespace html

std::unique_ptr<Reporter> make_html_reporter(const HtmlOptions& opts) { return std::make_unique<html::HtmlReporter>(opts); }

}  // namespace relab
