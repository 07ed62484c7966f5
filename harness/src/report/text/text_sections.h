// A lab's text report in parts. text_reporter.cpp writes a lab's heading and hands the lab to its
// family's section, which text_section() picks by the lab's kind (family_sections.cpp, the one
// place of the text report that decides by kind). Each family's section lives in its own file; the
// parts every family shares are in common_text.cpp.
#pragma once

#include <ostream>

#include "check/outcome.h"
#include "report/reporter.h"
#include "report/text/text_words.h"

namespace relab {

// What every part of a lab's text report is written with: the options and their language's words.
struct TextContext {
    const TextOptions& opts;
    const TextWords& w;
};

// A family's section: the lab's report after its heading (the lab ran: a skipped lab has none).
using TextSection = void (*)(const TextContext& tc, const LabResult& lab, std::ostream& out);

// The section of a lab of this kind (family_sections.cpp).
TextSection text_section(LabKind kind);

// The stream labs': the selected trials' timelines, the final states, the accounting, the verdict,
// the figures after it (stream_text.cpp).
void write_stream_text(const TextContext& tc, const LabResult& lab, std::ostream& out);
// The scripted sessions labs': each case as psql or redis-cli prints it, then the verdict
// (sessions_text.cpp).
void write_sessions_text(const TextContext& tc, const LabResult& lab, std::ostream& out);
// The idempotency labs': requests, answers and orders, or the figures, then the verdict (idem_text.cpp).
void write_idem_text(const TextContext& tc, const LabResult& lab, std::ostream& out);

// The parts every family shares (common_text.cpp).
//
// "### title   (output.txt)", then for a skipped lab its reason; true when the lab ran.
bool write_heading_text(const TextContext& tc, const LabResult& lab, std::ostream& out);
// What the article documented, the expectation and whether it held, and each failure.
void write_verdict_text(const TextContext& tc, const LabResult& lab, std::ostream& out);
// A simulated lab: the wrong rate over its trials with its 95% interval and the failing seeds, or
// the seed a replay ran.
void write_wrong_rate_text(const TextContext& tc, const LabResult& lab, std::ostream& out);
// The article's throughput figure, under the measured one.
void write_throughput_figure_text(const TextContext& tc, const Documented& doc, std::ostream& out);

}  // namespace relab
