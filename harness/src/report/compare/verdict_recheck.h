// `relab report` does not take a saved verdict on trust: it recomputes each lab's verdict from the
// trials or cases saved with it and the scenario embedded in its JSON, and says when that differs
// from what the file says, or when the scenario can no longer be read.
#pragma once

#include <string>

#include "check/outcome.h"

namespace relab {

// Recomputes `lab`'s verdict (summarize()) from its saved trials or cases and its scenario, and
// keeps the recomputed one. Returns, and puts in lab.verdict_note, what a reader must know:
//  - the file's verdict disagreed with the recomputed one ("the file says held; its 2 trials say
//    broken: ..."),
//  - or the embedded scenario does not parse any more: the file's verdict is kept, unchecked.
// Empty when the file's verdict is confirmed. A skipped lab is left as it is (nothing to recompute).
std::string recheck_verdict(LabResult& lab);

}  // namespace relab
