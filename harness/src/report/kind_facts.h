// What the report formats ask of a lab's kind, answered in kind_facts.cpp alone: the formats ask
// these questions by name instead of comparing LabKind values, so that a new kind is placed once.
// (Which section a reporter writes for a kind is each reporter's family_sections.cpp.)
#pragma once

#include "scenario/scenario.h"

namespace relab {

// Scripted sessions: the lab counts cases, not trials, and no order of it has a final state to expect.
bool counts_cases(LabKind kind);
// A workload on a Redis stream (a producer or an outbox dispatcher, consumers): its trials have a
// stream, the orders' final states and an accounting.
bool has_stream(LabKind kind);
// Clients send requests through the idempotency middleware: its trials count orders and answers.
// (The benchmark and the cluster lab are idempotency labs that send none: they have figures only.)
bool sends_requests(LabKind kind);

}  // namespace relab
