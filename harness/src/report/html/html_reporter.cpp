// index.html: the run as a page to look at. One self-contained file (inline CSS and SVG, no
// script, nothing fetched): a summary table, then per lab the documented result beside the
// measured one, the final status of every trial, a swimlane timeline of the selected trials
// (every case of a session lab) and the lab's text report.
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "ports/seed_text.h"
#include "report/comparison_table.h"
#include "report/article_words.h"
#include "report/idem_facts.h"
#include "report/text/idem_text.h"
#include "report/lab_summary.h"
#include "report/text/load_table.h"
#include "report/text/redis_transcript.h"
#include "report/shard_facts.h"
#include "report/reporter.h"
#include "report/text/timeline.h"

namespace relab {

namespace {

std::string esc(std::string_view text) { return markup_escape(text); }

constexpr const char* k_css = R"(
:root { --ink:#1d2330; --muted:#5b6474; --line:#d8dce3; --held:#1a7f37; --broken:#c62828; --skipped:#6e7781;
        --job:#3b78c4; --wait:#c98a12; --bad:#d62728; }
* { box-sizing: border-box; }
body { font: 14px/1.45 "DejaVu Sans", system-ui, sans-serif; color: var(--ink); margin: 0 auto; padding: 16px 24px 48px;
       max-width: 1240px; background: #fff; }
h1 { font-size: 24px; margin: 8px 0 4px; }
h2 { font-size: 18px; margin: 0 0 10px; }
h3 { font-size: 13px; margin: 0 0 4px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
code { font: 12.5px "DejaVu Sans Mono", monospace; }
.run { color: var(--muted); margin: 0 0 8px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff; font-size: 12px; font-weight: bold;
         vertical-align: 2px; }
.badge.held { background: var(--held); } .badge.broken { background: var(--broken); } .badge.skipped { background: var(--skipped); }
.badge.zero { background: #afb8c1; }
table.summary { border-collapse: collapse; width: 100%; margin: 12px 0 16px; }
table.summary th, table.summary td { border-bottom: 1px solid var(--line); padding: 5px 8px; text-align: left; vertical-align: top; }
table.summary th { font-size: 12px; color: var(--muted); }
table.summary td.num { white-space: nowrap; font-weight: bold; }
table.summary td:first-child { white-space: nowrap; }
section.load { margin: 18px 0; } section.load table.counts { margin-bottom: 10px; }
.load-plots svg { display: block; margin: 8px 0; max-width: 100%; height: auto; }
section.lab { border: 1px solid var(--line); border-left: 6px solid var(--held); border-radius: 6px; padding: 14px 18px;
              margin: 18px 0; }
section.lab.broken { border-left-color: var(--broken); } section.lab.skipped { border-left-color: var(--skipped); }
.dvm { display: flex; gap: 16px; margin: 8px 0; }
.dvm > div { flex: 1; background: #f6f8fa; border-radius: 6px; padding: 8px 12px; }
.dvm .count { font-size: 22px; font-weight: bold; margin: 0; }
.dvm p { margin: 2px 0; }
.dvm .figure { font-weight: bold; }
blockquote.article { margin: 6px 0; padding: 2px 10px; border-left: 3px solid #8c959f; background: #fff; }
blockquote.article footer { font-size: 12px; color: var(--muted); }
p.relab .who { font-size: 12px; color: var(--muted); }
.expectation { margin: 6px 0; }
ul.failures { color: var(--broken); margin: 4px 0; }
.finals { margin: 10px 0; }
.chip { display: inline-block; border: 1px solid var(--line); border-radius: 4px; padding: 0 6px; margin: 2px 2px 0 0;
        font: 12px "DejaVu Sans Mono", monospace; background: #f0f7f1; }
.chip.wrong { background: #fdecea; border-color: #f3b4ae; color: var(--broken); font-weight: bold; }
.chip b { color: var(--muted); font-weight: normal; }
figure.timeline { margin: 12px 0; }
figure.timeline figcaption { font-size: 13px; margin-bottom: 4px; }
svg.timeline { max-width: 100%; height: auto; display: block; border: 1px solid var(--line); border-radius: 4px; }
svg text { font-family: "DejaVu Sans", sans-serif; }
svg .lane-name { font-size: 12px; font-weight: bold; fill: var(--ink); }
svg .bar-label { font-size: 10.5px; fill: #fff; pointer-events: none; }
svg .bar.wait + .bar-label, svg .bar-label.dark { fill: #5a3d00; }
svg .marker-label { font-size: 10.5px; fill: var(--ink); }
svg .marker-label.bad { fill: var(--bad); font-weight: bold; }
svg .marker-label.other { fill: var(--muted); font-size: 9.5px; }
svg .tick { font-size: 10px; fill: var(--muted); }
svg .fault-label { font-size: 10.5px; font-weight: bold; }
pre { background: #f6f8fa; border-radius: 6px; padding: 10px 12px; overflow-x: auto; font: 12px/1.4 "DejaVu Sans Mono", monospace; }
details summary { cursor: pointer; color: var(--muted); }
.legend { color: var(--muted); font-size: 12px; }
.legend svg { vertical-align: middle; }
.skip { color: var(--skipped); font-weight: bold; }
.verdict-note { color: #8a4b00; background: #fff4e0; border: 1px solid #e0a526; border-radius: 4px; padding: 4px 8px; }
small.verdict-note { padding: 0 4px; white-space: nowrap; }
.backend { display: inline-block; padding: 0 6px; border: 1px solid var(--line); border-radius: 4px; color: var(--muted);
           font: 11px "DejaVu Sans Mono", monospace; vertical-align: 3px; }
.backend.sim { background: #eef3fb; border-color: #b9cbe6; color: #1f4f8f; }
td .backend { vertical-align: 0; }
table.summary small { display: block; font-weight: normal; color: var(--muted); }
.rate { margin: 6px 0 2px; }
svg.ci { display: block; margin: 2px 0 4px; }
.seeds { margin: 8px 0; }
.seeds ul { margin: 4px 0; padding-left: 20px; }
code.cmd { background: #f0f2f5; border-radius: 3px; padding: 1px 5px; }
.tally { margin: 4px 0; }
table.counts { border-collapse: collapse; margin: 8px 0; }
table.counts th, table.counts td { border: 1px solid var(--line); padding: 3px 10px; text-align: right; }
table.counts thead th { font-size: 12px; color: var(--muted); font-weight: normal; }
table.counts tbody th { text-align: left; font-weight: normal; color: var(--muted); white-space: nowrap; }
table.counts tr.total td, table.counts tr.total th { font-weight: bold; color: var(--ink); }
table.counts td.bad { background: #fdecea; color: var(--broken); font-weight: bold; }
table.accounting td:last-child { text-align: left; }
ul.leaks { color: var(--broken); margin: 4px 0; }
table.figures, table.steps { border-collapse: collapse; width: 100%; margin: 6px 0 12px; }
table.figures th, table.figures td, table.steps th, table.steps td { border-bottom: 1px solid var(--line); padding: 4px 8px;
    text-align: left; vertical-align: top; }
table.figures th, table.steps th { font-size: 12px; color: var(--muted); font-weight: normal; }
table.figures td.measured { font-weight: bold; white-space: nowrap; }
table.figures td.why, table.steps tr.note td { color: var(--muted); font-size: 12.5px; }
table.steps code { overflow-wrap: anywhere; }
table.steps td.reply, table.steps td.expected { min-width: 13em; }
table.steps td.t { white-space: nowrap; color: var(--muted); }
table.steps tr.fail td { background: #fdecea; }
table.steps td.verdict { white-space: nowrap; font-weight: bold; color: var(--held); }
table.steps tr.fail td.verdict { color: var(--broken); }
.scaling { color: var(--muted); margin: 4px 0; }
)";

// Geometry of a timeline, in SVG user units (= CSS px at 100 %).
constexpr double k_width = 1160;
constexpr double k_gutter = 96;   // lane names
constexpr double k_right = 28;
constexpr double k_lane_h = 50;
constexpr double k_top = 6;
constexpr double k_axis_h = 26;
constexpr double k_fault_band_h = 16;  // above the lanes, for the faults' labels
constexpr double k_bar_h = 16;
// A lane with more requests than this, or two requests closer than this, draws only the markers
// that flag something.
constexpr size_t k_dense_requests = 12;
constexpr double k_dense_gap_px = 12;

// A "nice" tick step (1, 2 or 5 × 10^k ms) giving at most about ten ticks over `span_ms`.
double tick_step_ms(double span_ms) {
    if (span_ms <= 0) return 1;
    const double raw = span_ms / 10;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    for (const double m : {1.0, 2.0, 5.0, 10.0})
        if (m * mag >= raw) return m * mag;
    return 10 * mag;
}

std::string num(double v) { return fmt::format("{:.1f}", v); }

size_t code_points(const std::string& s) {
    return static_cast<size_t>(
        std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// A request's bar: what its answer was, red when it made a duplicate order or leaked another
// user's order.
const char* request_colour(const TimelineBar& bar) {
    if (bar.duplicate || bar.leak) return "#d62728";
    if (bar.unfinished) return "#9aa3b0";
    if (bar.source == "replay") return "#2e8b3e";
    if (bar.source == "layer4") return "#138d90";
    if (bar.code == 201 || bar.source == "created") return "#3b78c4";
    if (bar.code == 409) return "#c98a12";
    if (bar.code == 422) return "#8e44ad";
    if (bar.code >= 500) return "#6e7781";
    return "#6a7fd0";
}

class SvgTimeline {
public:
    SvgTimeline(const Timeline& tl, int id) : m_tl(tl), m_id(id) {
        const double start_ms = static_cast<double>(tl.start_ns) / 1e6;
        const double end_ms = std::max(static_cast<double>(tl.end_ns) / 1e6, start_ms + 1);
        m_step_ms = tick_step_ms(end_ms - start_ms);
        m_t0_ms = std::floor(start_ms / m_step_ms) * m_step_ms;
        m_t1_ms = std::ceil(end_ms / m_step_ms) * m_step_ms;
        if (m_t1_ms <= m_t0_ms) m_t1_ms = m_t0_ms + m_step_ms;
        for (size_t i = 0; i < tl.lanes.size(); ++i) m_lane_index[tl.lanes[i]] = i;
        // Faults get a band above the lanes for their labels.
        m_top = k_top + (tl.faults.empty() ? 0 : k_fault_band_h);
    }

    void write(std::ostream& out, const std::string& aria) const {
        const double height = m_top + static_cast<double>(m_tl.lanes.size()) * k_lane_h + k_axis_h;
        out << fmt::format(R"(<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}" role="img" aria-label="{}">)",
                           num(k_width), num(height), num(k_width), num(height), esc(aria))
            << '\n';
        out << fmt::format(R"~(<defs><pattern id="hatch-{}" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fdf3dc"/><rect width="2.5" height="6" fill="#e0a526"/></pattern></defs>)~",
                           m_id)
            << '\n';
        write_grid(out, height);
        for (size_t i = 0; i < m_tl.lanes.size(); ++i) write_lane(out, i);
        write_faults(out, height - k_axis_h);
        out << "</svg>\n";
    }

private:
    double x(int64_t t_ns) const {
        const double ms = static_cast<double>(t_ns) / 1e6;
        return k_gutter + (ms - m_t0_ms) / (m_t1_ms - m_t0_ms) * (k_width - k_gutter - k_right);
    }
    double lane_mid(const std::string& lane) const {
        const auto it = m_lane_index.find(lane);
        const size_t i = it == m_lane_index.end() ? 0 : it->second;
        return m_top + (static_cast<double>(i) + 0.5) * k_lane_h;
    }

    void write_grid(std::ostream& out, double height) const {
        const double axis_y = height - k_axis_h;
        out << "<g class=\"axis\">\n";
        const int ticks = static_cast<int>(std::lround((m_t1_ms - m_t0_ms) / m_step_ms));
        for (int i = 0; i <= ticks; ++i) {
            const double ms = m_t0_ms + i * m_step_ms;
            const double tx = x(static_cast<int64_t>(std::llround(ms * 1e6)));
            out << fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#e3e6eb"/>)", num(tx), num(m_top),
                               num(axis_y));
            out << fmt::format(R"(<text class="tick" x="{}" y="{}" text-anchor="middle">{:g} ms</text>)", num(tx),
                               num(axis_y + 16), ms)
                << '\n';
        }
        out << fmt::format(R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#9aa3b0"/>)", num(k_gutter), num(axis_y),
                           num(k_width - k_right))
            << "\n</g>\n";
    }

    void write_lane(std::ostream& out, size_t index) const {
        const std::string& lane = m_tl.lanes[index];
        const double top = m_top + static_cast<double>(index) * k_lane_h;
        const double mid = top + k_lane_h / 2;
        out << fmt::format(R"(<g class="lane" data-lane="{}">)", esc(lane)) << '\n';
        out << fmt::format(R"(<rect class="lane-bg" x="0" y="{}" width="{}" height="{}" fill="{}"/>)", num(top),
                           num(k_width), num(k_lane_h), index % 2 ? "#ffffff" : "#f5f7fa");
        out << fmt::format(R"(<text class="lane-name" x="10" y="{}">{}</text>)", num(mid + 4), esc(lane)) << '\n';
        for (const auto& bar : m_tl.bars)
            if (bar.lane == lane) write_bar(out, bar, mid);
        // A client sending many requests, or requests close together (the peak-hour lab): its bars,
        // coloured by the answer, say it all; of its markers only the ones that flag something (a
        // duplicate, a leak) are kept.
        std::vector<double> starts;
        for (const auto& b : m_tl.bars)
            if (b.lane == lane && b.kind == TimelineBar::Kind::request) starts.push_back(x(b.start_ns));
        std::sort(starts.begin(), starts.end());
        bool dense = starts.size() > k_dense_requests;
        for (size_t i = 1; i < starts.size(); ++i) dense = dense || starts[i] - starts[i - 1] < k_dense_gap_px;
        std::vector<const TimelineMarker*> markers;
        for (const auto& m : m_tl.markers) {
            if (m.lane != lane) continue;
            const bool client_step = m.kind == TimelineMarker::Kind::send || m.kind == TimelineMarker::Kind::answer ||
                                     m.kind == TimelineMarker::Kind::order || m.kind == TimelineMarker::Kind::minor;
            if (dense && client_step && !m.bad) continue;
            markers.push_back(&m);
        }
        const std::vector<int> rows = place_labels(markers);
        for (size_t i = 0; i < markers.size(); ++i) write_marker(out, *markers[i], mid, rows[i]);
        out << "</g>\n";
    }

    // The nemesis's faults, over every lane: a dashed line at the invocation, the span until its
    // ok (or fail) shaded, a solid line at its end, the label in the band above the lanes. A
    // label that would overlap the previous one is left to the tooltip.
    void write_faults(std::ostream& out, double axis_y) const {
        double taken_until = -1e9;
        for (const auto& f : m_tl.faults) {
            const double x0 = x(f.start_ns), x1 = x(f.end_ns);
            const char* colour = f.failed ? "#a50f15" : "#e8590c";
            out << fmt::format(R"(<g class="fault{}" data-fault="{}"><title>{}</title>)", f.failed ? " failed" : "",
                               esc(f.index), esc(f.detail));
            if (x1 > x0)
                out << fmt::format(R"(<rect class="fault-span" x="{}" y="{}" width="{}" height="{}" fill="{}" fill-opacity="0.12"/>)",
                                   num(x0), num(m_top), num(x1 - x0), num(axis_y - m_top), colour);
            out << fmt::format(R"(<line class="fault-start" x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="{3}" stroke-width="1.5" stroke-dasharray="5 3"/>)",
                               num(x0), num(k_top), num(axis_y), colour);
            if (f.ended && x1 > x0)
                out << fmt::format(R"(<line class="fault-end" x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="{3}" stroke-width="1"/>)",
                                   num(x1), num(m_top), num(axis_y), colour);
            const double w = static_cast<double>(code_points(f.label)) * 6.3;
            if (x0 + 3 > taken_until) {
                const bool right_edge = x0 + 3 + w > k_width - 4;
                out << fmt::format(R"(<text class="fault-label" x="{}" y="{}" text-anchor="{}" fill="{}">{}</text>)",
                                   num(right_edge ? x0 - 3 : x0 + 3), num(k_top + 11), right_edge ? "end" : "start",
                                   colour, esc(f.label));
                taken_until = right_edge ? x0 + 6 : x0 + 3 + w + 6;
            }
            out << "</g>\n";
        }
    }

    // The horizontal extent of a marker's text: its label, or for an `other` marker the op.
    std::pair<double, double> label_extent(const TimelineMarker& m) const {
        const double cx = x(m.t_ns);
        if (m.label.empty()) {
            const double w = static_cast<double>(code_points(m.op)) * 5.8;
            return {cx - w / 2, cx + w / 2};
        }
        const double w = static_cast<double>(code_points(m.label)) * 6.3;
        if (label_ends_at_marker(m)) return {cx + 4 - w, cx + 4};
        return {cx - 4, cx - 4 + w};
    }

    bool label_ends_at_marker(const TimelineMarker& m) const {
        return x(m.t_ns) - 4 + static_cast<double>(code_points(m.label)) * 6.3 > k_width - 4;
    }

    // Where each marker's text goes: 0 above the bars, 1 below them, -1 nowhere (its tooltip still
    // says it). Labels that flag something wrong are placed first, captions of unknown ops last;
    // a text never overlaps another in its row.
    static constexpr int k_no_label = -1;
    std::vector<int> place_labels(const std::vector<const TimelineMarker*>& markers) const {
        std::vector<int> rows(markers.size(), k_no_label);
        std::vector<std::pair<double, double>> taken[2];
        auto fits = [&](int row, std::pair<double, double> e) {
            for (const auto& t : taken[row])
                if (e.first < t.second + 6 && t.first < e.second + 6) return false;
            return true;
        };
        for (int pass = 0; pass < 3; ++pass)
            for (size_t i = 0; i < markers.size(); ++i) {
                const TimelineMarker& m = *markers[i];
                const bool other_caption = m.label.empty() && m.kind == TimelineMarker::Kind::other;
                const int want =
                    m.label.empty() ? (other_caption ? 2 : -1) : (m.bad || m.kind == TimelineMarker::Kind::fault ? 0 : 1);
                if (want != pass) continue;
                const auto e = label_extent(m);
                for (const int row : other_caption ? std::vector<int>{1} : std::vector<int>{0, 1})
                    if (fits(row, e)) {
                        rows[i] = row;
                        taken[row].push_back(e);
                        break;
                    }
            }
        return rows;
    }

    void write_bar(std::ostream& out, const TimelineBar& bar, double mid) const {
        const double x0 = x(bar.start_ns);
        const double w = std::max(x(bar.end_ns) - x0, 2.0);
        const double y = mid - k_bar_h / 2;
        std::string cls = "bar";
        std::string style;
        switch (bar.kind) {
            case TimelineBar::Kind::job:
                cls += " job";
                style = bar.overwrites ? R"(fill="#d62728")" : R"(fill="#3b78c4")";
                break;
            case TimelineBar::Kind::lock_wait:
                cls += " wait";
                style = fmt::format(R"~(fill="url(#hatch-{})" stroke="#b7791f" stroke-dasharray="4 2")~", m_id);
                break;
            case TimelineBar::Kind::step:
                cls += " step";
                style = bar.failed ? R"(fill="#d62728")" : R"(fill="#6a7fd0")";
                break;
            case TimelineBar::Kind::request:
                cls += " request";
                style = fmt::format(R"(fill="{}")", request_colour(bar));
                if (bar.duplicate) cls += " duplicate";
                if (bar.leak) cls += " leak";
                break;
        }
        if (bar.overwrites) cls += " overwrite";
        if (bar.failed) cls += " failed";
        if (bar.unfinished) {
            cls += " unfinished";
            style += R"( fill-opacity="0.45")";
        }
        const double ms0 = static_cast<double>(bar.start_ns) / 1e6, ms1 = static_cast<double>(bar.end_ns) / 1e6;
        const char* what = bar.kind == TimelineBar::Kind::lock_wait ? "waiting for the lock"
                           : bar.kind == TimelineBar::Kind::step    ? "statement"
                           : bar.kind == TimelineBar::Kind::request ? "request"
                                                                    : "job";
        const char* flag = bar.overwrites ? ", overwrote a newer state"
                           : bar.duplicate ? ", made a duplicate order"
                           : bar.leak      ? ", answered with another user's order"
                                           : "";
        out << fmt::format(R"(<rect class="{}" x="{}" y="{}" width="{}" height="{}" rx="2" {}><title>{} {}: {} ({:.1f}–{:.1f} ms{})</title></rect>)",
                           cls, num(x0), num(y), num(w), num(k_bar_h), style, esc(bar.lane), what, esc(bar.label), ms0,
                           ms1, flag)
            << '\n';
        // The label goes inside the bar when it fits (about 6.3 px per character at this size).
        std::string label = bar.label;
        if (bar.kind == TimelineBar::Kind::step && code_points(label) > 60) {
            // Cut at a character boundary, never inside a UTF-8 sequence.
            size_t cut = 0;
            for (size_t kept = 0; cut < label.size() && kept < 57; ++kept)
                do ++cut;
                while (cut < label.size() && (static_cast<unsigned char>(label[cut]) & 0xC0) == 0x80);
            label = label.substr(0, cut) + "...";
        }
        if (!label.empty() && static_cast<double>(code_points(label)) * 6.3 + 8 <= w)
            out << fmt::format(R"(<text class="bar-label{}" x="{}" y="{}">{}</text>)",
                               bar.kind == TimelineBar::Kind::lock_wait ? " dark" : "", num(x0 + 4), num(mid + 3.8),
                               esc(label))
                << '\n';
    }

    void write_marker(std::ostream& out, const TimelineMarker& m, double mid, int label_row) const {
        const double cx = x(m.t_ns);
        out << marker_shape(m, cx, mid);
        // An `other` marker without a label is captioned with its op.
        if (m.kind == TimelineMarker::Kind::other && label_row != k_no_label && m.label.empty())
            out << fmt::format(R"(<text class="marker-label other" x="{}" y="{}" text-anchor="middle">{}</text>)",
                               num(cx), num(label_y(mid, label_row)), esc(m.op));
        out << '\n';
        if (m.label.empty() || label_row == k_no_label) return;
        // Starts at the marker; when it would run past the right edge it ends there instead.
        const bool right_edge = label_ends_at_marker(m);
        out << fmt::format(R"(<text class="{}" x="{}" y="{}" text-anchor="{}">{}</text>)",
                           m.bad ? "marker-label bad" : "marker-label", num(right_edge ? cx + 4 : cx - 4),
                           num(label_y(mid, label_row)), right_edge ? "end" : "start", esc(m.label))
            << '\n';
    }

    // The marker's shape for its kind, at (cx, mid), the whole record in its tooltip.
    static std::string marker_shape(const TimelineMarker& m, double cx, double mid) {
        const std::string title = "<title>" + esc(m.detail) + "</title>";
        const char* bad = m.bad ? " bad" : "";
        switch (m.kind) {
            case TimelineMarker::Kind::receive:
                return fmt::format(R"(<circle class="marker receive" cx="{}" cy="{}" r="4.5" fill="#ffffff" stroke="#1f4f8f" stroke-width="2">{}</circle>)",
                                   num(cx), num(mid), title);
            case TimelineMarker::Kind::lock_acquire:
                return fmt::format(R"(<rect class="marker lock-acquire" x="{}" y="{}" width="9" height="9" fill="#2e8b3e">{}</rect>)",
                                   num(cx - 4.5), num(mid - 4.5), title);
            case TimelineMarker::Kind::lock_release:
                return fmt::format(R"(<rect class="marker lock-release{}" x="{}" y="{}" width="9" height="9" fill="#ffffff" stroke="{}" stroke-width="2">{}</rect>)",
                                   bad, num(cx - 4.5), num(mid - 4.5), m.bad ? "#d62728" : "#2e8b3e", title);
            case TimelineMarker::Kind::write:
                return diamond(m.bad ? "write overwrite" : "write", cx, mid, m.bad, title);
            case TimelineMarker::Kind::publish:
                if (m.bad)
                    return fmt::format(R"(<path class="marker publish fail" d="M{0},{1} L{2},{3} M{0},{3} L{2},{1}" stroke="#d62728" stroke-width="2.5">{4}</path>)",
                                       num(cx - 5), num(mid - 5), num(cx + 5), num(mid + 5), title);
                return fmt::format(R"(<polygon class="marker publish ok" points="{},{} {},{} {},{}" fill="#2e8b3e">{}</polygon>)",
                                   num(cx - 5.5), num(mid + 5), num(cx + 5.5), num(mid + 5), num(cx), num(mid - 6), title);
            case TimelineMarker::Kind::step_end:
                return fmt::format(R"(<line class="marker step-end{0}" x1="{1}" y1="{2}" x2="{1}" y2="{3}" stroke="{4}" stroke-width="2">{5}</line>)",
                                   bad, num(cx), num(mid - 10), num(mid + 10), m.bad ? "#d62728" : "#1d2330", title);
            case TimelineMarker::Kind::send:
                return fmt::format(R"(<circle class="marker send" cx="{}" cy="{}" r="3.5" fill="#ffffff" stroke="#1d2330" stroke-width="1.5">{}</circle>)",
                                   num(cx), num(mid), title);
            case TimelineMarker::Kind::answer:
                return fmt::format(R"(<circle class="marker answer{}" cx="{}" cy="{}" r="4" fill="{}" stroke="#ffffff">{}</circle>)",
                                   bad, num(cx), num(mid), m.bad ? "#a50f15" : "#1d2330", title);
            case TimelineMarker::Kind::order:
                return diamond(m.bad ? "order duplicate" : "order", cx, mid, m.bad, title);
            case TimelineMarker::Kind::fault:
                return fmt::format(R"(<polygon class="marker fault" data-op="{}" points="{},{} {},{} {},{}" fill="#e8590c">{}</polygon>)",
                                   esc(m.op), num(cx - 6), num(mid - 6), num(cx + 6), num(mid - 6), num(cx), num(mid + 6),
                                   title);
            case TimelineMarker::Kind::minor:
                return fmt::format(R"(<circle class="marker minor" data-op="{}" cx="{}" cy="{}" r="2.5" fill="#8a93a3">{}</circle>)",
                                   esc(m.op), num(cx), num(mid), title);
            case TimelineMarker::Kind::other:
                return fmt::format(R"(<circle class="marker other" data-op="{}" cx="{}" cy="{}" r="3.5" fill="#8a93a3">{}</circle>)",
                                   esc(m.op), num(cx), num(mid), title);
        }
        return {};
    }

    static double label_y(double mid, int row) { return row == 0 ? mid - 12 : mid + 21; }

    // A write's or an order's marker: a diamond, dark red when it flags something.
    static std::string diamond(const char* cls, double cx, double mid, bool bad, const std::string& title) {
        return fmt::format(R"(<polygon class="marker {}" points="{},{} {},{} {},{} {},{}" fill="{}" stroke="#ffffff">{}</polygon>)",
                           cls, num(cx), num(mid - 7), num(cx + 7), num(mid), num(cx), num(mid + 7), num(cx - 7), num(mid),
                           bad ? "#a50f15" : "#1d2330", title);
    }

    const Timeline& m_tl;
    int m_id;
    double m_step_ms = 1, m_t0_ms = 0, m_t1_ms = 1;
    double m_top = k_top;  // where the lanes begin
    std::map<std::string, size_t> m_lane_index;
};

const OrderRow* row_of(const TrialOutcome& t, int64_t id) {
    for (const auto& r : t.final_rows)
        if (r.id == id) return &r;
    return nullptr;
}

std::string stream_text(const TrialOutcome& t, bool several_orders) {
    if (t.stream.empty()) return "(empty)";
    std::string text;
    for (const auto& e : t.stream) {
        if (!text.empty()) text += ", ";
        std::string v = e.field("v");
        if (v.empty()) v = e.field("version");
        text += e.id + " " + (several_orders ? "#" + e.field("order") + " " : "") + e.field("type") + " (v=" + v + ")";
    }
    return text;
}

// Up to this many trials a lab shows every trial's final-status chip; above, a tally of the
// outcomes and the chips (at most k_chips_max) folded away: a simulated lab may have millions.
constexpr size_t k_chips_shown = 100;
constexpr size_t k_chips_max = 1000;
// Per-trial rows of an idempotency lab's counts table.
constexpr size_t k_count_rows = 20;

// The interval of a simulated wrong rate on a 0–100 % scale.
void write_rate_interval(const LabResult& lab, std::ostream& out) {
    constexpr double w = 320, left = 28, right = 40, y = 10;
    auto px = [&](double rate) { return left + rate * (w - left - right); };
    out << fmt::format(R"(<svg class="ci" width="{0}" height="26" viewBox="0 0 {0} 26" role="img" aria-label="wrong rate {1:.1f}%, 95% CI {2:.1f}–{3:.1f}%">)",
                       num(w), 100 * lab.wrong_rate, 100 * lab.wrong_rate_low, 100 * lab.wrong_rate_high);
    out << fmt::format(R"(<line x1="{0}" y1="{2}" x2="{1}" y2="{2}" stroke="#9aa3b0"/>)", num(px(0)), num(px(1)), num(y));
    for (const double tick : {0.0, 0.25, 0.5, 0.75, 1.0})
        out << fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#9aa3b0"/>)", num(px(tick)), num(y - 3),
                           num(y + 3));
    out << fmt::format(R"(<rect class="interval" x="{}" y="{}" width="{}" height="8" fill="#f3b4ae" stroke="#c62828"/>)",
                       num(px(lab.wrong_rate_low)), num(y - 4),
                       num(std::max(px(lab.wrong_rate_high) - px(lab.wrong_rate_low), 1.5)));
    out << fmt::format(R"(<line class="rate" x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#c62828" stroke-width="2.5"/>)",
                       num(px(lab.wrong_rate)), num(y - 7), num(y + 7));
    out << fmt::format(R"(<text class="tick" x="{}" y="24" text-anchor="middle">0%</text><text class="tick" x="{}" y="24" text-anchor="middle">50%</text><text class="tick" x="{}" y="24" text-anchor="middle">100%</text>)",
                       num(px(0)), num(px(0.5)), num(px(1)));
    out << "</svg>";
}

class HtmlReporter : public Reporter {
public:
    explicit HtmlReporter(const HtmlOptions& opts) : m_opts(opts) {}

    void report(const RunReport& run, std::ostream& out) override {
        m_svg_count = 0;
        const LabCounts n = count_labs(run);
        out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            << "<title>relab report</title>\n<style>" << k_css << "</style>\n</head>\n<body>\n";
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
        write_summary_table(run, out);
        write_load_section(run, out);
        write_comparisons(run, out);
        write_legend(out);
        if (std::any_of(run.labs.begin(), run.labs.end(), [](const LabResult& l) { return is_idem_workload(l); }))
            write_idem_legend(out);
        for (const auto& lab : run.labs) write_lab(lab, out);
        out << "</body>\n</html>\n";
    }

private:
    static std::string anchor(const LabResult& lab) { return "lab-" + esc(lab_key(lab)); }

    static std::string badge(Verdict v) {
        return fmt::format(R"(<span class="badge {0}">{0}</span>)", verdict_text(v));
    }

    static std::string backend_tag(const LabResult& lab) {
        const std::string b = backend_of(lab);
        return fmt::format(R"(<span class="backend {0}" title="{1}">{0}</span>)", esc(b),
                           b == "sim" ? "deterministic simulator" : "real redis-server and PostgreSQL");
    }

    void write_summary_table(const RunReport& run, std::ostream& out) const {
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

    // Labs compared in one table (e.g. S4a by language): wrong/trials with 95% intervals.
    static void write_comparisons(const RunReport& run, std::ostream& out) {
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

    // The load labs side by side: the per-strategy table and its two plots.
    static void write_load_section(const RunReport& run, std::ostream& out) {
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

    static void write_legend(std::ostream& out) {
        out << R"(<p class="legend"><svg width="760" height="20" viewBox="0 0 760 20" role="img" aria-label="legend">)"
            << R"~(<defs><pattern id="hatch-legend" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fdf3dc"/><rect width="2.5" height="6" fill="#e0a526"/></pattern></defs>)~"
            << R"(<rect x="2" y="4" width="26" height="12" rx="2" fill="#3b78c4"/><text x="33" y="14" font-size="11">job</text>)"
            << R"~(<rect x="62" y="4" width="26" height="12" rx="2" fill="url(#hatch-legend)" stroke="#b7791f" stroke-dasharray="4 2"/><text x="93" y="14" font-size="11">waiting for the lock</text>)~"
            << R"(<rect x="212" y="4" width="26" height="12" rx="2" fill="#d62728"/><text x="243" y="14" font-size="11">overwrote a newer state</text>)"
            << R"(<circle cx="392" cy="10" r="4.5" fill="#fff" stroke="#1f4f8f" stroke-width="2"/><text x="401" y="14" font-size="11">receive</text>)"
            << R"(<rect x="455" y="5.5" width="9" height="9" fill="#2e8b3e"/><text x="468" y="14" font-size="11">lock</text>)"
            << R"(<rect x="500" y="5.5" width="9" height="9" fill="#fff" stroke="#2e8b3e" stroke-width="2"/><text x="513" y="14" font-size="11">release</text>)"
            << R"(<polygon points="566,3 573,10 566,17 559,10" fill="#1d2330"/><text x="578" y="14" font-size="11">write</text>)"
            << R"(<polygon points="618,15 629,15 623.5,4" fill="#2e8b3e"/><text x="633" y="14" font-size="11">publish</text>)"
            << R"(<path d="M683,5 L693,15 M683,15 L693,5" stroke="#d62728" stroke-width="2.5"/><text x="697" y="14" font-size="11">failed</text>)"
            << "</svg></p>\n";
    }

    // The idempotency labs' timelines: a bar per request (send → answer), coloured by the answer.
    static void write_idem_legend(std::ostream& out) {
        struct Swatch {
            const char* colour;
            const char* text;
            double width;
        };
        const Swatch swatches[] = {{"#3b78c4", "201 created", 80},    {"#2e8b3e", "replay", 58},
                                   {"#c98a12", "409", 38},            {"#8e44ad", "422", 38},
                                   {"#6e7781", "5xx", 38},            {"#138d90", "layer 4 refused", 104},
                                   {"#d62728", "duplicate order / leak", 150}};
        std::ostringstream items;
        double x = 2;
        for (const auto& sw : swatches) {
            items << fmt::format(R"(<rect x="{}" y="4" width="22" height="12" rx="2" fill="{}"/><text x="{}" y="14" font-size="11">{}</text>)",
                               num(x), sw.colour, num(x + 27), sw.text);
            x += 27 + sw.width;
        }
        items << fmt::format(R"(<circle cx="{}" cy="10" r="3.5" fill="#fff" stroke="#1d2330" stroke-width="1.5"/><text x="{}" y="14" font-size="11">send</text>)",
                           num(x + 4), num(x + 12));
        x += 50;
        items << fmt::format(R"(<circle cx="{}" cy="10" r="4" fill="#1d2330"/><text x="{}" y="14" font-size="11">answer</text>)",
                           num(x + 4), num(x + 12));
        x += 62;
        items << fmt::format(R"(<polygon points="{0},3 {1},10 {0},17 {2},10" fill="#1d2330"/><text x="{3}" y="14" font-size="11">order</text>)",
                           num(x + 7), num(x + 14), num(x), num(x + 18));
        x += 58;
        items << fmt::format(R"(<polygon points="{},4 {},4 {},16" fill="#e8590c"/><text x="{}" y="14" font-size="11">fault</text>)",
                           num(x), num(x + 12), num(x + 6), num(x + 16));
        x += 50;
        out << fmt::format(R"(<p class="legend idem">idempotency labs: <svg width="{0}" height="20" viewBox="0 0 {0} 20" role="img" aria-label="legend of the idempotency labs">)",
                           num(x))
            << items.str() << "</svg></p>\n";
    }

    void write_lab(const LabResult& lab, std::ostream& out) {
        const Scenario& s = lab.scenario;
        const Verdict v = verdict_of(lab);
        out << fmt::format("<section class=\"lab {}\" id=\"{}\">\n", verdict_text(v), anchor(lab));
        out << fmt::format("<h2>{} <code>{}</code> {} {}</h2>\n", badge(v), esc(s.id), backend_tag(lab), esc(s.title));
        if (!lab.verdict_note.empty()) out << "<p class=\"verdict-note\">⚠ " << esc(lab.verdict_note) << "</p>\n";
        if (lab.skipped) {
            out << "<p class=\"skip\">skipped: " << esc(lab.skip_reason) << "</p>\n</section>\n";
            return;
        }
        write_documented_vs_measured(lab, out);
        write_failing_seeds(lab, out);
        out << fmt::format("<p class=\"expectation\">expectation: <code>{}</code> → {}</p>\n", esc(s.expect.describe()),
                           badge(v));
        if (!lab.failures.empty()) {
            out << "<ul class=\"failures\">\n";
            for (const auto& f : lab.failures) out << "<li>" << esc(f) << "</li>\n";
            out << "</ul>\n";
        }
        const std::string text = lab_text_report(lab);
        if (s.kind == LabKind::sessions) {
            write_figures(lab, out);
            bool redis_only = !lab.cases.empty();
            for (size_t i = 0; i < lab.cases.size(); ++i) {
                const SessionCase* spec = i < s.cases.size() ? &s.cases[i] : nullptr;
                redis_only = redis_only && spec && is_redis_case(*spec);
                write_case(lab.cases[i], spec, i, out);
            }
            if (redis_only)
                out << "<details><summary>redis-cli transcript</summary>\n<pre class=\"transcript\">" << esc(text)
                    << "</pre>\n</details>\n";
            else
                out << "<h3>transcript</h3>\n<pre class=\"transcript\">" << esc(text) << "</pre>\n";
        } else {
            // What sums up the trials, by the lab's kind.
            auto scaling = [&] {
                if (!s.idem.scaling.empty()) out << "<p class=\"scaling\">time scale: " << esc(s.idem.scaling) << "</p>\n";
            };
            switch (s.kind) {
                case LabKind::stream:
                    write_finals(lab, out);
                    write_accounting(lab, out);
                    break;
                case LabKind::idem_clients:
                    write_idem_counts(lab, out);
                    scaling();
                    write_figures(lab, out);
                    write_finals(lab, out);
                    break;
                case LabKind::idem_benchmark:  // figures, no orders
                case LabKind::idem_cluster:
                    scaling();
                    write_figures(lab, out);
                    break;
                case LabKind::sessions: break;  // above
            }
            const auto selection = static_cast<int>(lab.trials.size()) <= m_opts.all_timelines_up_to
                                       ? TimelineSelection::all
                                       : m_opts.timelines;
            for (const TrialOutcome* t : selected_trials(lab.trials, selection)) write_trial(lab, *t, out);
            out << "<details><summary>text report</summary>\n<pre>" << esc(text) << "</pre>\n</details>\n";
        }
        out << "</section>\n";
    }

    static bool redis_only_sessions(const LabResult& lab) {
        const auto& cases = lab.scenario.cases;
        return lab.scenario.kind == LabKind::sessions && !cases.empty() &&
               std::all_of(cases.begin(), cases.end(), [](const SessionCase& c) { return is_redis_case(c); });
    }

    // The article's words as a quotation with its title and section, apart from relab's words.
    static void write_quote(const char* label, Article article, const ArticlePassage& p, std::ostream& out) {
        out << "<blockquote class=\"article\" lang=\"vi\"><p>" << esc(quoted(p.quote_vi)) << "</p><footer>" << esc(label)
            << ", <cite>" << esc(article_title(article)) << "</cite>, " << esc(p.section) << "</footer></blockquote>";
        if (!p.text.empty())
            out << "<p class=\"relab\"><span class=\"who\">" << esc(quote_labels(Lang::en).note) << "</span> " << esc(p.text)
                << "</p>";
    }

    static void write_documented(const Documented& d, std::ostream& out) {
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

    static void write_documented_vs_measured(const LabResult& lab, std::ostream& out) {
        const Documented& d = lab.scenario.documented;
        out << "<div class=\"dvm\">\n";
        write_documented(d, out);
        out << "<div class=\"measured\"><h3>measured" << (is_sim(lab) ? " (simulated)" : "") << "</h3>";
        out << "<p class=\"count\">" << esc(measured_text(lab)) << "</p>";
        switch (lab.scenario.kind) {
            case LabKind::sessions:
                out << (redis_only_sessions(lab) ? "<p>cases with a reply other than expected</p>"
                                                 : "<p>cases with a wrong final row</p>");
                break;
            case LabKind::idem_benchmark:
            case LabKind::idem_cluster: out << "<p>a benchmark: its figures are below, beside the article's</p>"; break;
            case LabKind::idem_clients: out << "<p>trials with a duplicate order or a leak</p>"; break;
            case LabKind::stream:
                out << "<p>" << esc(fmt::format("trials with a wrong final state (not {})", expected_final(lab.scenario)))
                    << "</p>";
                break;
        }
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

    // A simulated lab: the first failing seeds, each with the command that replays it.
    static void write_failing_seeds(const LabResult& lab, std::ostream& out) {
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

    // An idempotency workload: orders and answers counted per trial and over all trials.
    static void write_idem_counts(const LabResult& lab, std::ostream& out) {
        const IdemCounts total = idem_total(lab);
        const auto header = idem_count_cells(total);
        out << "<table class=\"counts\">\n<thead><tr><th></th>";
        for (const auto& c : header) out << "<th>" << esc(c.label) << "</th>";
        out << "</tr></thead>\n<tbody>\n";
        auto row = [&](const std::string& name, const IdemCounts& counts, const char* cls) {
            out << "<tr" << cls << "><th>" << esc(name) << "</th>";
            const auto cells = idem_count_cells(counts);
            for (size_t i = 0; i < header.size(); ++i) {
                const IdemCountCell* c = i < cells.size() && cells[i].label == header[i].label ? &cells[i] : nullptr;
                const int value = c ? c->value : 0;
                out << "<td" << (c && c->bad ? " class=\"bad\"" : "") << ">" << value << "</td>";
            }
            out << "</tr>\n";
        };
        if (lab.trials.size() > 1 && lab.trials.size() <= k_count_rows) {
            for (const auto& t : lab.trials) row(fmt::format("trial {}", t.trial), t.idem.counts, "");
            row("all trials", total, " class=\"total\"");
        } else if (lab.trials.size() > k_count_rows) {
            // Many (simulated) trials: one row per distinct outcome, the most frequent first.
            std::vector<std::pair<const TrialOutcome*, size_t>> groups;  // first trial of the outcome, trials
            std::map<std::vector<int>, size_t> group_of;                 // the row's values → index in groups
            for (const auto& t : lab.trials) {
                std::vector<int> values;  // the row as shown (its labels follow from the values)
                for (const auto& c : idem_count_cells(t.idem.counts)) values.push_back(c.value);
                const auto [it, added] = group_of.try_emplace(std::move(values), groups.size());
                if (added)
                    groups.emplace_back(&t, 1);
                else
                    ++groups[it->second].second;
            }
            std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
            for (size_t i = 0; i < groups.size() && i < k_count_rows; ++i)
                row(fmt::format("{} trial{} like trial {}", groups[i].second, groups[i].second == 1 ? "" : "s",
                                groups[i].first->trial),
                    groups[i].first->idem.counts, "");
            if (groups.size() > k_count_rows)
                out << fmt::format("<tr><th colspan=\"{}\">… {} other outcomes, counted in the total</th></tr>\n",
                                   header.size() + 1, groups.size() - k_count_rows);
            row(fmt::format("all {} trials", lab.trials.size()), total, " class=\"total\"");
        } else {
            row(lab.trials.empty() ? "total" : fmt::format("trial {}", lab.trials[0].trial), total, " class=\"total\"");
        }
        out << "</tbody>\n</table>\n";
        std::vector<std::string> leaks;
        for (const auto& t : lab.trials)
            for (const auto& l : t.idem.leak_examples)
                if (leaks.size() < 5) leaks.push_back(fmt::format("trial {}: {}", t.trial, l));
        if (!leaks.empty()) {
            out << "<ul class=\"leaks\">\n";
            for (const auto& l : leaks) out << "<li>✕ " << esc(l) << "</li>\n";
            out << "</ul>\n";
        }
    }

    // A stream lab's accounting: every published entry followed to its jobs. A row per trial (only
    // the trials with something to flag when there are many), then the sum; the first examples of
    // each class beside its trial.
    static void write_accounting(const LabResult& lab, std::ostream& out) {
        if (lab.trials.empty()) return;
        out << "<div class=\"accounting\"><h3>accounting</h3>\n<table class=\"counts accounting\">\n<thead><tr><th></th>"
               "<th>published</th><th>processed once</th><th>duplicated</th><th>lost</th><th>redelivered after ack</th>"
               "<th>unexpected</th><th>stale overwrites</th><th>more</th><th>examples</th></tr></thead>\n<tbody>\n";
        auto row = [&](const std::string& name, const Accounting& a, const char* cls, bool with_examples) {
            auto cell = [&](int n, bool flags) {
                return fmt::format("<td{}>{}</td>", flags && n > 0 ? " class=\"bad\"" : "", n);
            };
            std::string examples;
            if (with_examples)
                for (const auto& d : accounting_details(a)) examples += (examples.empty() ? "" : "; ") + d;
            out << "<tr" << cls << "><th>" << esc(name) << "</th>" << cell(a.published, false)
                << cell(a.processed_once, false) << cell(a.duplicated, true) << cell(a.lost, true)
                << cell(a.redelivered, true) << cell(a.unexpected, true) << cell(a.stale_overwrites, true) << "<td>"
                << esc(accounting_more_text(a)) << "</td><td>"
                << (examples.empty() ? "" : "<code>" + esc(examples) + "</code>") << "</td></tr>\n";
        };
        const bool every_trial = lab.trials.size() <= k_count_rows;
        size_t shown = 0, flagged = 0;
        for (const auto& t : lab.trials) {
            const bool flags = !t.accounting.clean();
            flagged += flags;
            if ((every_trial || flags) && shown < k_count_rows) {
                row(fmt::format("trial {}", t.trial), t.accounting, "", true);
                ++shown;
            }
        }
        if (!every_trial && flagged > shown)
            out << fmt::format("<tr><th colspan=\"10\">… {} other trials with something to flag, counted in the total</th></tr>\n",
                               flagged - shown);
        if (lab.trials.size() > 1)
            row(fmt::format("all {} trials", lab.trials.size()), accounting_total(lab), " class=\"total\"", false);
        out << "</tbody>\n</table>\n</div>\n";
    }

    // The figures this machine measured beside the article's, with the reason where they differ.
    static void write_figures(const LabResult& lab, std::ostream& out) {
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

    static void write_finals(const LabResult& lab, std::ostream& out) {
        const Scenario& s = lab.scenario;
        const bool idem = is_idem(s.kind);
        // What the chip says about a trial (without its number), and whether that is wrong.
        auto chip_text = [&](const TrialOutcome& t) {
            if (idem) {  // the orders it left, and what was wrong with them
                const IdemCounts& c = t.idem.counts;
                std::string text = fmt::format("{} order{}", c.orders, c.orders == 1 ? "" : "s");
                if (c.duplicates > 0) text += fmt::format(", {} duplicate{}", c.duplicates, c.duplicates == 1 ? "" : "s");
                if (c.leaks > 0) text += fmt::format(", {} leak{}", c.leaks, c.leaks == 1 ? "" : "s");
                return text;
            }
            std::string text;
            if (s.orders.size() <= 1) {
                const OrderRow* row = s.orders.empty() ? (t.final_rows.empty() ? nullptr : &t.final_rows.front())
                                                       : row_of(t, s.orders.front().id);
                return row ? row_state_text(*row, carries_amounts(s)) : std::string("(no row)");
            }
            for (const auto& order : s.orders) {
                const OrderRow* row = row_of(t, order.id);
                const bool wrong = !row || !order.expected_final.matches(*row);
                if (!text.empty()) text += ' ';
                text += fmt::format("#{}={}{}", order.id, row ? row_state_text(*row, carries_amounts(s)) : "(no row)",
                                    wrong ? "✕" : "");
            }
            return text;
        };
        const bool single = idem || s.orders.size() <= 1;  // the ✕ goes after the whole chip
        auto chip = [&](const TrialOutcome& t) {
            std::string title = fmt::format("trial {}, seed {}", t.trial, is_sim(lab) ? seed_text(t.seed) : std::to_string(t.seed));
            for (const auto& w : t.wrong_orders) title += "; " + w;
            for (const auto& l : t.idem.leak_examples) title += "; " + l;
            out << fmt::format(R"(<span class="chip{}" title="{}"><b>{}</b> {}{}</span>)", t.wrong ? " wrong" : "",
                               esc(title), t.trial, esc(chip_text(t)), t.wrong && single ? " ✕" : "")
                << '\n';
        };
        out << "<div class=\"finals\"><h3>" << (idem ? "orders per trial" : "final status per trial") << "</h3>\n";
        const size_t n = lab.trials.size();
        if (n > k_chips_shown) {
            // Every trial counted, the most frequent outcome first.
            std::map<std::pair<std::string, bool>, size_t> tally;
            for (const auto& t : lab.trials) ++tally[{chip_text(t), t.wrong}];
            std::vector<std::pair<std::pair<std::string, bool>, size_t>> sorted(tally.begin(), tally.end());
            std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
            std::vector<std::string> parts;
            for (const auto& [what, k] : sorted)
                parts.push_back(fmt::format(R"(<span class="chip{}">{}{}</span> ×{})", what.second ? " wrong" : "",
                                            esc(what.first), what.second && single ? " ✕" : "", k));
            out << fmt::format("<p class=\"tally\">{} trials: {}</p>\n", n, fmt::join(parts, " "));
        }
        if (n <= k_chips_shown) {
            for (const auto& t : lab.trials) chip(t);
        } else {  // the tally says it all; every trial (up to a bound) on demand
            out << fmt::format("<details><summary>trials 1–{}</summary>\n", std::min(n, k_chips_max));
            for (size_t i = 0; i < n && i < k_chips_max; ++i) chip(lab.trials[i]);
            out << "</details>\n";
            if (n > k_chips_max) out << fmt::format("<p>… {} more trials, counted above</p>\n", n - k_chips_max);
        }
        out << "</div>\n";
    }

    void write_trial(const LabResult& lab, const TrialOutcome& whole, std::ostream& out) {
        if (is_sim(lab) && whole.history.empty()) return;  // a long simulated run keeps few histories
        // S2: hundreds of orders; the lanes show the orders that ended wrong (or the first one).
        const bool sharded = lab.scenario.shard.enabled;
        const TrialOutcome focused = sharded ? shard_focus(lab.scenario, whole) : TrialOutcome{};
        const TrialOutcome& t = sharded ? focused : whole;
        const bool several_orders = lab.scenario.orders.size() > 1;
        const bool idem = is_idem(lab.scenario.kind);
        const Timeline tl = idem ? idem_trial_timeline(t) : trial_timeline(t, several_orders);
        if (idem && std::none_of(tl.bars.begin(), tl.bars.end(),
                                 [](const TimelineBar& b) { return b.kind == TimelineBar::Kind::request; }))
            return;  // no client sent anything (the benchmark): nothing to draw
        std::string caption = fmt::format("<b>trial {}</b>", t.trial);
        if (is_sim(lab)) caption += fmt::format(" (seed <code>{}</code>)", seed_text(t.seed));
        if (t.wrong) caption += " <span class=\"badge broken\">wrong</span>";
        if (idem)
            caption += " — " + esc(idem_counts_brief(t.idem.counts));
        else if (sharded)
            caption += " — " + esc(shard_facts_text(shard_facts(lab.scenario, whole), lab.scenario.orders.size())) +
                       "<br>timeline: the first orders that ended wrong (or the first order), their events on each shard";
        else
            caption += " — stream: " + esc(stream_text(t, several_orders));
        if (is_sim(lab) && !lab.replay_seed)
            caption += fmt::format("<br>replay: <code class=\"cmd\">{}</code>", esc(replay_command(lab, t.seed)));
        out << fmt::format("<figure class=\"timeline\" data-trial=\"{}\">\n<figcaption>{}</figcaption>\n", t.trial, caption);
        SvgTimeline(tl, ++m_svg_count).write(out, fmt::format("timeline of trial {}", t.trial));
        out << "</figure>\n";
    }

    void write_case(const CaseOutcome& c, const SessionCase* spec, size_t index, std::ostream& out) {
        out << fmt::format("<figure class=\"timeline\" data-case=\"{}\">\n<figcaption><b>{}</b>{}</figcaption>\n", index + 1,
                           esc(c.title), c.wrong ? " <span class=\"badge broken\">wrong</span>" : "");
        const Timeline tl = case_timeline(c);
        if (!tl.lanes.empty()) SvgTimeline(tl, ++m_svg_count).write(out, c.title);
        out << "</figure>\n";
        if (spec && is_redis_case(*spec)) write_steps(c, *spec, out);
    }

    // A scripted Redis case step by step: the reply beside what the lab expected and what the
    // article printed, with the notes and projections the text report prints under them.
    static void write_steps(const CaseOutcome& c, const SessionCase& spec, std::ostream& out) {
        const std::vector<const SessionStep*> specs = step_specs(c, spec);
        out << "<table class=\"steps\">\n<thead><tr><th>t</th><th>session</th><th>command</th><th>reply</th>"
               "<th>expected</th><th>article</th><th></th></tr></thead>\n<tbody>\n";
        for (size_t k = 0; k < c.steps.size(); ++k) {
            const StepOutcome& step = c.steps[k];
            const SessionStep* ss = specs[k];
            const RedisStep* rs = ss && ss->redis ? &*ss->redis : nullptr;
            const std::string expected = ss ? expected_reply_text(*ss) : "";
            out << fmt::format(
                "<tr class=\"{}\"><td class=\"t\">{:.1f} ms</td><td>{}</td><td><code>{}</code></td><td class=\"reply\"><code>{}</code>"
                "</td><td class=\"expected\">{}</td><td>{}</td><td class=\"verdict\">{}</td></tr>\n",
                step.ok ? "ok" : "fail", static_cast<double>(step.start_us) / 1e3, esc(step.session), esc(step.sql),
                esc(reply_text(step)), expected.empty() ? "—" : "<code>" + esc(expected) + "</code>",
                rs && !rs->documented.empty() ? esc(rs->documented) : "—", step.ok ? "✓" : "✕ " + esc(step.failure));
            if (rs && rs->project)
                if (const auto total = projected_total(step, *rs->project))
                    out << fmt::format("<tr class=\"note\"><td></td><td></td><td colspan=\"2\">× {} ({}) = <b>{}</b></td>"
                                       "<td></td><td>{}</td><td></td></tr>\n",
                                       with_thousands(rs->project->keys), esc(rs->project->label), esc(*total),
                                       rs->project->documented.empty() ? "—" : esc(rs->project->documented));
            if (rs && !rs->note.empty())
                out << "<tr class=\"note\"><td></td><td></td><td colspan=\"5\">why: " << esc(rs->note) << "</td></tr>\n";
        }
        out << "</tbody>\n</table>\n";
    }

    HtmlOptions m_opts;
    int m_svg_count = 0;
};

}  // namespace

std::unique_ptr<Reporter> make_html_reporter(const HtmlOptions& opts) { return std::make_unique<HtmlReporter>(opts); }

}  // namespace relab
