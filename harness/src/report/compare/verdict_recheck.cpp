#include "report/compare/verdict_recheck.h"

#include <fmt/format.h>

#include "scenario/lab_kind.h"
#include "report/lab_summary.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"

namespace relab {

std::string recheck_verdict(LabResult& lab) {
    lab.verdict_note.clear();
    if (lab.skipped) {
        lab.held = false;
        return {};
    }
    const Verdict stored = verdict_of(lab);
    const nlohmann::json& source = lab.scenario.source;
    std::string unreadable;
    if (!source.is_object() || source.empty()) {
        unreadable = "the report embeds no scenario";
    } else {
        try {
            // The lab's scenario was read from this source already (run_from_json); parsing it again
            // says whether it is a scenario this relab can judge by, or the fallback built from the
            // report's own fields.
            parse_scenario(source.dump(), fmt::format("scenario of lab {} in a JSON report", lab.scenario.id));
        } catch (const std::exception& e) {
            unreadable = fmt::format("its embedded scenario does not parse any more ({})", e.what());
        }
    }
    if (!unreadable.empty()) {
        lab.verdict_note = fmt::format("verdict not recomputed: {}; showing the verdict the file states ({}); re-run "
                                       "the lab to get a checked verdict",
                                       unreadable, verdict_text(stored));
        return lab.verdict_note;
    }
    for (auto& t : lab.trials) recheck_trial(lab.scenario, t);
    summarize(lab);
    const Verdict recomputed = verdict_of(lab);
    if (recomputed == stored) return {};
    const std::string what = counts_cases(lab.scenario.kind) ? "cases" : "trials";
    std::string why = lab.failures.empty() ? fmt::format("expectation {} held", lab.scenario.expect.describe())
                                           : lab.failures.front();
    lab.verdict_note = fmt::format("the file says {}, but its {} {} say {} ({}); showing {}", verdict_text(stored),
                                   lab.total, what, verdict_text(recomputed), why, verdict_text(recomputed));
    return lab.verdict_note;
}

}  // namespace relab
