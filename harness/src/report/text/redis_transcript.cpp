#include "report/text/redis_transcript.h"

#include <algorithm>

#include <fmt/format.h>

#include "report/idem_facts.h"
#include "report/text/text_words.h"
#include "util/numbers.h"

namespace relab {

bool is_redis_case(const SessionCase& spec) {
    return std::any_of(spec.sessions.begin(), spec.sessions.end(),
                       [](const SessionSpec& s) { return s.client == "redis"; });
}

void print_redis_case(const CaseOutcome& c, const SessionCase& spec, Lang lang, std::ostream& out) {
    const IdemWords& w = idem_words(lang);
    out << "--- " << pick(lang, c.title, c.title_vi) << '\n';
    const std::vector<const SessionStep*> specs = step_specs(c, spec);
    for (size_t k = 0; k < c.steps.size(); ++k) {
        const StepOutcome& step = c.steps[k];
        const SessionStep* step_spec = specs[k];
        if (!step.redis) {
            out << step.session << "=# " << step.sql << '\n' << (step.error.empty() ? step.tag : "ERROR:  " + step.error) << '\n';
            continue;
        }
        out << step.session << "> " << step.sql << '\n';
        out << reply_text(step);
        const RedisStep* rs = step_spec && step_spec->redis ? &*step_spec->redis : nullptr;
        if (rs && !rs->documented.empty()) out << "      ← " << w.article << ' ' << rs->documented;
        out << '\n';
        if (rs && rs->project) {
            if (const auto total = projected_total(step, *rs->project)) {
                out << "  "
                    << fmt::format(fmt::runtime(w.projection), with_thousands(rs->project->keys),
                                   pick(lang, rs->project->label, rs->project->label_vi), *total);
                if (!rs->project->documented.empty()) out << "      ← " << w.article << ' ' << rs->project->documented;
                out << '\n';
            }
        }
        if (rs && !pick(lang, rs->note, rs->note_vi).empty()) out << "  " << w.why << ' ' << pick(lang, rs->note, rs->note_vi) << '\n';
        if (!step.ok) out << "  ✕ " << step.failure << '\n';
    }
}

}  // namespace relab
