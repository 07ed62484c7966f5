// index.html: the run as a page to look at. One self-contained file (inline CSS and SVG, no
// script, nothing fetched): a summary table, then per lab the documented result beside the
// measured one, the final status of every trial, a swimlane timeline of the selected trials
// (every case of a session lab) and the lab's text report.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "report/lab_summary.h"
#include "report/reporter.h"
#include "report/timeline.h"

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
section.lab { border: 1px solid var(--line); border-left: 6px solid var(--held); border-radius: 6px; padding: 14px 18px;
              margin: 18px 0; }
section.lab.broken { border-left-color: var(--broken); } section.lab.skipped { border-left-color: var(--skipped); }
.dvm { display: flex; gap: 16px; margin: 8px 0; }
.dvm > div { flex: 1; background: #f6f8fa; border-radius: 6px; padding: 8px 12px; }
.dvm .count { font-size: 22px; font-weight: bold; margin: 0; }
.dvm p { margin: 2px 0; }
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
pre { background: #f6f8fa; border-radius: 6px; padding: 10px 12px; overflow-x: auto; font: 12px/1.4 "DejaVu Sans Mono", monospace; }
details summary { cursor: pointer; color: var(--muted); }
.legend { color: var(--muted); font-size: 12px; }
.legend svg { vertical-align: middle; }
.skip { color: var(--skipped); font-weight: bold; }
)";

// Geometry of a timeline, in SVG user units (= CSS px at 100 %).
constexpr double k_width = 1160;
constexpr double k_gutter = 96;   // lane names
constexpr double k_right = 28;
constexpr double k_lane_h = 50;
constexpr double k_top = 6;
constexpr double k_axis_h = 26;
constexpr double k_bar_h = 16;

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
    }

    void write(std::ostream& out, const std::string& aria) const {
        const double height = k_top + static_cast<double>(m_tl.lanes.size()) * k_lane_h + k_axis_h;
        out << fmt::format(R"(<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}" role="img" aria-label="{}">)",
                           num(k_width), num(height), num(k_width), num(height), esc(aria))
            << '\n';
        out << fmt::format(R"~(<defs><pattern id="hatch-{}" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fdf3dc"/><rect width="2.5" height="6" fill="#e0a526"/></pattern></defs>)~",
                           m_id)
            << '\n';
        write_grid(out, height);
        for (size_t i = 0; i < m_tl.lanes.size(); ++i) write_lane(out, i);
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
        return k_top + (static_cast<double>(i) + 0.5) * k_lane_h;
    }

    void write_grid(std::ostream& out, double height) const {
        const double axis_y = height - k_axis_h;
        out << "<g class=\"axis\">\n";
        const int ticks = static_cast<int>(std::lround((m_t1_ms - m_t0_ms) / m_step_ms));
        for (int i = 0; i <= ticks; ++i) {
            const double ms = m_t0_ms + i * m_step_ms;
            const double tx = x(static_cast<int64_t>(std::llround(ms * 1e6)));
            out << fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#e3e6eb"/>)", num(tx), num(k_top),
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
        const double top = k_top + static_cast<double>(index) * k_lane_h;
        const double mid = top + k_lane_h / 2;
        out << fmt::format(R"(<g class="lane" data-lane="{}">)", esc(lane)) << '\n';
        out << fmt::format(R"(<rect class="lane-bg" x="0" y="{}" width="{}" height="{}" fill="{}"/>)", num(top),
                           num(k_width), num(k_lane_h), index % 2 ? "#ffffff" : "#f5f7fa");
        out << fmt::format(R"(<text class="lane-name" x="10" y="{}">{}</text>)", num(mid + 4), esc(lane)) << '\n';
        for (const auto& bar : m_tl.bars)
            if (bar.lane == lane) write_bar(out, bar, mid);
        std::vector<const TimelineMarker*> markers;
        for (const auto& m : m_tl.markers)
            if (m.lane == lane) markers.push_back(&m);
        const std::vector<int> rows = place_labels(markers);
        for (size_t i = 0; i < markers.size(); ++i) write_marker(out, *markers[i], mid, rows[i]);
        out << "</g>\n";
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
                const int want = m.label.empty() ? (other_caption ? 2 : -1) : (m.bad ? 0 : 1);
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
                                                                    : "job";
        out << fmt::format(R"(<rect class="{}" x="{}" y="{}" width="{}" height="{}" rx="2" {}><title>{} {}: {} ({:.1f}–{:.1f} ms{})</title></rect>)",
                           cls, num(x0), num(y), num(w), num(k_bar_h), style, esc(bar.lane), what, esc(bar.label), ms0,
                           ms1, bar.overwrites ? ", overwrote a newer state" : "")
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
        const std::string title = "<title>" + esc(m.detail) + "</title>";
        const char* bad = m.bad ? " bad" : "";
        std::string label_cls = "marker-label";
        if (m.bad) label_cls += " bad";
        switch (m.kind) {
            case TimelineMarker::Kind::receive:
                out << fmt::format(R"(<circle class="marker receive" cx="{}" cy="{}" r="4.5" fill="#ffffff" stroke="#1f4f8f" stroke-width="2">{}</circle>)",
                                   num(cx), num(mid), title);
                break;
            case TimelineMarker::Kind::lock_acquire:
                out << fmt::format(R"(<rect class="marker lock-acquire" x="{}" y="{}" width="9" height="9" fill="#2e8b3e">{}</rect>)",
                                   num(cx - 4.5), num(mid - 4.5), title);
                break;
            case TimelineMarker::Kind::lock_release:
                out << fmt::format(R"(<rect class="marker lock-release{}" x="{}" y="{}" width="9" height="9" fill="#ffffff" stroke="{}" stroke-width="2">{}</rect>)",
                                   bad, num(cx - 4.5), num(mid - 4.5), m.bad ? "#d62728" : "#2e8b3e", title);
                break;
            case TimelineMarker::Kind::write:
                out << fmt::format(R"(<polygon class="marker write{}" points="{},{} {},{} {},{} {},{}" fill="{}" stroke="#ffffff">{}</polygon>)",
                                   m.bad ? " overwrite" : "", num(cx), num(mid - 7), num(cx + 7), num(mid), num(cx),
                                   num(mid + 7), num(cx - 7), num(mid), m.bad ? "#a50f15" : "#1d2330", title);
                break;
            case TimelineMarker::Kind::publish:
                if (m.bad)
                    out << fmt::format(R"(<path class="marker publish fail" d="M{0},{1} L{2},{3} M{0},{3} L{2},{1}" stroke="#d62728" stroke-width="2.5">{4}</path>)",
                                       num(cx - 5), num(mid - 5), num(cx + 5), num(mid + 5), title);
                else
                    out << fmt::format(R"(<polygon class="marker publish ok" points="{},{} {},{} {},{}" fill="#2e8b3e">{}</polygon>)",
                                       num(cx - 5.5), num(mid + 5), num(cx + 5.5), num(mid + 5), num(cx), num(mid - 6), title);
                break;
            case TimelineMarker::Kind::step_end:
                out << fmt::format(R"(<line class="marker step-end{0}" x1="{1}" y1="{2}" x2="{1}" y2="{3}" stroke="{4}" stroke-width="2">{5}</line>)",
                                   bad, num(cx), num(mid - 10), num(mid + 10), m.bad ? "#d62728" : "#1d2330", title);
                break;
            case TimelineMarker::Kind::other:
                out << fmt::format(R"(<circle class="marker other" data-op="{}" cx="{}" cy="{}" r="3.5" fill="#8a93a3">{}</circle>)",
                                   esc(m.op), num(cx), num(mid), title);
                if (label_row != k_no_label && m.label.empty())
                    out << fmt::format(R"(<text class="marker-label other" x="{}" y="{}" text-anchor="middle">{}</text>)",
                                       num(cx), num(label_y(mid, label_row)), esc(m.op));
                break;
        }
        out << '\n';
        if (m.label.empty() || label_row == k_no_label) return;
        // Starts at the marker; when it would run past the right edge it ends there instead.
        const bool right_edge = label_ends_at_marker(m);
        out << fmt::format(R"(<text class="{}" x="{}" y="{}" text-anchor="{}">{}</text>)", label_cls,
                           num(right_edge ? cx + 4 : cx - 4), num(label_y(mid, label_row)), right_edge ? "end" : "start",
                           esc(m.label))
            << '\n';
    }

    static double label_y(double mid, int row) { return row == 0 ? mid - 12 : mid + 21; }

    const Timeline& m_tl;
    int m_id;
    double m_step_ms = 1, m_t0_ms = 0, m_t1_ms = 1;
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
        write_legend(out);
        for (const auto& lab : run.labs) write_lab(lab, out);
        out << "</body>\n</html>\n";
    }

