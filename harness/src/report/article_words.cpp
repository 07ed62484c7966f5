#include "report/article_words.h"

#include <fmt/format.h>

namespace relab {

std::string quoted(const std::string& words) { return "“" + words + "”"; }

std::string article_citation(Article article, const std::string& section) {
    const std::string& title = article_title(article);
    if (title.empty()) return section;
    return section.empty() ? quoted(title) : quoted(title) + ", " + section;
}

std::string throughput_figure_text(const DocumentedThroughput& t, Lang lang) {
    std::string number = fmt::format("{:g}", t.per_s);
    if (lang == Lang::en) return number + " events/s";
    for (char& c : number)
        if (c == '.') c = ',';  // the article writes 1,25
    return number + " event/giây";
}

const QuoteLabels& quote_labels(Lang lang) {
    static const QuoteLabels en{"the article", "the article also", "the article's figure", "relab's summary:",
                                "relab's note:", "relab's choice, not the article's:"};
    static const QuoteLabels vi{"nguyên văn bài viết", "bài viết còn viết", "con số của bài viết", "relab tóm tắt:",
                                "ghi chú của relab:", "lựa chọn của relab, không phải của bài viết:"};
    return lang == Lang::vi ? vi : en;
}

}  // namespace relab
