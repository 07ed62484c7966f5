// What the summary formats (HTML, Markdown, JUnit) say about a lab, worded once for all of them.
#pragma once

#include <string>
#include <string_view>

#include "check/outcome.h"

namespace relab {

enum class Verdict { held, broken, skipped };

Verdict verdict_of(const LabResult& lab);
const char* verdict_text(Verdict v);  // "held", "broken", "skipped"

struct LabCounts {
    int labs = 0;
    int held = 0;
    int broken = 0;
    int skipped = 0;
};
LabCounts count_labs(const RunReport& run);

// "10/10 — wrong 10/10; created overwrites at 816 ms", "10/10", the text alone, or "" when the
// scenario documents nothing.
std::string documented_text(const Documented& d);
// "5/20" (wrong trials / trials), "1/3 cases"; "" for a skipped lab.
std::string measured_text(const LabResult& lab);
// The order status a workload lab expects at the end ("paid"); "" for session labs.
std::string expected_final(const Scenario& s);
// The text report of this lab alone, as `relab run` prints it (English, trial 1 + first wrong).
std::string lab_text_report(const LabResult& lab);

// Text for XML and HTML: & < > " ' escaped; control characters XML cannot carry are dropped.
std::string markup_escape(std::string_view text);

}  // namespace relab
