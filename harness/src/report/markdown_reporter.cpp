// summary.md: a heading with the counts and one table row per lab (documented beside measured),
// in GitHub-flavoured Markdown so that CI can append it to $GITHUB_STEP_SUMMARY as it is.
#include <optional>
#include <set>

#include <fmt/format.h>

#include "ports/seed_text.h"
#include "report/comparison_table.h"
#include "report/article_words.h"
#include "report/idem_facts.h"
#include "report/lab_summary.h"
#include "report/reporter.h"

namespace relab {

namespace {

// One table cell: Markdown and HTML syntax characters escaped, on one line.
std::string cell(const std::string& text) {
    std::string out;
    for (const char c : text) {
        switch (c) {
            case '|': out += "\\|"; break;
            case '\\': out += "\\\\"; break;
            case '`': out += "\\`"; break;
            case '*': out += "\\*"; break;
            case '_': out += "\\_"; break;
            case '[': out += "\\["; break;
            case ']': out += "\\]"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '&': out += "&amp;"; break;
            case '\n':
            case '\r': out += ' '; break;
            default: out += c;
        }
    }
    return out.empty() ? "—" : out;
}

std::string verdict_cell(const LabResult& lab) {
    switch (verdict_of(lab)) {
        case Verdict::held: return "✅ held";
        case Verdict::broken: return "❌ **BROKEN**";
        case Verdict::skipped: return "⏭️ skipped: " + cell(lab.skip_reason);
    }
    return "?";
}

// The verdict, and a pointer to the note below when it is not simply the one the saved file stated.
std::string result_cell(const LabResult& lab) {
    return lab.verdict_note.empty() ? verdict_cell(lab) : verdict_cell(lab) + " ⚠️ see note";
}

class MarkdownReporter : public Reporter {
public:
    void report(const RunReport& run, std::ostream& out) override {
        const LabCounts n = count_labs(run);
        out << fmt::format("## relab: {} lab{} — {} held, {} broken, {} skipped\n\n", n.labs, n.labs == 1 ? "" : "s",
                           n.held, n.broken, n.skipped);
        std::vector<std::string> facts;
        if (!run.servers.redis_version.empty())
            facts.push_back("Redis " + cell(run.servers.redis_version) + (run.servers.redis_external ? " (external)" : ""));
        if (!run.servers.pg_version.empty())
            facts.push_back("PostgreSQL " + cell(run.servers.pg_version) + (run.servers.pg_external ? " (external)" : ""));
        if (!run.relab_commit.empty()) facts.push_back("relab `" + run.relab_commit + "`");
        if (!run.started_at.empty()) facts.push_back("started " + cell(run.started_at));
        if (!facts.empty()) out << fmt::format("{}\n\n", fmt::join(facts, " · "));

        out << "| lab | backend | title | " << k_documented_header << " | measured (wrong/trials) | expectation | result |\n";
        out << "| --- | --- | --- | --- | --- | --- | --- |\n";
        for (const auto& lab : run.labs) {
            const Scenario& s = lab.scenario;
            out << fmt::format("| `{}` | {} | {} | {} | {} | {} | {} |\n", s.id, cell(backend_of(lab)), cell(s.title),
                               cell(documented_text(s.documented)), cell(measured_cell_text(lab)),
                               cell(s.expect.describe()), result_cell(lab));
        }
        bool heading = false;
        for (const auto& lab : run.labs) {
            if (verdict_of(lab) != Verdict::broken) continue;
            if (!heading) out << "\n### Broken expectations\n\n";
            heading = true;
            if (lab.failures.empty()) out << fmt::format("- `{}`: expectation {} broke\n", lab.scenario.id, cell(lab.scenario.expect.describe()));
            for (const auto& f : lab.failures) out << fmt::format("- `{}`: {}\n", lab.scenario.id, cell(f));
        }
        write_verdict_notes(run, out);
        write_simulated(run, out);
        write_accounting(run, out);
        write_idem_counts(run, out);
        write_figures(run, out);
        write_beside(run, out);
        write_comparisons(run, out);
        write_quotes(run, out);
    }

private:
    // Labs whose saved verdict disagreed with their trials, or could not be recomputed.
    static void write_verdict_notes(const RunReport& run, std::ostream& out) {
        bool heading = false;
        for (const auto& lab : run.labs) {
            if (lab.verdict_note.empty()) continue;
            if (!heading) out << "\n### Verdict notes\n\n";
            heading = true;
            out << fmt::format("- ⚠️ `{}` ({}): {}\n", lab.scenario.id, cell(backend_of(lab)), cell(lab.verdict_note));
        }
    }

