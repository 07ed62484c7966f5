// The text report's parts for the idempotency labs (article 002): Redis transcripts as redis-cli
// prints them, the middleware workload's timeline and counts, and the server figures measured
// beside the documented ones. Called from text_reporter.cpp.
#pragma once

#include <ostream>

#include "check/outcome.h"
#include "report/reporter.h"

namespace relab {

// A case with at least one Redis session.
bool is_redis_case(const SessionCase& spec);

// The case in time order, each step as "A> COMMAND args" and the reply as redis-cli prints it,
// with the article's reply, notes and projections beside it.
void print_redis_case(const CaseOutcome& c, const SessionCase& spec, Lang lang, std::ostream& out);

// An idempotency workload lab: the selected trials' timelines, the counts per trial and in total,
// and the measurements. The verdict is printed by the caller.
void print_idem_workload(const LabResult& lab, Lang lang, TimelineSelection timelines, std::ostream& out);

// One record of an idempotency workload as its timeline line prints it (without the time):
// "A   SET idem:v1:7:8f3a {in_progress} NX GET EX 60 → (nil): first".
std::string idem_record_text(const HistoryRecord& r);

// "1.9 MB", "2.0 GB": decimal units, as the article counts.
std::string decimal_bytes(double bytes);

}  // namespace relab