private:
    static std::string anchor(const LabResult& lab) { return "lab-" + esc(lab.scenario.id); }

    static std::string badge(Verdict v) {
        return fmt::format(R"(<span class="badge {0}">{0}</span>)", verdict_text(v));
    }

    void write_summary_table(const RunReport& run, std::ostream& out) const {
        out << "<table class=\"summary\">\n<thead><tr><th>lab</th><th>title</th><th>documented</th>"
            << "<th>measured (wrong/trials)</th><th>expectation</th><th>result</th></tr></thead>\n<tbody>\n";
        for (const auto& lab : run.labs) {
            const Scenario& s = lab.scenario;
            const std::string documented = documented_text(s.documented);
            out << fmt::format(
                "<tr class=\"{}\"><td><a href=\"#{}\"><code>{}</code></a></td><td>{}</td><td>{}</td><td "
                "class=\"num\">{}</td><td>{}</td><td>{}</td></tr>\n",
                verdict_text(verdict_of(lab)), anchor(lab), esc(s.id), esc(s.title), documented.empty() ? "—" : esc(documented),
                lab.skipped ? "—" : esc(measured_text(lab)), esc(s.expect.describe()), badge(verdict_of(lab)));
        }
        out << "</tbody>\n</table>\n";
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

    void write_lab(const LabResult& lab, std::ostream& out) {
        const Scenario& s = lab.scenario;
        const Verdict v = verdict_of(lab);
        out << fmt::format("<section class=\"lab {}\" id=\"{}\">\n", verdict_text(v), anchor(lab));
        out << fmt::format("<h2>{} <code>{}</code> {}</h2>\n", badge(v), esc(s.id), esc(s.title));
        if (lab.skipped) {
            out << "<p class=\"skip\">skipped: " << esc(lab.skip_reason) << "</p>\n</section>\n";
            return;
        }
        write_documented_vs_measured(lab, out);
        out << fmt::format("<p class=\"expectation\">expectation: <code>{}</code> → {}</p>\n", esc(s.expect.describe()),
                           badge(v));
        if (!lab.failures.empty()) {
            out << "<ul class=\"failures\">\n";
            for (const auto& f : lab.failures) out << "<li>" << esc(f) << "</li>\n";
            out << "</ul>\n";
        }
        const std::string text = lab_text_report(lab);
        if (s.kind == ScenarioKind::sessions) {
            for (size_t i = 0; i < lab.cases.size(); ++i) write_case(lab.cases[i], i, out);
            out << "<h3>transcript</h3>\n<pre class=\"transcript\">" << esc(text) << "</pre>\n";
        } else {
            write_finals(lab, out);
            const auto selection = static_cast<int>(lab.trials.size()) <= m_opts.all_timelines_up_to
                                       ? TimelineSelection::all
                                       : m_opts.timelines;
            for (const TrialOutcome* t : selected_trials(lab.trials, selection)) write_trial(lab, *t, out);
            out << "<details><summary>text report</summary>\n<pre>" << esc(text) << "</pre>\n</details>\n";
        }
        out << "</section>\n";
    }

    static void write_documented_vs_measured(const LabResult& lab, std::ostream& out) {
        const Documented& d = lab.scenario.documented;
        out << "<div class=\"dvm\">\n<div class=\"documented\"><h3>documented</h3>";
        if (d.wrong)
            out << "<p class=\"count\">" << (d.of ? fmt::format("{}/{}", *d.wrong, *d.of) : std::to_string(*d.wrong))
                << "</p>";
        if (!d.text.empty()) out << "<p>" << esc(d.text) << "</p>";
        if (!d.wrong && d.text.empty()) out << "<p>—</p>";
        out << "</div>\n<div class=\"measured\"><h3>measured</h3>";
        out << "<p class=\"count\">" << esc(measured_text(lab)) << "</p>";
        if (lab.scenario.kind == ScenarioKind::sessions)
            out << "<p>cases with a wrong final row</p>";
        else
            out << "<p>" << esc(fmt::format("trials with a wrong final state (not {})", expected_final(lab.scenario)))
                << "</p>";
        if (lab.delivery.samples > 0)
            out << "<p>" << fmt::format("delivery XADD → receipt: p50 {:.2f} ms, max {:.2f} ms", lab.delivery.p50_us / 1000.0,
                                        lab.delivery.max_us / 1000.0)
                << "</p>";
        if (!lab.lock_release_method.empty()) out << "<p>lock release: " << esc(lab.lock_release_method) << "</p>";
        out << "</div>\n</div>\n";
    }

    static void write_finals(const LabResult& lab, std::ostream& out) {
        const Scenario& s = lab.scenario;
        out << "<div class=\"finals\"><h3>final status per trial</h3>\n";
        for (const auto& t : lab.trials) {
            std::string text;
            if (s.orders.size() <= 1) {
                const OrderRow* row = s.orders.empty() ? (t.final_rows.empty() ? nullptr : &t.final_rows.front())
                                                       : row_of(t, s.orders.front().id);
                text = row ? row->status : "(no row)";
            } else {
                for (const auto& order : s.orders) {
                    const OrderRow* row = row_of(t, order.id);
                    const bool wrong = !row || row->status != order.expected_final;
                    if (!text.empty()) text += ' ';
                    text += fmt::format("#{}={}{}", order.id, row ? row->status : "(no row)", wrong ? "✕" : "");
                }
            }
            std::string title = fmt::format("trial {}, seed {}", t.trial, t.seed);
            for (const auto& w : t.wrong_orders) title += "; " + w;
            out << fmt::format(R"(<span class="chip{}" title="{}"><b>{}</b> {}{}</span>)", t.wrong ? " wrong" : "",
                               esc(title), t.trial, esc(text), t.wrong && s.orders.size() <= 1 ? " ✕" : "")
                << '\n';
        }
        out << "</div>\n";
    }

    void write_trial(const LabResult& lab, const TrialOutcome& t, std::ostream& out) {
        const bool several_orders = lab.scenario.orders.size() > 1;
        const Timeline tl = trial_timeline(t, several_orders);
        out << fmt::format("<figure class=\"timeline\" data-trial=\"{}\">\n<figcaption><b>trial {}</b>{} — stream: {}</figcaption>\n",
                           t.trial, t.trial, t.wrong ? " <span class=\"badge broken\">wrong</span>" : "",
                           esc(stream_text(t, several_orders)));
        SvgTimeline(tl, ++m_svg_count).write(out, fmt::format("timeline of trial {}", t.trial));
        out << "</figure>\n";
    }

    void write_case(const CaseOutcome& c, size_t index, std::ostream& out) {
        out << fmt::format("<figure class=\"timeline\" data-case=\"{}\">\n<figcaption><b>{}</b>{}</figcaption>\n", index + 1,
                           esc(c.title), c.wrong ? " <span class=\"badge broken\">wrong</span>" : "");
        const Timeline tl = case_timeline(c);
        if (!tl.lanes.empty()) SvgTimeline(tl, ++m_svg_count).write(out, c.title);
        out << "</figure>\n";
    }

    HtmlOptions m_opts;
    int m_svg_count = 0;
};

}  // namespace

std::unique_ptr<Reporter> make_html_reporter(const HtmlOptions& opts) { return std::make_unique<HtmlReporter>(opts); }

}  // namespace relab
