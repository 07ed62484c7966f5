// junit.xml: what CI systems show as test results. One testsuite "relab"; one testcase per lab,
// its classname the lab's output group (prefixed "sim." for a simulated run) and its name the lab id. A held expectation passes with
// the lab's text report as system-out; a broken one is a <failure> carrying that text; a skipped
// lab is <skipped> with its reason.
#include <fmt/format.h>

#include "report/lab_summary.h"
#include "report/reporter.h"

namespace relab {

namespace {

std::string attr(const std::string& text) {
    std::string out = markup_escape(text);
    // Attribute values are normalised by XML parsers: keep line breaks as character references.
    std::string kept;
    for (const char c : out) {
        if (c == '\n')
            kept += "&#10;";
        else if (c == '\r')
            kept += "&#13;";
        else if (c == '\t')
            kept += "&#9;";
        else
            kept += c;
    }
    return kept;
}

std::string seconds(double s) { return fmt::format("{:.3f}", s < 0 ? 0.0 : s); }

std::string failure_message(const LabResult& lab) {
    std::string message = "expectation " + lab.scenario.expect.describe() + " broke";
    if (!lab.failures.empty()) message += ": " + lab.failures.front();
    return message;
}

class JunitReporter : public Reporter {
public:
    void report(const RunReport& run, std::ostream& out) override {
        const LabCounts n = count_labs(run);
        double total_s = 0;
        for (const auto& lab : run.labs) total_s += lab.elapsed_s;
        const std::string counts = fmt::format(R"(tests="{}" failures="{}" errors="0" skipped="{}" time="{}")", n.labs,
                                               n.broken, n.skipped, seconds(total_s));
        out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
        out << "<testsuites name=\"relab\" " << counts << ">\n";
        out << "  <testsuite name=\"relab\" " << counts;
        if (!run.started_at.empty()) out << " timestamp=\"" << attr(run.started_at) << '"';
        out << ">\n";
        out << "    <properties>\n";
        auto property = [&](const char* name, const std::string& value) {
            out << "      <property name=\"" << name << "\" value=\"" << attr(value) << "\"/>\n";
        };
        property("relab_commit", run.relab_commit);
        property("seed", std::to_string(run.seed));
        property("redis_version", run.servers.redis_version);
        property("pg_version", run.servers.pg_version);
        out << "    </properties>\n";
        for (const auto& lab : run.labs) {
            const Scenario& s = lab.scenario;
            // A simulated lab is a class of its own ("sim.08c-lock"): its real run may be in the same report.
            const std::string group = s.output.empty() ? s.id : s.output;
            const std::string classname = backend_of(lab) == "real" ? group : backend_of(lab) + "." + group;
            out << "    <testcase classname=\"" << attr(classname) << "\" name=\"" << attr(s.id)
                << "\" time=\"" << seconds(lab.elapsed_s) << "\"";
            switch (verdict_of(lab)) {
                case Verdict::skipped:
                    out << ">\n      <skipped message=\"" << attr(lab.skip_reason) << "\"/>\n";
                    break;
                case Verdict::broken:
                    out << ">\n      <failure type=\"broken expectation\" message=\"" << attr(failure_message(lab))
                        << "\">" << markup_escape(lab_text_report(lab)) << "</failure>\n";
                    break;
                case Verdict::held:
                    out << ">\n      <system-out>" << markup_escape(lab_text_report(lab)) << "</system-out>\n";
                    break;
            }
            out << "    </testcase>\n";
        }
        out << "  </testsuite>\n</testsuites>\n";
    }
};

}  // namespace

std::unique_ptr<Reporter> make_junit_reporter() { return std::make_unique<JunitReporter>(); }

}  // namespace relab
