// One interface, one implementation per format. Reporters get the finished RunReport and an
// output stream; they never run or re-check anything.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "check/outcome.h"

namespace relab {

enum class Lang { en, vi };
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
std::unique_ptr<Reporter> make_json_reporter();

// The JSON of one run (what make_json_reporter writes), for reuse by other formats.
nlohmann::json run_to_json(const RunReport& run);

}  // namespace relab
