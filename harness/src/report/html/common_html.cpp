// The parts of a lab's section every family shares: the documented result beside the measured
// one, a simulated lab's failing seeds, the expectation with its verdict, the figures measured
// beside the article's.
#include <fmt/format.h>

#include "ports/seed_text.h"
#include "report/article_words.h"
#include "report/comparison_table.h"
#include "report/html/html_sections.h"
#include "report/idem_facts.h"

namespace relab::html {

namespace {

// The article's words as a quotation with its title and section, apart from relab's words.
void write_quote(const char* label, Article article, const ArticlePassage& p, std::ostream& out) {
    out << "<blockquote class=\"article\" lang=\"vi\"><p>" << esc(quoted(p.quote_vi)) << "</p><footer>" << esc(label)
        << ", <cite>" << esc(article_title(article)) << "</cite>, " << esc(p.section) << "</footer></blockquote>";
    if (!p.text.empty())
        out << "<p class=\"relab\"><span class=\"who\">" << esc(quote_labels(Lang::en).note) << "</span> " << esc(p.text)
            << "</p>";
}

// What the article documented: its count, its words as quotations, relab's summary and choice.
void write_documented(const Documented& d, std::ostream& out) {
    const QuoteLabels& l = quote_labels(Lang::en);
    out << "<div class=\"documented\"><h3>documented</h3>";
    if (d.wrong) out << "<p class=\"count\">" << documented_count(d) << "</p>";
    if (!d.quote_vi.empty()) write_quote(l.article, d.article, ArticlePassage{d.quote_vi, d.section, "", ""}, out);
    if (!d.text.empty()) out << "<p class=\"relab\"><span class=\"who\">" << esc(l.summary) << "</span> " << esc(d.text) << "</p>";
    if (!d.relab_choice.empty())
        out << "<p class=\"relab choice\"><span class=\"who\">" << esc(l.choice) << "</span> " << esc(d.relab_choice) << "</p>";
    if (d.throughput) {
        out << "<p class=\"figure\">throughput " << esc(throughput_figure_text(*d.throughput, Lang::en)) << "</p>";
        write_quote(l.figure, d.article, d.throughput->passage, out);
    }
    for (const auto& p : d.also) write_quote(l.article_also, d.article, p, out);
    if (!d.wrong && d.text.empty() && d.quote_vi.empty()) out << "<p>—</p>";
    out << "</div>\n";
}

}  // namespace

void write_documented_vs_measured(const LabResult& lab, const std::string& caption, std::ostream& out) {
    const Documented& d = lab.scenario.documented;
    out << "<div class=\"dvm\">\n";
    write_documented(d, out);
    out << "<div class=\"measured\"><h3>measured" << (is_sim(lab) ? " (simulated)" : "") << "</h3>";
    out << "<p class=\"count\">" << esc(measured_text(lab)) << "</p>";
    out << caption;
    if (is_sim(lab)) {
        if (lab.replay_seed) {
            out << "<p class=\"rate\">replay of trial seed <code>" << seed_text(*lab.replay_seed) << "</code></p>";
        } else {
            out << fmt::format("<p class=\"rate\">wrong rate <b>{:.1f}%</b>, 95% CI {:.1f}–{:.1f}%, over {} simulated "
                               "trials</p>",
                               100 * lab.wrong_rate, 100 * lab.wrong_rate_low, 100 * lab.wrong_rate_high, lab.total);
            write_rate_interval(lab, out);
        }
    }
    if (lab.delivery.samples > 0)
        out << "<p>" << fmt::format("delivery XADD → receipt: p50 {:.2f} ms, max {:.2f} ms", lab.delivery.p50_us / 1000.0,
                                    lab.delivery.max_us / 1000.0)
            << "</p>";
    if (!lab.lock_release_method.empty()) out << "<p>lock release: " << esc(lab.lock_release_method) << "</p>";
    if (const std::string beside = beside_throughput_text(lab); !beside.empty())
        out << "<p class=\"figure beside\">" << esc(beside) << "</p>";
    else if (d.throughput && lab.throughput.trials > 0)
        out << "<p class=\"figure\">" << esc(fmt::format("throughput {:.2f} jobs/s (median of {} trial(s))", lab.throughput.per_s,
                                                           lab.throughput.trials))
            << "</p>";
    out << "</div>\n</div>\n";
}

void write_failing_seeds(const LabResult& lab, std::ostream& out) {
    if (!is_sim(lab) || lab.replay_seed) return;
    if (lab.failing_seeds.empty()) {
        out << fmt::format("<p class=\"seeds\">no failing seed in {} trials</p>\n", lab.total);
        return;
    }
    out << "<div class=\"seeds\"><h3>first failing seeds</h3>\n<ul>\n";
    for (const uint64_t seed : lab.failing_seeds) {
        const TrialOutcome* t = trial_of_seed(lab, seed);
        out << fmt::format("<li><code>{}</code>{} — <code class=\"cmd\">{}</code></li>\n", seed_text(seed),
                           t ? fmt::format(" (trial {})", t->trial) : "", esc(replay_command(lab, seed)));
    }
    out << "</ul>\n</div>\n";
}

void write_expectation(const LabResult& lab, std::ostream& out) {
    out << fmt::format("<p class=\"expectation\">expectation: <code>{}</code> → {}</p>\n", esc(lab.scenario.expect.describe()),
                       badge(verdict_of(lab)));
    if (!lab.failures.empty()) {
        out << "<ul class=\"failures\">\n";
        for (const auto& f : lab.failures) out << "<li>" << esc(f) << "</li>\n";
        out << "</ul>\n";
    }
}

void write_figures(const LabResult& lab, std::ostream& out) {
    const std::vector<Measurement> figures = documented_figures(lab);
    if (figures.empty()) return;
    out << "<h3>measured here, beside the article</h3>\n<table class=\"figures\">\n<thead><tr><th>figure</th><th>"
           "measured here</th><th>article</th><th>why they differ, or how it was taken</th></tr></thead>\n<tbody>\n";
    for (const auto& m : figures)
        out << fmt::format("<tr><td>{}</td><td class=\"measured\">{}</td><td>{}</td><td class=\"why\">{}</td></tr>\n",
                           esc(m.label), esc(m.measured), m.documented.empty() ? "—" : esc(m.documented),
                           esc(m.reason));
    out << "</tbody>\n</table>\n";
}

}  // namespace relab::html