    // Simulated labs: the wrong rate with its interval, and the seeds to replay.
    static void write_simulated(const RunReport& run, std::ostream& out) {
        bool heading = false;
        for (const auto& lab : run.labs) {
            if (!is_sim(lab) || lab.skipped) continue;
            if (!heading)
                out << "\n### Simulated labs\n\n| lab | wrong rate (95% CI) | first failing seeds | replay the first |\n"
                       "| --- | --- | --- | --- |\n";
            heading = true;
            std::vector<std::string> seeds;
            for (const uint64_t seed : lab.failing_seeds) seeds.push_back("`" + seed_text(seed) + "`");
            std::string replay = "—";
            if (lab.replay_seed)
                replay = "`" + replay_command(lab, *lab.replay_seed) + "`";
            else if (!lab.failing_seeds.empty())
                replay = "`" + replay_command(lab, lab.failing_seeds.front()) + "`";
            out << fmt::format("| `{}` | {} | {} | {} |\n", lab.scenario.id, cell(wrong_rate_text(lab)),
                               seeds.empty() ? "none" : fmt::format("{}", fmt::join(seeds, ", ")), replay);
        }
    }

    // Stream labs: every published entry followed to its jobs, summed over the trials; a count that
    // flags something is bold.
    static void write_accounting(const RunReport& run, std::ostream& out) {
        bool heading = false;
        for (const auto& lab : run.labs) {
            if (!is_stream_lab(lab) || lab.skipped || lab.trials.empty()) continue;
            if (!heading)
                out << "\n### Accounting: every published entry followed to its jobs\n\n| lab | trials | published | "
                       "processed once | duplicated | lost | redelivered after ack | unexpected | stale overwrites | more |\n"
                       "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
            heading = true;
            const Accounting a = accounting_total(lab);
            auto flag = [](int n) { return n > 0 ? fmt::format("**{}**", n) : std::to_string(n); };
            out << fmt::format("| `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", lab.scenario.id,
                               lab.trials.size(), a.published, a.processed_once, flag(a.duplicated), flag(a.lost),
                               flag(a.redelivered), flag(a.unexpected), flag(a.stale_overwrites), accounting_more_text(a));
        }
    }

    // Idempotency workloads: orders and answers, counted over every trial.
    static void write_idem_counts(const RunReport& run, std::ostream& out) {
        bool heading = false;
        for (const auto& lab : run.labs) {
            if (!is_idem_workload(lab)) continue;
            const auto cells = idem_count_cells(IdemCounts{});  // the fixed columns
            if (!heading) {
                out << "\n### Idempotency labs: orders and answers\n\n| lab | trials |";
                for (const auto& c : cells) out << ' ' << c.label << " |";
                out << "\n| --- | --- |";
                for (size_t i = 0; i < cells.size(); ++i) out << " --- |";
                out << '\n';
            }
            heading = true;
            out << fmt::format("| `{}` | {} |", lab.scenario.id, lab.trials.size());
            for (const auto& c : idem_count_cells(idem_total(lab)))
                if (c.label != "unanswered" && c.label != "vanished") out << (c.bad ? fmt::format(" **{}** |", c.value) : fmt::format(" {} |", c.value));
            out << '\n';
        }
    }

