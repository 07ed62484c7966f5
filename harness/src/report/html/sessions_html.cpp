// The scripted sessions labs' part of the page: the figures beside the article's, each case's
// timeline (a Redis case step by step), the transcript.
#include <algorithm>

#include <fmt/format.h>

#include "report/html/html_sections.h"
#include "report/idem_facts.h"
#include "report/text/redis_transcript.h"
#include "util/numbers.h"

namespace relab::html {

namespace {

bool redis_only_sessions(const LabResult& lab) {
    const auto& cases = lab.scenario.sessions().cases;
    return !cases.empty() && std::all_of(cases.begin(), cases.end(), [](const SessionCase& c) { return is_redis_case(c); });
}

// A scripted Redis case step by step: the reply beside what the lab expected and what the
// article printed, with the notes and projections the text report prints under them.
void write_steps(const CaseOutcome& c, const SessionCase& spec, std::ostream& out) {
    const std::vector<const SessionStep*> specs = step_specs(c, spec);
    out << "<table class=\"steps\">\n<thead><tr><th>t</th><th>session</th><th>command</th><th>reply</th>"
           "<th>expected</th><th>article</th><th></th></tr></thead>\n<tbody>\n";
    for (size_t k = 0; k < c.steps.size(); ++k) {
        const StepOutcome& step = c.steps[k];
        const SessionStep* ss = specs[k];
        const RedisStep* rs = ss && ss->redis ? &*ss->redis : nullptr;
        const std::string expected = ss ? expected_reply_text(*ss) : "";
        out << fmt::format(
            "<tr class=\"{}\"><td class=\"t\">{:.1f} ms</td><td>{}</td><td><code>{}</code></td><td class=\"reply\"><code>{}</code>"
            "</td><td class=\"expected\">{}</td><td>{}</td><td class=\"verdict\">{}</td></tr>\n",
            step.ok ? "ok" : "fail", static_cast<double>(step.start_us) / 1e3, esc(step.session), esc(step.sql),
            esc(reply_text(step)), expected.empty() ? "—" : "<code>" + esc(expected) + "</code>",
            rs && !rs->documented.empty() ? esc(rs->documented) : "—", step.ok ? "✓" : "✕ " + esc(step.failure));
        if (rs && rs->project)
            if (const auto total = projected_total(step, *rs->project))
                out << fmt::format("<tr class=\"note\"><td></td><td></td><td colspan=\"2\">× {} ({}) = <b>{}</b></td>"
                                   "<td></td><td>{}</td><td></td></tr>\n",
                                   with_thousands(rs->project->keys), esc(rs->project->label), esc(*total),
                                   rs->project->documented.empty() ? "—" : esc(rs->project->documented));
        if (rs && !rs->note.empty())
            out << "<tr class=\"note\"><td></td><td></td><td colspan=\"5\">why: " << esc(rs->note) << "</td></tr>\n";
    }
    out << "</tbody>\n</table>\n";
}

// A case's timeline, and a Redis case step by step under it.
void write_case(const CaseOutcome& c, const SessionCase* spec, size_t index, HtmlPage& page, std::ostream& out) {
    out << fmt::format("<figure class=\"timeline\" data-case=\"{}\">\n<figcaption><b>{}</b>{}</figcaption>\n", index + 1,
                       esc(c.title), c.wrong ? " <span class=\"badge broken\">wrong</span>" : "");
    const Timeline tl = case_timeline(c);
    if (!tl.lanes.empty()) write_svg_timeline(tl, ++page.svg_count, c.title, out);
    out << "</figure>\n";
    if (spec && is_redis_case(*spec)) write_steps(c, *spec, out);
}

}  // namespace

std::string sessions_measured_caption(const LabResult& lab) {
    return redis_only_sessions(lab) ? "<p>cases with a reply other than expected</p>" : "<p>cases with a wrong final row</p>";
}

void write_sessions_html(const LabResult& lab, HtmlPage& page, std::ostream& out) {
    const Scenario& s = lab.scenario;
    write_figures(lab, out);
    bool redis_only = !lab.cases.empty();
    for (size_t i = 0; i < lab.cases.size(); ++i) {
        const SessionCase* spec = i < s.sessions().cases.size() ? &s.sessions().cases[i] : nullptr;
        redis_only = redis_only && spec && is_redis_case(*spec);
        write_case(lab.cases[i], spec, i, page, out);
    }
    const std::string text = lab_text_report(lab);
    if (redis_only)
        out << "<details><summary>redis-cli transcript</summary>\n<pre class=\"transcript\">" << esc(text)
            << "</pre>\n</details>\n";
    else
        out << "<h3>transcript</h3>\n<pre class=\"transcript\">" << esc(text) << "</pre>\n";
}

}  // namespace relab::html
