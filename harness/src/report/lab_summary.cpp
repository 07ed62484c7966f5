#include "report/lab_summary.h"

#include <sstream>

#include <fmt/format.h>

#include "report/reporter.h"

namespace relab {

Verdict verdict_of(const LabResult& lab) {
    if (lab.skipped) return Verdict::skipped;
    return lab.held ? Verdict::held : Verdict::broken;
}

const char* verdict_text(Verdict v) {
    switch (v) {
        case Verdict::held: return "held";
        case Verdict::broken: return "broken";
        case Verdict::skipped: return "skipped";
    }
    return "?";
}

LabCounts count_labs(const RunReport& run) {
    LabCounts c;
    for (const auto& lab : run.labs) {
        ++c.labs;
        switch (verdict_of(lab)) {
            case Verdict::held: ++c.held; break;
            case Verdict::broken: ++c.broken; break;
            case Verdict::skipped: ++c.skipped; break;
        }
    }
    return c;
}

std::string documented_text(const Documented& d) {
    std::string count;
    if (d.wrong) count = d.of ? fmt::format("{}/{}", *d.wrong, *d.of) : std::to_string(*d.wrong);
    if (count.empty()) return d.text;
    if (d.text.empty()) return count;
    return count + " — " + d.text;
}

std::string measured_text(const LabResult& lab) {
    if (lab.skipped) return {};
    if (lab.scenario.kind == ScenarioKind::sessions) return fmt::format("{}/{} cases", lab.wrong, lab.total);
    return fmt::format("{}/{}", lab.wrong, lab.total);
}

std::string expected_final(const Scenario& s) {
    if (s.kind == ScenarioKind::sessions) return {};
    return s.orders.empty() ? OrderSpec{}.expected_final : s.orders.front().expected_final;
}

std::string lab_text_report(const LabResult& lab) {
    RunReport one;
    one.labs = {lab};
    std::ostringstream out;
    make_text_reporter(TextOptions{})->report(one, out);
    return out.str();
}

std::string markup_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default:
                // XML 1.0 has no way to carry C0 controls other than tab, newline and return.
                if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') break;
                out += c;
        }
    }
    return out;
}

}  // namespace relab
