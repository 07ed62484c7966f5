#include "report/kind_facts.h"

namespace relab {

namespace {

struct KindFacts {
    bool counts_cases = false;
    bool has_stream = false;
    bool sends_requests = false;
};

// Every kind's answers in one switch, without `default:`: the compiler names it for a new kind.
KindFacts facts_of_kind(LabKind kind) {
    switch (kind) {
        case LabKind::stream: return {.has_stream = true};
        case LabKind::sessions: return {.counts_cases = true};
        case LabKind::idem_clients: return {.sends_requests = true};
        case LabKind::idem_benchmark:
        case LabKind::idem_cluster: return {};
    }
    return {};
}

}  // namespace

bool counts_cases(LabKind kind) { return facts_of_kind(kind).counts_cases; }

bool has_stream(LabKind kind) { return facts_of_kind(kind).has_stream; }

bool sends_requests(LabKind kind) { return facts_of_kind(kind).sends_requests; }

}  // namespace relab
