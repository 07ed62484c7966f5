// The parts of a lab's text report every family shares: the heading, what the article documented,
// the expectation and its verdict, and a simulated lab's wrong rate.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ports/seed_text.h"
#include "report/article_words.h"
#include "report/lab_summary.h"
#include "report/text/text_sections.h"

namespace relab {

namespace {

// The lab prints its measured throughput, with the article's figure under it.
bool throughput_shown(const LabResult& lab) {
    const StreamLab* flow = lab.scenario.flow_if();
    return flow && flow->show_throughput && lab.throughput.trials > 0;
}

// A further passage of the article the quote above named: its section is citation enough.
void write_passage_text(const TextContext& tc, const char* label, const ArticlePassage& p, std::ostream& out) {
    out << "    " << label << " (" << p.section << "): " << quoted(p.quote_vi) << '\n';
    if (const std::string& note = pick(tc.opts.lang, p.text, p.text_vi); !note.empty())
        out << "      " << quote_labels(tc.opts.lang).note << ' ' << note << '\n';
}

// What the article reported: its count, its own words marked as its (title and section), then
// relab's words, each under a label saying they are relab's.
void write_documented_text(const TextContext& tc, const LabResult& lab, std::ostream& out) {
    const Documented& doc = lab.scenario.documented;
    const QuoteLabels& l = quote_labels(tc.opts.lang);
    const std::string& summary = pick(tc.opts.lang, doc.text, doc.text_vi);
    const std::string& choice = pick(tc.opts.lang, doc.relab_choice, doc.relab_choice_vi);
    if (!doc.wrong && doc.quote_vi.empty() && summary.empty() && choice.empty()) return;
    out << "  " << tc.w.documented;
    if (doc.wrong) out << ' ' << documented_count(doc);
    out << '\n';
    if (!doc.quote_vi.empty())
        out << "    " << l.article << " (" << article_citation(doc.article, doc.section) << "): " << quoted(doc.quote_vi)
            << '\n';
    if (!summary.empty()) out << "    " << l.summary << ' ' << summary << '\n';
    if (!choice.empty()) out << "    " << l.choice << ' ' << choice << '\n';
    for (const auto& p : doc.also) write_passage_text(tc, l.article_also, p, out);
    // A figure with nothing measured beside it is still the article's: printed here instead.
    if (doc.throughput && !throughput_shown(lab)) write_throughput_figure_text(tc, doc, out);
}

}  // namespace

bool write_heading_text(const TextContext& tc, const LabResult& lab, std::ostream& out) {
    const Scenario& s = lab.scenario;
    out << "### " << pick(tc.opts.lang, s.title, s.title_vi);
    if (!s.output.empty()) out << "   (" << s.output << ".txt)";
    out << '\n';
    if (!lab.skipped) return true;
    out << tc.w.skipped << ' ' << lab.skip_reason << '\n';
    return false;
}

void write_verdict_text(const TextContext& tc, const LabResult& lab, std::ostream& out) {
    write_documented_text(tc, lab, out);
    out << "  " << tc.w.expectation << ' ' << lab.scenario.expect.describe() << " → "
        << (lab.held ? tc.w.held : tc.w.broken) << '\n';
    for (const auto& failure : lab.failures) out << "    ✕ " << failure << '\n';
}

void write_wrong_rate_text(const TextContext& tc, const LabResult& lab, std::ostream& out) {
    const Lang lang = tc.opts.lang;
    if (lab.replay_seed) {
        out << "  " << pick(lang, "replay of trial seed ", "chạy lại seed của lần thử ") << seed_text(*lab.replay_seed)
            << '\n';
        return;
    }
    out << "  "
        << fmt::format(fmt::runtime(pick(lang, "wrong rate {:.1f}% (95% CI {:.1f}–{:.1f}%) over {} trials",
                                         "tỉ lệ SAI {:.1f}% (khoảng tin cậy 95% {:.1f}–{:.1f}%) qua {} lần")),
                       100 * lab.wrong_rate, 100 * lab.wrong_rate_low, 100 * lab.wrong_rate_high, lab.total);
    if (!lab.failing_seeds.empty()) {
        std::vector<std::string> seeds;
        for (uint64_t seed : lab.failing_seeds) seeds.push_back(seed_text(seed));
        out << pick(lang, "; failing seeds: ", "; seed sai: ") << fmt::format("{}", fmt::join(seeds, ", "));
    }
    out << '\n';
}

void write_throughput_figure_text(const TextContext& tc, const Documented& doc, std::ostream& out) {
    const DocumentedThroughput& t = *doc.throughput;
    const QuoteLabels& l = quote_labels(tc.opts.lang);
    out << "    " << l.figure << ", " << throughput_figure_text(t, tc.opts.lang) << " ("
        << article_citation(doc.article, t.passage.section) << "): " << quoted(t.passage.quote_vi) << '\n';
    if (const std::string& note = pick(tc.opts.lang, t.passage.text, t.passage.text_vi); !note.empty())
        out << "      " << l.note << ' ' << note << '\n';
}

}  // namespace relab
