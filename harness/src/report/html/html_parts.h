// What the HTML page's parts share: escaping and numbers as the page writes them, the lab's anchor,
// verdict badge and backend tag, the page's style, and its SVG (timelines, legends, a rate's
// interval). The page's sections and each family's are in html_sections.h.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>

#include "check/outcome.h"
#include "report/lab_summary.h"
#include "report/text/timeline.h"

namespace relab::html {

// Text for the page: & < > " ' escaped (markup_escape).
std::string esc(std::string_view text);
// A coordinate or length of the SVG, one decimal: "12.5".
std::string num(double v);
// Code points, to guess how wide a label is drawn.
size_t code_points(const std::string& s);
// "lab-08a-baseline-sim": where the summary table's link to a lab goes.
std::string anchor(const LabResult& lab);
// The verdict's coloured badge.
std::string badge(Verdict v);
// "sim" or "real", with what it means as its tooltip.
std::string backend_tag(const LabResult& lab);

// The page's CSS, inlined in its <head> (page_style.cpp).
const char* page_css();

// A trial's or a case's swimlane timeline as an inline SVG; `id` keeps its pattern's id apart from
// every other SVG of the page (svg_timeline.cpp).
void write_svg_timeline(const Timeline& tl, int id, const std::string& aria, std::ostream& out);
// The legend of the stream labs' timelines, and of the idempotency labs' (svg_legends.cpp).
void write_legend(std::ostream& out);
void write_idem_legend(std::ostream& out);
// A simulated lab's wrong rate with its 95% interval on a 0–100 % scale.
void write_rate_interval(const LabResult& lab, std::ostream& out);

}  // namespace relab::html
