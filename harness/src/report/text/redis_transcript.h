// A scripted Redis case as redis-cli prints it: the sessions labs of article 002, whose steps are
// checked against the reply the article printed.
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

}  // namespace relab