    // What this machine measured beside the article's figure, with the reason they differ.
    static void write_figures(const RunReport& run, std::ostream& out) {
        bool heading = false;
        for (const auto& lab : run.labs) {
            if (lab.skipped) continue;
            std::vector<Measurement> figures = documented_figures(lab, false);
            if (auto tp = throughput_figure(lab)) figures.push_back(std::move(*tp));
            for (const auto& m : figures) {
                if (!heading)
                    out << "\n### Measured here, beside the article\n\n| lab | figure | measured here | article | why they "
                           "differ |\n| --- | --- | --- | --- | --- |\n";
                heading = true;
                out << fmt::format("| `{}` | {} | {} | {} | {} |\n", lab.scenario.id, cell(m.label), cell(m.measured),
                                   cell(m.documented), cell(m.reason));
            }
        }
    }

    // Labs that ran an arrangement beside themselves (`beside`): both throughputs and their ratio.
    static void write_beside(const RunReport& run, std::ostream& out) {
        bool heading = false;
        for (const auto& lab : run.labs) {
            const std::string beside = beside_throughput_text(lab);
            if (lab.skipped || beside.empty()) continue;
            if (!heading) out << "\n### Throughput beside another arrangement, in the same run\n\n";
            heading = true;
            out << fmt::format("- `{}`: {}\n", lab.scenario.id, cell(beside));
        }
    }

    // Labs compared in one table (e.g. S4a by language): wrong/trials with 95% intervals.
    static void write_comparisons(const RunReport& run, std::ostream& out) {
        for (const ComparisonTable& c : comparison_tables(run.labs)) {
            out << fmt::format("\n### Comparison `{}`\n\n| row | lab | wrong/trials | rate | 95% interval |\n"
                               "| --- | --- | --- | --- | --- |\n",
                               c.name);
            for (const auto& r : c.rows)
                out << fmt::format("| {} | {} | {}/{} | {:.0f}% | {:.0f}–{:.0f}% |\n", cell(r.label),
                                   r.lab.empty() ? std::string(k_article_row_source) : "`" + r.lab + "` (" + r.backend + ")",
                                   r.wrong, r.trials, 100 * r.rate, 100 * r.low, 100 * r.high);
        }
    }

    // The article's throughput figure beside the throughput the lab measured.
    static std::optional<Measurement> throughput_figure(const LabResult& lab) {
        const Documented& d = lab.scenario.documented;
        if (!d.throughput || lab.throughput.trials == 0) return std::nullopt;
        return Measurement{fmt::format("throughput, median of {} trial(s)", lab.throughput.trials),
                           fmt::format("{:.2f} jobs/s", lab.throughput.per_s),
                           throughput_figure_text(*d.throughput, Lang::en) + " (" + d.throughput->passage.section +
                               "): " + quoted(d.throughput->passage.quote_vi),
                           d.throughput->passage.text};
    }

    // Every lab's quote of the article, with its title and section, apart from relab's words: the
    // summary and the choice under labels that say they are relab's. A lab run on both backends
    // is listed once.
    static void write_quotes(const RunReport& run, std::ostream& out) {
        const QuoteLabels& l = quote_labels(Lang::en);
        std::set<std::string> listed;
        bool heading = false;
        for (const auto& lab : run.labs) {
            const Documented& d = lab.scenario.documented;
            if (d.quote_vi.empty() || !listed.insert(lab.scenario.id).second) continue;
            if (!heading) out << "\n### The articles' words, beside relab's\n\n";
            heading = true;
            out << fmt::format("- `{}`: {} ({}): {}\n", lab.scenario.id, l.article,
                               cell(article_citation(d.article, d.section)), cell(quoted(d.quote_vi)));
            if (!d.text.empty()) out << fmt::format("  - {} {}\n", l.summary, cell(d.text));
            if (!d.relab_choice.empty()) out << fmt::format("  - {} {}\n", l.choice, cell(d.relab_choice));
            for (const auto& p : d.also) {
                out << fmt::format("  - {} ({}): {}\n", l.article_also, cell(article_citation(d.article, p.section)),
                                   cell(quoted(p.quote_vi)));
                if (!p.text.empty()) out << fmt::format("    - {} {}\n", l.note, cell(p.text));
            }
        }
    }
};

}  // namespace

std::unique_ptr<Reporter> make_markdown_reporter() { return std::make_unique<MarkdownReporter>(); }

}  // namespace relab
