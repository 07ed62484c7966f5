// The idempotency labs' text section (article 002): the middleware workload's timeline and counts,
// and the server figures measured beside the documented ones. The family's section is
// write_idem_text (text_sections.h).
#pragma once

#include <ostream>

#include "check/outcome.h"
#include "report/reporter.h"

namespace relab {

// An idempotency workload lab: the selected trials' timelines, the counts per trial and in total,
// and the measurements. The verdict is printed by the caller.
void print_idem_workload(const LabResult& lab, Lang lang, TimelineSelection timelines, std::ostream& out);

// One record of an idempotency workload as its timeline line prints it (without the time):
// "A   SET idem:v1:7:8f3a {in_progress} NX GET EX 60 → (nil): first".
std::string idem_record_text(const HistoryRecord& r);

}  // namespace relab
