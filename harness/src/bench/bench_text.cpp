#include "bench/bench_text.h"

#include <algorithm>

#include <fmt/format.h>

namespace relab {

namespace {

// Column width in characters as a terminal shows them: UTF-8 continuation bytes take no column.
size_t columns(const std::string& s) {
    return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string pad(const std::string& s, size_t width) {
    const size_t w = columns(s);
    return w >= width ? s : s + std::string(width - w, ' ');
}

std::string rows_to_text(const std::vector<std::vector<std::string>>& rows) {
    std::vector<size_t> width;
    for (const auto& r : rows)
        for (size_t i = 0; i < r.size(); ++i) {
            if (width.size() <= i) width.push_back(0);
            width[i] = std::max(width[i], columns(r[i]));
        }
    std::string out;
    for (const auto& r : rows) {
        std::string line;
        for (size_t i = 0; i < r.size(); ++i) line += (i ? "  " : "") + (i + 1 < r.size() ? pad(r[i], width[i]) : r[i]);
        out += line + "\n";
    }
    return out;
}

std::string ratio_text(const std::optional<double>& r) { return r ? fmt::format("{:.2f}×", *r) : "-"; }

}  // namespace

std::string target_text(const BenchFigure& f) {
    if (!f.target) return "-";
    const char* sign = f.target_kind == TargetKind::at_most ? "≤" : "≥";
    if (f.target_of == "items_per_second") return fmt::format("{} {:.0f} /s", sign, *f.target);
    return fmt::format("{} {:.2g}×", sign, *f.target);
}

std::string bench_table(const std::vector<BenchFigure>& figures) {
    std::vector<std::vector<std::string>> rows = {{"name", "iterations", "ratio", "target", "met", "figures"}};
    for (const auto& f : figures) {
        const std::optional<bool> met = f.met();
        rows.push_back({f.name, std::to_string(f.iterations), ratio_text(f.ratio), target_text(f),
                        met ? (*met ? "yes" : "NO") : "-", f.label});
    }
    std::string out = rows_to_text(rows);
    bool any = false;
    for (const auto& f : figures) {
        if (f.measured.empty()) continue;
        if (!any) out += "\nWhat each figure measured:\n";
        any = true;
        out += fmt::format("  {}: {}{}\n", f.name, f.measured, f.ratio_of.empty() ? "" : " Ratio = " + f.ratio_of + ".");
    }
    return out;
}

std::string compare_table(const BenchComparison& c) {
    std::vector<std::vector<std::string>> rows = {{"name", "old", "new", "change", "old ratio", "new ratio"}};
    for (const auto& ch : c.both)
        rows.push_back({ch.name, fmt::format("{:.3f} {}", ch.old_time, ch.time_unit),
                        fmt::format("{:.3f} {}", ch.new_time, ch.time_unit),
                        ch.change_pct ? fmt::format("{:+.1f}%", *ch.change_pct) : "-", ratio_text(ch.old_ratio),
                        ratio_text(ch.new_ratio)});
    std::string out = rows_to_text(rows);
    out += "(times are per iteration: a negative change is faster)\n";
    for (const auto& n : c.only_old) out += "only in the old file: " + n + "\n";
    for (const auto& n : c.only_new) out += "only in the new run: " + n + "\n";
    return out;
}

}  // namespace relab
