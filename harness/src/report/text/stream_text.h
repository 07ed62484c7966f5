// The stream labs' text section in parts, beside the section itself (stream_text.cpp): a trial's
// timeline (stream_timeline_text.cpp), an outbox lab's trial (dispatcher_text.cpp) and the figures
// after the verdict (stream_figures_text.cpp).
#pragma once

#include <ostream>

#include "check/outcome.h"
#include "report/text/text_sections.h"

namespace relab {

// A trial's history, one line per record with its time, as the article prints it.
void print_stream_timeline(const TextWords& w, const LabResult& lab, const TrialOutcome& trial, std::ostream& out);
// An outbox lab's trial in the article's layout: the outbox rows, each dispatcher round, the stream
// as the consumer will see it, the consumer's final states, and how late each order got out.
void write_dispatcher_trial_text(const TextContext& tc, const LabResult& lab, const TrialOutcome& t, std::ostream& out);
// The figures after the verdict: the lock's release, delivery latency, load, soak, throughput.
void write_stream_figures_text(const TextContext& tc, const LabResult& lab, std::ostream& out);

}  // namespace relab
