// One interface, one implementation per format. Reporters get the finished RunReport and an
// output stream; they never run or re-check anything.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "check/outcome.h"

namespace relab {

enum class Lang { en, vi };

// The Vietnamese text when the report is in Vietnamese and one is given, else the English.
inline const std::string& pick(Lang lang, const std::string& en, const std::string& vi) {
    return lang == Lang::vi && !vi.empty() ? vi : en;
}
enum class TimelineSelection { first_and_wrong, first, wrong, all, none };

class Reporter {
public:
    virtual ~Reporter() = default;
    virtual void report(const RunReport& run, std::ostream& out) = 0;
};

struct TextOptions {
    Lang lang = Lang::en;
    // first_and_wrong: trial 1 and the first wrong trial (the default, like the article)
    TimelineSelection timelines = TimelineSelection::first_and_wrong;
};

std::unique_ptr<Reporter> make_text_reporter(const TextOptions& opts);
// The text report of one lab, as make_text_reporter writes it for each lab of a run.
void write_text_lab(const LabResult& lab, const TextOptions& opts, std::ostream& out);
std::unique_ptr<Reporter> make_json_reporter();

// The JSON of one run (what make_json_reporter writes), for reuse by other formats.
nlohmann::json run_to_json(const RunReport& run);

// The inverse of run_to_json: `relab report` renders every format from saved JSON without
// re-running anything. A lab's scenario is re-read from its embedded source; when that source is
// not a valid scenario (hand-made or older JSON), the fields the JSON carries are used. Throws
// std::runtime_error naming the JSON path when a field has the wrong type.
RunReport run_from_json(const nlohmann::json& j);

// The trials a report draws a timeline for (shared by the text and HTML reporters).
std::vector<const TrialOutcome*> selected_trials(const std::vector<TrialOutcome>& trials, TimelineSelection sel);

struct HtmlOptions {
    TimelineSelection timelines = TimelineSelection::first_and_wrong;
    int all_timelines_up_to = 3;  // a lab with this many trials or fewer gets every timeline
};

// index.html: self-contained (inline CSS and SVG, no script, no network).
std::unique_ptr<Reporter> make_html_reporter(const HtmlOptions& opts = {});
// summary.md: one table row per lab, fit for $GITHUB_STEP_SUMMARY.
std::unique_ptr<Reporter> make_markdown_reporter();
// junit.xml: one testsuite, one testcase per lab (classname = output group, name = lab id); a
// broken expectation is a <failure> carrying the lab's text report, a skipped lab a <skipped>.
std::unique_ptr<Reporter> make_junit_reporter();

}  // namespace relab
