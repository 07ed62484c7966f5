// The page's parts above its labs: the run's facts and counts, the summary table with a row per
// lab, the load labs side by side, the comparison tables.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/comparison_table.h"
#include "report/html/html_sections.h"
#include "report/idem_facts.h"
#include "report/text/load_table.h"

namespace relab::html {

void write_page_head(const RunReport& run, std::ostream& out) {
    const LabCounts n = count_labs(run);
    out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        << "<title>relab report</title>\n<style>" << page_css() << "</style>\n</head>\n<body>\n";
    out << "<header>\n<h1>relab report</h1>\n";
    std::vector<std::string> facts;
    if (!run.started_at.empty()) facts.push_back("started " + esc(run.started_at));
    if (!run.relab_commit.empty()) facts.push_back("relab <code>" + esc(run.relab_commit) + "</code>");
    if (!run.servers.redis_version.empty())
        facts.push_back("Redis " + esc(run.servers.redis_version) + (run.servers.redis_external ? " (external)" : ""));
    if (!run.servers.pg_version.empty())
        facts.push_back("PostgreSQL " + esc(run.servers.pg_version) + (run.servers.pg_external ? " (external)" : ""));
    facts.push_back(fmt::format("seed {}", run.seed));
    out << "<p class=\"run\">" << fmt::format("{}", fmt::join(facts, " · ")) << "</p>\n";
    // A count of zero is not news: its badge is grey whatever it counts.
    auto total = [](const char* what, int k) {
        return fmt::format(R"(<span class="badge {}">{} {}</span>)", k == 0 ? "zero" : what, k, what);
    };
    out << fmt::format("<p class=\"totals\">{} lab{}: {} {} {}</p>\n</header>\n", n.labs, n.labs == 1 ? "" : "s",
                       total("held", n.held), total("broken", n.broken), total("skipped", n.skipped));
}

void write_summary_table(const RunReport& run, std::ostream& out) {
    out << "<table class=\"summary\">\n<thead><tr><th>lab</th><th>backend</th><th>title</th><th>" << esc(k_documented_header)
        << "</th>"
        << "<th>measured (wrong/trials)</th><th>expectation</th><th>result</th></tr></thead>\n<tbody>\n";
    for (const auto& lab : run.labs) {
        const Scenario& s = lab.scenario;
        const std::string documented = documented_text(s.documented);
        std::string measured = lab.skipped ? "—" : esc(measured_text(lab));
        if (!lab.skipped && is_sim(lab)) measured += "<small>" + esc(wrong_rate_text(lab)) + "</small>";
        if (is_idem_workload(lab)) measured += "<small>" + esc(idem_counts_brief(idem_total(lab))) + "</small>";
        out << fmt::format(
            "<tr class=\"{}\"><td><a href=\"#{}\"><code>{}</code></a></td><td>{}</td><td>{}</td><td>{}</td><td "
            "class=\"num\">{}</td><td>{}</td><td>{}</td></tr>\n",
            verdict_text(verdict_of(lab)), anchor(lab), esc(s.id), backend_tag(lab), esc(s.title),
            documented.empty() ? "—" : esc(documented), measured, esc(s.expect.describe()),
            badge(verdict_of(lab)) + (lab.verdict_note.empty() ? "" : " <small class=\"verdict-note\">⚠ see note</small>"));
    }
    out << "</tbody>\n</table>\n";
}

// The load labs side by side: the per-strategy table and its two plots.
void write_load_section(const RunReport& run, std::ostream& out) {
    const std::vector<LoadRow> rows = load_rows(run.labs);
    if (rows.empty()) return;
    out << "<section class=\"load\" id=\"load\">\n<h2>Load, per strategy</h2>\n"
        << "<p class=\"why\">Trial 1 of each load lab. Latency is XADD → applied; busy is the share of the run "
           "its consumers (or S3's workers) spent between receiving a job and writing it; HOL is the longest "
           "an event of another order, published while the slow job ran, waited for its own job to start.</p>\n";
    out << "<table class=\"counts\"><thead><tr><th>strategy</th><th>orders</th><th>wrong orders</th><th>lost</th>"
           "<th>duplicated</th><th>redelivered</th><th>stale overwrites</th><th>events/s</th><th>p50 ms</th>"
           "<th>p99 ms</th><th>max ms</th><th>busy %</th><th>HOL ms</th><th>largest role MB</th><th>verdict</th>"
           "</tr></thead>\n<tbody>\n";
    for (const auto& r : rows) {
        const LoadStats& l = r.load;
        auto cell = [](int64_t v) { return fmt::format("<td{}>{}</td>", v > 0 ? " class=\"bad\"" : "", v); };
        out << fmt::format("<tr><th><a href=\"#lab-{}\"><code>{}</code></a></th><td>{}</td>", esc(r.id), esc(r.id), r.orders)
            << cell(l.wrong_orders) << cell(r.accounting.lost) << cell(r.accounting.duplicated)
            << cell(r.accounting.redelivered) << cell(r.accounting.stale_overwrites)
            << fmt::format("<td>{:.0f}</td><td>{:.1f}</td><td>{:.1f}</td><td>{:.1f}</td><td>{:.0f}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                           l.events_per_s, l.latency_p50_us / 1000.0, l.latency_p99_us / 1000.0,
                           l.latency_max_us / 1000.0, l.utilisation_pct,
                           l.hol_ms >= 0 ? std::to_string(l.hol_ms) : std::string("—"),
                           r.role_peak_rss_kb ? fmt::format("{:.1f}", r.role_peak_rss_kb / 1024.0) : std::string("—"),
                           esc(r.verdict));
    }
    out << "</tbody></table>\n<div class=\"load-plots\">" << load_throughput_svg(rows) << "\n"
        << load_p99_svg(rows) << "</div>\n</section>\n";
}

// Labs compared in one table (e.g. S4a by language): wrong/trials with 95% intervals.
void write_comparisons(const RunReport& run, std::ostream& out) {
    for (const ComparisonTable& c : comparison_tables(run.labs)) {
        out << fmt::format("<section class=\"comparison\" id=\"comparison-{}\">\n<h2>Comparison: {}</h2>\n", esc(c.name), esc(c.name))
            << "<table class=\"counts comparison\"><thead><tr><th>row</th><th>lab</th><th>wrong/trials</th><th>rate</th>"
               "<th>95% interval</th></tr></thead>\n<tbody>\n";
        for (const auto& r : c.rows) {
            const std::string lab = r.lab.empty() ? std::string(k_article_row_source)
                                                  : fmt::format("<a href=\"#lab-{0}\"><code>{0}</code></a> ({1})", esc(r.lab), esc(r.backend));
            out << fmt::format("<tr><th>{}</th><td>{}</td><td>{}/{}</td><td>{:.0f}%</td><td>{:.0f}–{:.0f}%</td></tr>\n",
                               esc(r.label), lab, r.wrong, r.trials, 100 * r.rate, 100 * r.low, 100 * r.high);
        }
        out << "</tbody></table>\n</section>\n";
    }
}

}  // namespace relab::html
