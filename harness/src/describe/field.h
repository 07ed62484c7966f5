// One field of a described struct: its JSON key, the member it fills, what it means, its unit, its
// bounds and where its value comes from. A struct lists its fields once (describe/describe.h's
// Described<S>); the loader, relab's own JSON (role settings, reports), the schema, the docs and
// the figures an expectation may bound are all walked from that list, so a field is written down
// in one place.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

#include "describe/json_reader.h"

namespace relab::desc {

using scenario_json::Reader;

inline constexpr int64_t k_int_max = std::numeric_limits<int>::max();
inline constexpr int64_t k_int64_max = std::numeric_limits<int64_t>::max();

// What a number counts, for the reports and docs that print it.
enum class Unit { none, ms, us, bytes, per_s, percent };

// Where a field's value comes from.
enum class Origin {
    file,     // a scenario file gives it, or its default applies
    derived,  // the loader computes it (an event's drawn cost): relab's own JSON carries it, a file may not
};

// A figure of a result struct that an expectation may bound ("load": {"latency_p99_ms": {...}}): its
// name there, the unit it counts in, and how it comes from the struct. Most figures are their
// field's value in another unit (the field's microseconds as milliseconds, a rate rounded); a few
// are computed from several fields (a share of two counts).
template <class S>
struct Figure {
    std::string_view name;              // empty: the field is no figure
    Unit unit = Unit::none;             // what the figure counts; none: its field's unit
    int64_t (*of)(const S&) = nullptr;  // computed from the struct, instead of the field's value
    bool negative_unmeasured = false;   // a negative field value means "not measured": no figure
};

// What a value counts, and the bounds it must keep: integers in [lo, hi], strings non-empty unless allowed and
// matching `pattern` when one is given, arrays of at least min_items.
struct Limits {
    Unit unit = Unit::none;
    int64_t lo = std::numeric_limits<int64_t>::min();
    int64_t hi = std::numeric_limits<int64_t>::max();
    bool allow_empty = false;
    size_t min_items = 0;
    std::string_view pattern{};  // an ECMAScript regular expression a string must contain a match of
    // What an error says the field expects, where its type's own words ("a non-empty array") would not say what
    // to write ("a key format containing {client_key}"); an array's items keep their own words.
    std::string_view what{};
};

// The bounds a member's storage type sets by itself: an int's range, an int64_t's.
template <class M>
constexpr Limits storage_limits() {
    Limits l;
    if constexpr (std::is_integral_v<M> && !std::is_same_v<M, bool> && sizeof(M) < sizeof(int64_t)) {
        l.lo = std::numeric_limits<M>::min();
        l.hi = std::numeric_limits<M>::max();
    }
    return l;
}

template <class S, class M>
struct Field {
    using Struct = S;
    using Member = M;
    std::string_view key;
    M S::*member;
    std::string_view doc;
    Limits limits = storage_limits<M>();
    bool required = false;
    Origin origin = Origin::file;
    std::string_view examples{};  // JSON text of the schema's "examples", when the doc alone is unclear
    Figure<S> figure{};           // the figure an expectation may bound, if the field is one
    bool in_table = false;        // a column of the struct's table (write_table_row)

    constexpr Field in(int64_t lo, int64_t hi) const {
        Field f = *this;
        f.limits.lo = lo;
        f.limits.hi = hi;
        return f;
    }
    constexpr Field at_least(int64_t lo) const { return in(lo, limits.hi); }
    constexpr Field of(Unit u) const {
        Field f = *this;
        f.limits.unit = u;
        return f;
    }
    constexpr Field must() const {
        Field f = *this;
        f.required = true;
        return f;
    }
    constexpr Field derived() const {
        Field f = *this;
        f.origin = Origin::derived;
        return f;
    }
    constexpr Field may_be_empty() const {
        Field f = *this;
        f.limits.allow_empty = true;
        return f;
    }
    constexpr Field at_least_items(size_t n) const {
        Field f = *this;
        f.limits.min_items = n;
        return f;
    }
    constexpr Field matching(std::string_view regex) const {
        Field f = *this;
        f.limits.pattern = regex;
        return f;
    }
    constexpr Field expecting(std::string_view words) const {
        Field f = *this;
        f.limits.what = words;
        return f;
    }
    constexpr Field example(std::string_view json_text) const {
        Field f = *this;
        f.examples = json_text;
        return f;
    }
    // The field is a figure an expectation may bound by `name`: its value in `unit` (none: as it
    // is), or what `of` computes from the struct.
    constexpr Field bound_as(std::string_view name, Unit unit = Unit::none, int64_t (*of)(const S&) = nullptr) const {
        Field f = *this;
        f.figure.name = name;
        f.figure.unit = unit;
        f.figure.of = of;
        return f;
    }
    // The field is a figure an expectation may bound by its own key, as it is.
    constexpr Field bound() const { return bound_as(key); }
    // The field is a column of the struct's side-by-side table (the load and soak tables' JSON),
    // not only a field of the full record.
    constexpr Field tabled() const {
        Field f = *this;
        f.in_table = true;
        return f;
    }
    // Below zero the field was not measured (a consumer group that was not read): no figure then.
    constexpr Field unmeasured_below_zero() const {
        Field f = *this;
        f.figure.negative_unmeasured = true;
        return f;
    }
};

template <class S, class M>
constexpr Field<S, M> field(std::string_view key, M S::*member, std::string_view doc) {
    return Field<S, M>{key, member, doc};
}

// A member whose own fields sit in the parent's object rather than under a key of their own (a
// fault's trigger: "at_ms", "every_ms", ... beside "action").
template <class S, class M>
struct FlatField {
    using Struct = S;
    using Member = M;
    M S::*member;
};

template <class S, class M>
constexpr FlatField<S, M> flat(M S::*member) {
    return FlatField<S, M>{member};
}

// A key whose value does not map onto one member as it stands (a fault's "target", which names a
// role, a server or "matched"): read and written by functions of its own, with its schema as JSON
// text. `write` returns null to leave the key out.
template <class S, class J>
struct CustomField {
    using Struct = S;
    std::string_view key;
    std::string_view doc;
    void (*read)(const Reader&, const J&, const std::string& path, S&);
    J (*write)(const S&);
    std::string_view schema;  // the property's schema without its description
    bool required = false;
};

}  // namespace relab::desc
