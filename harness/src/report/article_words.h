// How every report words the article's own words and relab's beside them: a quote is printed
// between typographic quotes with the article's title and section, and relab's words carry a
// label saying they are relab's, in the report's language.
#pragma once

#include <string>

#include "report/reporter.h"
#include "scenario/scenario.h"

namespace relab {

// “words”: the article's words, set off so that nothing around them reads as part of them.
std::string quoted(const std::string& words);
// “Lưu idempotency key ở Redis”, §7, Case 1
std::string article_citation(Article article, const std::string& section);
// The article's throughput figure: "1.25 events/s" (English) or "1,25 event/giây" (Vietnamese).
std::string throughput_figure_text(const DocumentedThroughput& t, Lang lang);

// The labels of the two kinds of words, in the report's language.
struct QuoteLabels {
    const char* article;       // before a quote's citation: "the article"
    const char* article_also;  // before a further passage: "the article also"
    const char* figure;        // before the article's figure: "the article's figure"
    const char* summary;       // relab's summary of what the article reported
    const char* note;          // relab's note on a passage
    const char* choice;        // relab's choice where the article says nothing
};
const QuoteLabels& quote_labels(Lang lang);

}  // namespace relab
