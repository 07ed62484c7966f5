#include "report/text/load_table.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "report/lab_summary.h"

namespace relab {

namespace {

std::string strategy_name(const std::string& id) { return id.rfind("load-", 0) == 0 ? id.substr(5) : id; }

std::string xml_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '&': out += "&amp;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

// A horizontal bar chart: one bar per row, its value printed at the bar's end.
std::string bar_chart(const std::vector<LoadRow>& rows, const std::string& title, const std::string& unit,
                      const std::function<double(const LoadRow&)>& value, const std::string& colour) {
    const int label_w = 150, bar_w = 420, row_h = 22, top = 28;
    const int width = label_w + bar_w + 110;
    const int height = top + row_h * static_cast<int>(rows.size()) + 8;
    double max = 0;
    for (const auto& r : rows) max = std::max(max, value(r));
    if (max <= 0) max = 1;
    std::string out = fmt::format(
        R"(<svg class="load-plot" xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" role="img" aria-label="{2}">)",
        width, height, xml_escape(title));
    out += fmt::format(R"(<text x="0" y="16" font-size="13" font-weight="bold">{}</text>)", xml_escape(title));
    for (size_t i = 0; i < rows.size(); ++i) {
        const double v = value(rows[i]);
        const int y = top + row_h * static_cast<int>(i);
        const double w = std::max(1.0, bar_w * v / max);
        out += fmt::format(R"(<text x="{}" y="{}" font-size="12" text-anchor="end">{}</text>)", label_w - 8, y + 15,
                           xml_escape(strategy_name(rows[i].id)));
        out += fmt::format(R"(<rect x="{}" y="{}" width="{:.1f}" height="{}" fill="{}"><title>{}: {:.1f} {}</title></rect>)",
                           label_w, y + 3, w, row_h - 6, colour, xml_escape(rows[i].id), v, xml_escape(unit));
        out += fmt::format(R"(<text x="{:.1f}" y="{}" font-size="11">{:.1f} {}</text>)", label_w + w + 6, y + 15, v,
                           xml_escape(unit));
    }
    out += "</svg>";
    return out;
}

}  // namespace

std::vector<LoadRow> load_rows(const std::vector<LabResult>& labs) {
    std::vector<LoadRow> rows;
    for (const auto& lab : labs) {
        const StreamLab* flow = lab.scenario.flow_if();
        if (!flow || !flow->load.enabled || lab.skipped || lab.trials.empty()) continue;
        LoadRow r;
        r.id = lab.scenario.id;
        if (!lab.scenario.mutant.empty()) r.id += "/" + lab.scenario.mutant;
        r.title = lab.scenario.title;
        r.verdict = verdict_text(verdict_of(lab));
        r.orders = static_cast<int64_t>(flow->orders.size());
        r.load = lab.trials.front().load;
        r.accounting = lab.trials.front().accounting;
        for (const auto& [actor, kb] : lab.trials.front().role_peak_rss_kb) r.role_peak_rss_kb = std::max(r.role_peak_rss_kb, kb);
        rows.push_back(std::move(r));
    }
    return rows;
}

void write_load_table(const std::vector<LoadRow>& rows, std::ostream& out) {
    out << "Load, per strategy (trial 1 of each lab; latency is XADD → applied):\n";
    out << fmt::format("  {:<18} {:>7} {:>13} {:>5} {:>5} {:>6} {:>6} {:>9} {:>9} {:>9} {:>9} {:>6} {:>8} {:>7}  {}\n",
                       "strategy", "orders", "wrong orders", "lost", "dup", "redel", "stale", "events/s", "p50 ms",
                       "p99 ms", "max ms", "busy%", "HOL ms", "role MB", "verdict");
    for (const auto& r : rows) {
        const LoadStats& l = r.load;
        out << fmt::format("  {:<18} {:>7} {:>13} {:>5} {:>5} {:>6} {:>6} {:>9.0f} {:>9.1f} {:>9.1f} {:>9.1f} {:>6.0f} {:>8} {:>7}  {}\n",
                           strategy_name(r.id), r.orders,
                           fmt::format("{} ({:.1f}%)", l.wrong_orders,
                                       r.orders ? 100.0 * static_cast<double>(l.wrong_orders) / static_cast<double>(r.orders) : 0.0),
                           r.accounting.lost, r.accounting.duplicated, r.accounting.redelivered, r.accounting.stale_overwrites,
                           l.events_per_s, l.latency_p50_us / 1000.0, l.latency_p99_us / 1000.0, l.latency_max_us / 1000.0,
                           l.utilisation_pct, l.hol_ms >= 0 ? std::to_string(l.hol_ms) : std::string("-"),
                           r.role_peak_rss_kb ? fmt::format("{:.1f}", r.role_peak_rss_kb / 1024.0) : std::string("-"),
                           r.verdict);
    }
}

nlohmann::json load_table_json(const std::vector<LoadRow>& rows) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows) {
        // The load figures described as the table's columns (tabled()), as the JSON report writes
        // them, beside the row's own columns.
        nlohmann::json row = desc::write_table_row(r.load);
        row.update({{"id", r.id},
                    {"strategy", strategy_name(r.id)},
                    {"verdict", r.verdict},
                    {"orders", r.orders},
                    {"lost", r.accounting.lost},
                    {"duplicated", r.accounting.duplicated},
                    {"redelivered", r.accounting.redelivered},
                    {"stale_overwrites", r.accounting.stale_overwrites},
                    {"role_peak_rss_kb", r.role_peak_rss_kb}});
        out.push_back(std::move(row));
    }
    return out;
}

std::string load_throughput_svg(const std::vector<LoadRow>& rows) {
    return bar_chart(rows, "Throughput per strategy (events applied per second)", "events/s",
                     [](const LoadRow& r) { return r.load.events_per_s; }, "#2f6f9f");
}

std::string load_p99_svg(const std::vector<LoadRow>& rows) {
    return bar_chart(rows, "p99 latency per strategy, XADD → applied", "ms",
                     [](const LoadRow& r) { return r.load.latency_p99_us / 1000.0; }, "#b5542c");
}

}  // namespace relab
