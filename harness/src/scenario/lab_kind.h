// What a lab is, and everything a layer asks of its kind, described once: one row per kind. The
// loader decides a lab's kind once, from the marks of these rows; every other layer asks its row a
// question by name (has_stream, counts_cases, …) instead of comparing kinds, so a new kind is a new
// value and a new row here, its family's data (SpecType, Scenario::spec), plus its hooks in
// families/ and its section in each reporter (whose tables a static_assert holds to one row per kind).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace relab {

enum class LabKind : uint8_t {
    stream,          // "kind": "workload": a producer (or outbox dispatcher), consumers, a Redis stream
    sessions,        // "kind": "sessions": scripted psql / redis-cli sessions, case by case
    idem_clients,    // a workload with "idem": clients send requests through the idempotency middleware
    idem_benchmark,  // a workload with "idem": {"benchmark"}: the claim's cost, Redis vs PostgreSQL
    idem_cluster,    // a workload with "idem": {"cluster"}: hash tags and slots on a Redis Cluster
};

// Which family's data a lab holds: the alternative of Scenario::spec (scenario.h's LabSpec, whose
// alternatives a static_assert holds to this order) its kind's row names.
enum class SpecType : uint8_t {
    stream,    // StreamLab (stream_lab.h): a stream, its workload, consumers and publishers
    sessions,  // SessionsLab (sessions_lab.h): the scripted cases
    idem,      // IdemSpec (idem/idem_spec.h): article 002's clients, benchmark or cluster
};

struct KindRow {
    LabKind value;
    std::string_view name;  // in reports ("lab_kind") and `relab list`
    // How a scenario file marks the kind: its "kind" field, and the JSON path ("idem/cluster") it
    // must hold; a row without a path is its "kind"'s plain case, and the deepest path held wins.
    std::string_view file_kind;
    std::string_view mark;
    // Its family's data: a stream (final states and an accounting), scripted sessions (cases, not
    // trials, and no trial history) or article 002's labs (request counts and figures).
    SpecType spec = SpecType::stream;
    bool sends_requests = false;  // clients send requests through the idempotency middleware
    bool runs_roles = false;      // its roles run under a supervisor: they may be given servers, faults, programs
    bool repeats = false;         // its trials may go either way, so `until_wrong` may repeat them
    bool forms_cluster = false;   // the real backend forms a Redis Cluster for it
};

inline constexpr KindRow k_kind_rows[] = {
    {.value = LabKind::stream, .name = "stream", .file_kind = "workload", .mark = "", .spec = SpecType::stream,
     .runs_roles = true, .repeats = true},
    {.value = LabKind::sessions, .name = "sessions", .file_kind = "sessions", .mark = "", .spec = SpecType::sessions},
    {.value = LabKind::idem_clients, .name = "idem_clients", .file_kind = "workload", .mark = "idem",
     .spec = SpecType::idem, .sends_requests = true, .runs_roles = true, .repeats = true},
    {.value = LabKind::idem_benchmark, .name = "idem_benchmark", .file_kind = "workload", .mark = "idem/benchmark",
     .spec = SpecType::idem},
    {.value = LabKind::idem_cluster, .name = "idem_cluster", .file_kind = "workload", .mark = "idem/cluster",
     .spec = SpecType::idem, .repeats = true, .forms_cluster = true},
};

inline constexpr size_t k_lab_kind_count = std::size(k_kind_rows);
// A Scenario's kind before the loader decides it.
inline constexpr LabKind k_default_lab_kind = LabKind::stream;

constexpr bool kind_rows_in_order() {
    for (size_t i = 0; i < k_lab_kind_count; ++i)
        if (static_cast<size_t>(k_kind_rows[i].value) != i) return false;
    return true;
}
static_assert(kind_rows_in_order(), "k_kind_rows holds one row per LabKind, in the enum's order");

inline const KindRow& kind_row(LabKind k) { return k_kind_rows[static_cast<size_t>(k)]; }

std::string to_string(LabKind k);
std::optional<LabKind> lab_kind_named(const std::string& name);
std::vector<std::string> lab_kind_names();
// The kind a scenario file marks: its "kind" value, and whether it holds each JSON path a row marks.
// nullopt when no row has that "kind".
template <class Holds>
std::optional<LabKind> kind_marked(std::string_view file_kind, const Holds& holds) {
    std::optional<LabKind> out;
    size_t depth = 0;
    for (const KindRow& row : k_kind_rows) {
        if (row.file_kind != file_kind) continue;
        const size_t d = row.mark.empty() ? 0 : 1 + static_cast<size_t>(std::count(row.mark.begin(), row.mark.end(), '/'));
        if ((d == 0 || holds(row.mark)) && (!out || d >= depth)) out = row.value, depth = d;
    }
    return out;
}

// The first kind, in LabKind's order, whose row satisfies `pred`; a predicate no row satisfies is a bug.
template <class Pred>
LabKind first_kind_where(const Pred& pred) {
    for (const KindRow& row : k_kind_rows)
        if (pred(row)) return row.value;
    throw std::logic_error("no lab kind's row answers the question asked of it");
}

// The questions asked most, by name.
inline bool is_idem(LabKind k) { return kind_row(k).spec == SpecType::idem; }
inline bool has_stream(LabKind k) { return kind_row(k).spec == SpecType::stream; }
inline bool counts_cases(LabKind k) { return kind_row(k).spec == SpecType::sessions; }
inline bool sends_requests(LabKind k) { return kind_row(k).sends_requests; }

}  // namespace relab
