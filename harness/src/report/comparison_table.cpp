#include "report/comparison_table.h"

#include <algorithm>
#include <cassert>

#include <fmt/format.h>

#include "check/wrong_rate.h"

namespace relab {

namespace {

ComparisonRow rate_row(std::string label, int wrong, int trials) {
    assert(wrong >= 0 && wrong <= trials);
    ComparisonRow row;
    row.label = std::move(label);
    row.wrong = wrong;
    row.trials = trials;
    const RateInterval r = wilson_interval(wrong, trials);
    row.rate = r.rate;
    row.low = r.low;
    row.high = r.high;
    return row;
}

// wrong/trials over the planned trials when the lab kept them all, else the lab's own counts.
ComparisonRow lab_row(const LabResult& lab) {
    const auto planned = static_cast<size_t>(std::max(lab.planned_trials, 0));
    int wrong = lab.wrong;
    int trials = lab.total;
    if (planned > 0 && lab.trials.size() >= planned) {
        wrong = static_cast<int>(std::count_if(lab.trials.begin(), lab.trials.begin() + static_cast<std::ptrdiff_t>(planned),
                                               [](const TrialOutcome& t) { return t.wrong; }));
        trials = static_cast<int>(planned);
    }
    ComparisonRow row = rate_row(lab.scenario.compare->row, wrong, trials);
    row.lab = lab.scenario.id;
    row.backend = lab.backend;
    return row;
}

std::string percent(double x) { return fmt::format("{:.0f}%", 100.0 * x); }

}  // namespace

std::vector<ComparisonTable> comparison_tables(const std::vector<LabResult>& labs) {
    std::vector<ComparisonTable> tables;
    for (const auto& lab : labs) {
        const auto& c = lab.scenario.compare;
        if (!c || lab.skipped || !lab.scenario.mutant.empty() || lab.total == 0) continue;
        auto it = std::find_if(tables.begin(), tables.end(), [&](const ComparisonTable& t) { return t.name == c->table; });
        if (it == tables.end()) it = tables.insert(tables.end(), ComparisonTable{c->table, {}});
        const bool has_article = !it->rows.empty() && it->rows.front().lab.empty();
        if (c->article && !has_article) it->rows.insert(it->rows.begin(), rate_row(c->article->row, c->article->wrong, c->article->of));
        it->rows.push_back(lab_row(lab));
    }
    std::erase_if(tables, [](const ComparisonTable& t) { return t.rows.size() < 2; });
    return tables;
}

void write_comparison_table(const ComparisonTable& table, std::ostream& out) {
    size_t width = 4;
    for (const auto& r : table.rows) width = std::max(width, r.label.size());
    out << fmt::format("Comparison {}: wrong / trials, 95% Wilson interval\n", table.name);
    out << fmt::format("  {:<{}}  {:>13}  {:>5}  {:>11}  {}\n", "row", width, "wrong/trials", "rate", "95% interval", "lab");
    for (const auto& r : table.rows) {
        const std::string lab = r.lab.empty() ? "(" + std::string(k_article_row_source) + ")" : r.lab + " (" + r.backend + ")";
        out << fmt::format("  {:<{}}  {:>13}  {:>5}  {:>11}  {}\n", r.label, width, fmt::format("{}/{}", r.wrong, r.trials),
                           percent(r.rate), percent(r.low) + "–" + percent(r.high), lab);
    }
}

nlohmann::json comparison_table_json(const ComparisonTable& table) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : table.rows)
        rows.push_back({{"row", r.label}, {"lab", r.lab}, {"backend", r.backend}, {"wrong", r.wrong},
                        {"trials", r.trials}, {"rate", r.rate}, {"low", r.low}, {"high", r.high}});
    return {{"table", table.name}, {"rows", rows}};
}

std::string beside_throughput_text(const LabResult& lab) {
    if (!lab.beside_throughput || lab.beside_throughput->per_s <= 0 || lab.throughput.trials == 0) return "";
    const ThroughputStats& b = *lab.beside_throughput;
    return fmt::format("throughput {:.2f} jobs/s (median of {} trial(s)); beside it, {} on the same workload in the "
                       "same run: {:.2f} jobs/s (median of {} trial(s)); this lab's is {:.2f}x it",
                       lab.throughput.per_s, lab.throughput.trials, lab.beside_name, b.per_s, b.trials,
                       lab.throughput.per_s / b.per_s);
}

}  // namespace relab
