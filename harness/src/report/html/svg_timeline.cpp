// A trial's or a case's timeline as SVG: a lane per actor, bars for jobs, lock waits, statements
// and requests, markers for what happened at an instant, the nemesis's faults over every lane, and
// a time axis in "nice" steps.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "report/html/html_parts.h"

namespace relab::html {

namespace {

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

// Where a marker's text goes: above the bars (row 0) or below them (row 1).
double label_y(double mid, int row) { return row == 0 ? mid - 12 : mid + 21; }

// A write's or an order's marker: a diamond, dark red when it flags something.
std::string diamond(const char* cls, double cx, double mid, bool bad, const std::string& title) {
    return fmt::format(R"(<polygon class="marker {}" points="{},{} {},{} {},{} {},{}" fill="{}" stroke="#ffffff">{}</polygon>)",
                       cls, num(cx), num(mid - 7), num(cx + 7), num(mid), num(cx), num(mid + 7), num(cx - 7), num(mid),
                       bad ? "#a50f15" : "#1d2330", title);
}

// The marker's shape for its kind, at (cx, mid), the whole record in its tooltip.
std::string marker_shape(const TimelineMarker& m, double cx, double mid) {
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

    const Timeline& m_tl;
    int m_id;
    double m_step_ms = 1, m_t0_ms = 0, m_t1_ms = 1;
    double m_top = k_top;  // where the lanes begin
    std::map<std::string, size_t> m_lane_index;
};

}  // namespace

void write_svg_timeline(const Timeline& tl, int id, const std::string& aria, std::ostream& out) {
    SvgTimeline(tl, id).write(out, aria);
}

}  // namespace relab::html
