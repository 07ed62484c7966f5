// summary.md: a heading with the counts and one table row per lab (documented beside measured),
// in GitHub-flavoured Markdown so that CI can append it to $GITHUB_STEP_SUMMARY as it is.
#include <fmt/format.h>

#include "report/lab_summary.h"
#include "report/reporter.h"

namespace relab {

namespace {

// One table cell: Markdown and HTML syntax characters escaped, on one line.
std::string cell(const std::string& text) {
    std::string out;
    for (const char c : text) {
        switch (c) {
            case '|': out += "\\|"; break;
            case '\\': out += "\\\\"; break;
            case '`': out += "\\`"; break;
            case '*': out += "\\*"; break;
            case '_': out += "\\_"; break;
            case '[': out += "\\["; break;
            case ']': out += "\\]"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '&': out += "&amp;"; break;
            case '\n':
            case '\r': out += ' '; break;
            default: out += c;
        }
    }
    return out.empty() ? "—" : out;
}

std::string result_cell(const LabResult& lab) {
    switch (verdict_of(lab)) {
        case Verdict::held: return "✅ held";
        case Verdict::broken: return "❌ **BROKEN**";
        case Verdict::skipped: return "⏭️ skipped: " + cell(lab.skip_reason);
    }
    return "?";
}

class MarkdownReporter : public Reporter {
public:
    void report(const RunReport& run, std::ostream& out) override {
        const LabCounts n = count_labs(run);
        out << fmt::format("## relab: {} lab{} — {} held, {} broken, {} skipped\n\n", n.labs, n.labs == 1 ? "" : "s",
                           n.held, n.broken, n.skipped);
        std::vector<std::string> facts;
        if (!run.servers.redis_version.empty())
            facts.push_back("Redis " + cell(run.servers.redis_version) + (run.servers.redis_external ? " (external)" : ""));
        if (!run.servers.pg_version.empty())
            facts.push_back("PostgreSQL " + cell(run.servers.pg_version) + (run.servers.pg_external ? " (external)" : ""));
        if (!run.relab_commit.empty()) facts.push_back("relab `" + run.relab_commit + "`");
        if (!run.started_at.empty()) facts.push_back("started " + cell(run.started_at));
        if (!facts.empty()) out << fmt::format("{}\n\n", fmt::join(facts, " · "));

        out << "| lab | title | documented | measured (wrong/trials) | expectation | result |\n";
        out << "| --- | --- | --- | --- | --- | --- |\n";
        for (const auto& lab : run.labs) {
            const Scenario& s = lab.scenario;
            out << fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", s.id, cell(s.title),
                               cell(documented_text(s.documented)), cell(measured_text(lab)), cell(s.expect.describe()),
                               result_cell(lab));
        }
        bool heading = false;
        for (const auto& lab : run.labs) {
            if (verdict_of(lab) != Verdict::broken) continue;
            if (!heading) out << "\n### Broken expectations\n\n";
            heading = true;
            if (lab.failures.empty()) out << fmt::format("- `{}`: expectation {} broke\n", lab.scenario.id, cell(lab.scenario.expect.describe()));
            for (const auto& f : lab.failures) out << fmt::format("- `{}`: {}\n", lab.scenario.id, cell(f));
        }
    }
};

}  // namespace

std::unique_ptr<Reporter> make_markdown_reporter() { return std::make_unique<MarkdownReporter>(); }

}  // namespace relab
