// The page's style: one inline stylesheet, so that index.html needs nothing beside it.
#include "report/html/html_parts.h"

namespace relab::html {

namespace {

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

}  // namespace

const char* page_css() { return k_css; }

}  // namespace relab::html
