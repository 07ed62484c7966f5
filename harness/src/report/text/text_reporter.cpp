// The plain-text report, in the article's own layout (article 000, sections 2, 3 and 6): a heading
// per lab, the timeline of the selected trials, the final status of every trial, the wrong count
// beside what the article documented, and whether the scenario's expectation held. This file
// holds the frame: each lab's heading, then its family's section (text_sections.h).
#include "report/reporter.h"

#include <algorithm>

#include "report/text/text_sections.h"

namespace relab {

namespace {

class TextReporter : public Reporter {
public:
    explicit TextReporter(const TextOptions& opts) : m_opts(opts) {}

    void report(const RunReport& run, std::ostream& out) override {
        for (const auto& lab : run.labs) write_text_lab(lab, m_opts, out);
    }

private:
    TextOptions m_opts;
};

}  // namespace

std::vector<const TrialOutcome*> selected_trials(const std::vector<TrialOutcome>& trials, TimelineSelection sel) {
    std::vector<const TrialOutcome*> out;
    if (trials.empty()) return out;
    switch (sel) {
        case TimelineSelection::none: break;
        case TimelineSelection::first: out.push_back(&trials.front()); break;
        case TimelineSelection::all:
            for (const auto& t : trials) out.push_back(&t);
            break;
        case TimelineSelection::wrong:
            for (const auto& t : trials)
                if (t.wrong) out.push_back(&t);
            break;
        case TimelineSelection::first_and_wrong: {
            out.push_back(&trials.front());
            const auto it = std::find_if(trials.begin(), trials.end(), [](const TrialOutcome& t) { return t.wrong; });
            if (it != trials.end() && it != trials.begin()) out.push_back(&*it);
            break;
        }
    }
    return out;
}

std::unique_ptr<Reporter> make_text_reporter(const TextOptions& opts) { return std::make_unique<TextReporter>(opts); }

void write_text_lab(const LabResult& lab, const TextOptions& opts, std::ostream& out) {
    const TextContext tc{opts, text_words(opts.lang)};
    if (write_heading_text(tc, lab, out)) text_section(lab.scenario.kind)(tc, lab, out);
}

}  // namespace relab
