// Structs described once, and everything walked from that description: a struct specialises
// Described<S> with its fields (describe/field.h), and these templates read it from a scenario file
// (checked, every failure naming its JSON Pointer), read it back from relab's own JSON (every
// field present), write it (whole, or as a scenario file would hold it: what differs from the
// defaults) and give its JSON Schema. Nothing here names a struct: the descriptions live beside
// the structs they describe.
#pragma once

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "describe/field.h"
#include "describe/json_reader.h"
#include "util/check.h"
#include "util/enum_names.h"
#include "util/json_number.h"

namespace relab::desc {

using nlohmann::json;
using ordered_json = nlohmann::ordered_json;
using scenario_json::Object;
using scenario_json::Reader;

// A struct's description, specialised beside the struct:
//   static constexpr std::string_view def;   its key in the schema's $defs (without it: inlined)
//   static constexpr std::string_view doc;   what it is
//   static constexpr auto fields = std::tuple{field(...), ...};
// and, where they apply:
//   static constexpr bool S::*presence;      the flag the object's presence sets ("lock": {...});
//                                            absent or null leaves it false
//   static constexpr bool nullable = true;   null stands for the defaults (no presence flag)
//   static void check(const Object&, S&);     rules across its fields, after a file's read
//   static constexpr std::string_view rules;  JSON text of the schema's rules across its fields
//                                            (an "allOf" array), merged into its $defs entry
template <class S>
struct Described;

template <class S>
concept IsDescribed = requires { Described<S>::fields; };

// Which reading: a scenario file (defaults apply, derived fields refused), relab's own JSON
// written whole (every field present, derived ones too: role settings), or relab's own JSON as any
// relab wrote it (reports: a field an older relab did not write, or wrote null, keeps its default,
// a field this relab no longer knows is ignored, and a string may be empty).
enum class Read { file, complete, lenient };
// Which writing: every field (relab's own JSON), or as a file holds it (the fields a file may
// give whose value differs from the default; a disabled section left out).
enum class Write { complete, file };

// A [min, max] pair: a range a value is drawn from uniformly.
struct Range {
    int64_t min = 0;
    int64_t max = 0;
    bool operator==(const Range&) const = default;
};

std::string unit_words(Unit u);  // "milliseconds", "microseconds", ...; "" for none

// Whether `text` contains a match of the ECMAScript regular expression `pattern` (JSON Schema's "pattern").
bool contains_match(const std::string& text, std::string_view pattern);

// JSON as relab's generated files hold it: two-space indents, UTF-8 as it is, an array of scalars
// on one line when it fits in 120 columns.
std::string pretty_json(const nlohmann::ordered_json& v);

template <class T>
struct Codec;

template <class S, class F>
void for_each_field(F&& f) {
    std::apply([&](const auto&... field) { (f(field), ...); }, Described<S>::fields);
}

template <class S>
constexpr bool has_presence() {
    return requires { Described<S>::presence; };
}

// Whether null stands for the struct's defaults (a section with a presence flag: off).
template <class S>
constexpr bool takes_null() {
    return has_presence<S>() || requires { Described<S>::nullable; };
}

template <class S>
std::vector<std::string> keys(Read mode = Read::file);

// The keys `v` holds, when it is an object: what a lenient read ignores beside its own fields.
inline std::vector<std::string> keys_of(const json& v) {
    std::vector<std::string> out;
    if (v.is_object())
        for (const auto& [key, value] : v.items()) out.push_back(key);
    return out;
}

// --- each kind of field: its keys, its read, its write ---

template <class S, class M>
void add_keys(const Field<S, M>& f, Read mode, std::vector<std::string>& out) {
    if (mode == Read::complete || f.origin == Origin::file) out.emplace_back(f.key);
}
template <class S, class M>
void add_keys(const FlatField<S, M>&, Read mode, std::vector<std::string>& out) {
    for (auto& k : keys<M>(mode)) out.push_back(std::move(k));
}
template <class S, class J>
void add_keys(const CustomField<S, J>& f, Read, std::vector<std::string>& out) {
    out.emplace_back(f.key);
}

template <class S>
void read_fields(const Object& o, S& s, Read mode);

template <class S, class M>
void read_one(const Object& o, const Field<S, M>& f, S& s, Read mode) {
    if (mode == Read::file && f.origin == Origin::derived) return;
    const std::string key(f.key);
    if (!o.has(key) || (mode == Read::lenient && o.at(key).is_null())) {
        if ((f.required && mode != Read::lenient) || mode == Read::complete)
            o.reader().fail(o.path(key), "required field is missing");
        return;
    }
    s.*f.member = Codec<M>::read(o.reader(), o.at(key), o.path(key), f.limits, mode);
}
template <class S, class M>
void read_one(const Object& o, const FlatField<S, M>& f, S& s, Read mode) {
    read_fields(o, s.*f.member, mode);
}
template <class S, class J>
void read_one(const Object& o, const CustomField<S, J>& f, S& s, Read mode) {
    const std::string key(f.key);
    if (o.has(key))
        f.read(o.reader(), o.at(key), o.path(key), s);
    else if (f.required)
        o.reader().fail(o.path(key), "required field is missing");
    (void)mode;
}

// Every field of S from the object `o` (its flat members' too), then S's rules across them.
template <class S>
void read_fields(const Object& o, S& s, Read mode) {
    for_each_field<S>([&](const auto& f) { read_one(o, f, s, mode); });
    if constexpr (requires { Described<S>::check(o, s); })
        if (mode == Read::file) Described<S>::check(o, s);
}

// The keys an object of S may hold in `mode`, in the description's order.
template <class S>
std::vector<std::string> keys(Read mode) {
    std::vector<std::string> out;
    for_each_field<S>([&](const auto& f) { add_keys(f, mode, out); });
    return out;
}

// `also`: keys of the same object that another reader takes (an exec role's program beside the
// producer's settings), accepted here and listed among the known fields.
template <class S>
S read_struct(const Reader& r, const json& v, const std::string& path, Read mode,
              const std::vector<std::string>& also = {}) {
    S s{};
    if (takes_null<S>() || mode == Read::lenient) {
        if (v.is_null()) return s;
    }
    if constexpr (has_presence<S>()) s.*Described<S>::presence = true;
    std::vector<std::string> known = keys<S>(mode);
    known.insert(known.end(), also.begin(), also.end());
    const Object o(r, v, path, known, mode == Read::lenient ? keys_of(v) : std::vector<std::string>{});
    read_fields(o, s, mode);
    return s;
}

// A value of the member type's default: what a file may leave out.
template <class S, class M>
bool is_default(const S& s, M S::*member) {
    if constexpr (std::equality_comparable<M>) {
        static const S defaults{};
        return s.*member == defaults.*member;
    } else {
        return false;
    }
}

template <class S>
void write_fields(const S& s, Write mode, json& out);

template <class S, class M>
void write_one(const Field<S, M>& f, const S& s, Write mode, json& out) {
    // A required field is written even at its default: a file without it would not load.
    if (mode == Write::file && (f.origin == Origin::derived || (!f.required && is_default(s, f.member)))) return;
    json v = Codec<M>::write(s.*f.member, mode);
    if (mode == Write::file && v.is_null()) return;  // a disabled section or an absent option
    out[std::string(f.key)] = std::move(v);
}
template <class S, class M>
void write_one(const FlatField<S, M>& f, const S& s, Write mode, json& out) {
    write_fields(s.*f.member, mode, out);
}
template <class S, class J>
void write_one(const CustomField<S, J>& f, const S& s, Write, json& out) {
    json v = f.write(s);
    if (!v.is_null()) out[std::string(f.key)] = std::move(v);
}

template <class S>
void write_fields(const S& s, Write mode, json& out) {
    for_each_field<S>([&](const auto& f) { write_one(f, s, mode, out); });
}

template <class S>
json write_struct(const S& s, Write mode) {
    if constexpr (has_presence<S>()) {
        if (!(s.*Described<S>::presence)) return nullptr;
    }
    json out = json::object();
    write_fields(s, mode, out);
    return out;
}

template <class S>
ordered_json schema_object();

// --- scalars ---

template <>
struct Codec<bool> {
    static bool read(const Reader& r, const json& v, const std::string& path, const Limits&, Read) {
        if (!v.is_boolean()) r.expected(path, "true or false", v);
        return v.get<bool>();
    }
    static json write(bool b, Write) { return b; }
    static void schema(ordered_json& p, const Limits&) { p["type"] = "boolean"; }
    static constexpr bool has_default = true;
};

template <class T>
    requires(std::is_integral_v<T> && std::is_signed_v<T> && !std::is_same_v<T, bool>)
struct Codec<T> {
    // The bounds the field states, within what T can hold (an int in a list bounded only below).
    static int64_t lo(const Limits& l) { return std::max<int64_t>(l.lo, std::numeric_limits<T>::min()); }
    static int64_t hi(const Limits& l) { return std::min<int64_t>(l.hi, std::numeric_limits<T>::max()); }
    static T read(const Reader& r, const json& v, const std::string& path, const Limits& l, Read m) {
        // A report may hold an integer as a number with a fraction (JSON has one kind of number):
        // its integer part, as the report readers always took it.
        if (m == Read::lenient && v.is_number_float())
            if (const auto x = json_number_as<T>(v)) return *x;
        return static_cast<T>(r.integer(v, path, lo(l), hi(l)));
    }
    static json write(T x, Write) { return static_cast<int64_t>(x); }
    static void schema(ordered_json& p, const Limits& l) {
        p["type"] = "integer";
        if (lo(l) != std::numeric_limits<T>::min()) p["minimum"] = lo(l);
        if (hi(l) != std::numeric_limits<int64_t>::max()) p["maximum"] = hi(l);
    }
    static constexpr bool has_default = true;
};

template <>
struct Codec<uint64_t> {
    static uint64_t read(const Reader& r, const json& v, const std::string& path, const Limits&, Read) {
        return r.unsigned_integer(v, path);
    }
    static json write(uint64_t x, Write) { return x; }
    static void schema(ordered_json& p, const Limits&) {
        p["type"] = "integer";
        p["minimum"] = 0;
    }
    static constexpr bool has_default = true;
};

template <>
struct Codec<double> {
    static double read(const Reader& r, const json& v, const std::string& path, const Limits& l, Read) {
        const bool from = l.lo != std::numeric_limits<int64_t>::min(), to = l.hi != std::numeric_limits<int64_t>::max();
        const std::string what = from && to ? fmt::format("a number in {}..{}", l.lo, l.hi)
                                 : from     ? fmt::format("a number >= {}", l.lo)
                                            : "a number";
        if (!v.is_number() || v.get<double>() < static_cast<double>(l.lo) || v.get<double>() > static_cast<double>(l.hi))
            r.expected(path, what, v);
        return v.get<double>();
    }
    // A whole number as an integer: 200, not 200.0.
    static json write(double x, Write) {
        const bool whole = x == std::trunc(x) && std::fabs(x) < 9e15;
        return whole ? json(static_cast<int64_t>(x)) : json(x);
    }
    static void schema(ordered_json& p, const Limits& l) {
        p["type"] = "number";
        if (l.lo != std::numeric_limits<int64_t>::min()) p["minimum"] = l.lo;
        if (l.hi != std::numeric_limits<int64_t>::max()) p["maximum"] = l.hi;
    }
    static constexpr bool has_default = true;
};

template <>
struct Codec<std::string> {
    // relab's own JSON holds any string the struct held: an empty one where a file left the field out.
    static std::string read(const Reader& r, const json& v, const std::string& path, const Limits& l, Read m) {
        if (m == Read::complete || m == Read::lenient) return r.string(v, path, false);
        if (l.what.empty() && l.pattern.empty()) return r.string(v, path, !l.allow_empty);
        const std::string what = !l.what.empty() ? std::string(l.what) : fmt::format("a string matching {}", l.pattern);
        if (!v.is_string() || (!l.allow_empty && v.get<std::string>().empty()) ||
            (!l.pattern.empty() && !contains_match(v.get<std::string>(), l.pattern)))
            r.expected(path, what, v);
        return v.get<std::string>();
    }
    static json write(const std::string& s, Write) { return s; }
    static void schema(ordered_json& p, const Limits& l) {
        p["type"] = "string";
        if (!l.allow_empty) p["minLength"] = 1;
        if (!l.pattern.empty()) p["pattern"] = l.pattern;
    }
    static constexpr bool has_default = true;
};

// An enum by the names of its table: enum_names(E{}), found by argument-dependent lookup beside
// the enum, returns its rows of {value, name} (util/enum_names.h).
template <class E>
    requires std::is_enum_v<E>
struct Codec<E> {
    static const auto& table() { return enum_names(E{}); }
    static E read(const Reader& r, const json& v, const std::string& path, const Limits&, Read) {
        const auto value = v.is_string() ? value_named(table(), v.get<std::string>()) : std::nullopt;
        if (!value) r.expected(path, "one of " + scenario_json::quoted_list(names_in(table())), v);
        return *value;
    }
    static json write(E e, Write) { return std::string(name_in(table(), e)); }
    static void schema(ordered_json& p, const Limits&) {
        p["type"] = "string";
        p["enum"] = names_in(table());
    }
    static constexpr bool has_default = true;
};

template <>
struct Codec<Range> {
    static Range read(const Reader& r, const json& v, const std::string& path, const Limits& l, Read) {
        const std::string what = "[min, max]" + (l.unit == Unit::none ? "" : " in " + unit_words(l.unit));
        if (!v.is_array() || v.size() != 2) r.expected(path, what, v);
        Range out{r.integer(v[0], scenario_json::child(path, 0), l.lo, l.hi),
                  r.integer(v[1], scenario_json::child(path, 1), l.lo, l.hi)};
        if (out.min > out.max) r.expected(path, "[min, max] with min <= max", v);
        return out;
    }
    static json write(const Range& x, Write) { return json::array({x.min, x.max}); }
    static void schema(ordered_json& p, const Limits& l) {
        const std::string unit = l.unit == Unit::none ? "" : ", " + unit_words(l.unit);
        p["type"] = "array";
        ordered_json items = ordered_json::array();
        for (const std::string& which : {"min" + unit, "max" + unit + " (>= min)"}) {
            ordered_json item = ordered_json::object();
            item["type"] = "integer";
            item["minimum"] = l.lo;
            item["description"] = which;
            items.push_back(std::move(item));
        }
        p["prefixItems"] = std::move(items);
        p["items"] = false;
        p["minItems"] = 2;
    }
    static constexpr bool has_default = true;
};

// --- containers ---

// An option: absent is none, and so is null where relab wrote it (complete) or for a section.
template <class T>
struct Codec<std::optional<T>> {
    static std::optional<T> read(const Reader& r, const json& v, const std::string& path, const Limits& l, Read m) {
        if (v.is_null() && (IsDescribed<T> || m != Read::file)) return std::nullopt;
        return Codec<T>::read(r, v, path, l, m);
    }
    static json write(const std::optional<T>& x, Write m) { return x ? Codec<T>::write(*x, m) : json(nullptr); }
    static void schema(ordered_json& p, const Limits& l) {
        Codec<T>::schema(p, l);
        if constexpr (IsDescribed<T>)
            if (p.contains("type") && p.at("type") == "object") p["type"] = ordered_json::array({"object", "null"});
    }
    static constexpr bool has_default = false;
};

// What an array of at least `l.min_items` items is called in an error.
inline std::string array_words(const Limits& l) {
    if (!l.what.empty()) return std::string(l.what);
    if (l.min_items > 1) return fmt::format("an array of at least {} items", l.min_items);
    return l.min_items == 1 ? "a non-empty array" : "an array";
}

// The limits an array's items keep: the field's bounds, without the words meant for the whole array.
inline Limits item_limits(Limits l) {
    l.what = {};
    return l;
}

template <class T>
struct Codec<std::vector<T>> {
    static std::vector<T> read(const Reader& r, const json& v, const std::string& path, const Limits& l, Read m) {
        // relab's own JSON holds any list the struct held: an empty one where a file left the field out.
        if (!v.is_array() || (m != Read::complete && v.size() < l.min_items)) r.expected(path, array_words(l), v);
        std::vector<T> out;
        out.reserve(v.size());
        for (size_t i = 0; i < v.size(); ++i)
            out.push_back(Codec<T>::read(r, v[i], scenario_json::child(path, i), item_limits(l), m));
        return out;
    }
    static json write(const std::vector<T>& xs, Write m) {
        json out = json::array();
        for (const auto& x : xs) out.push_back(Codec<T>::write(x, m));
        return out;
    }
    static void schema(ordered_json& p, const Limits& l) {
        ordered_json item;
        Codec<T>::schema(item, l);
        p["type"] = "array";
        p["items"] = std::move(item);
        if (l.min_items > 0) p["minItems"] = l.min_items;
    }
    // A list's default is shown where it holds something (an empty list is no value to show).
    static constexpr bool has_default = true;
};

// One value or a non-empty list of them: "at_ms": 0 or "at_ms": [0, 700]. A list of one is written
// as the value alone.
template <class T>
struct OneOrMany : std::vector<T> {
    using std::vector<T>::vector;
    OneOrMany(std::vector<T> v) : std::vector<T>(std::move(v)) {}
};

template <class T>
struct Codec<OneOrMany<T>> {
    static Limits list_limits(Limits l) {
        l.min_items = std::max<size_t>(l.min_items, 1);
        return l;
    }
    static OneOrMany<T> read(const Reader& r, const json& v, const std::string& path, const Limits& l, Read m) {
        if (v.is_array()) return Codec<std::vector<T>>::read(r, v, path, list_limits(l), m);
        return OneOrMany<T>{Codec<T>::read(r, v, path, l, m)};
    }
    static json write(const OneOrMany<T>& xs, Write m) {
        return xs.size() == 1 ? Codec<T>::write(xs.front(), m) : Codec<std::vector<T>>::write(xs, m);
    }
    static void schema(ordered_json& p, const Limits& l) {
        ordered_json one = ordered_json::object(), many = ordered_json::object();
        Codec<T>::schema(one, item_limits(l));
        Codec<std::vector<T>>::schema(many, list_limits(l));
        p["oneOf"] = ordered_json::array({std::move(one), std::move(many)});
    }
    static constexpr bool has_default = true;
};

template <class T>
struct Codec<std::map<std::string, T>> {
    static std::map<std::string, T> read(const Reader& r, const json& v, const std::string& path, const Limits& l, Read m) {
        if (!v.is_object()) r.expected(path, "an object", v);
        std::map<std::string, T> out;
        for (const auto& [key, value] : v.items()) out[key] = Codec<T>::read(r, value, scenario_json::child(path, key), l, m);
        return out;
    }
    static json write(const std::map<std::string, T>& xs, Write m) {
        json out = json::object();
        for (const auto& [key, value] : xs) out[key] = Codec<T>::write(value, m);
        return out;
    }
    static void schema(ordered_json& p, const Limits& l) {
        ordered_json value;
        Codec<T>::schema(value, l);
        p["type"] = "object";
        p["additionalProperties"] = std::move(value);
    }
    static constexpr bool has_default = false;
};

template <class S>
    requires IsDescribed<S>
struct Codec<S> {
    static S read(const Reader& r, const json& v, const std::string& path, const Limits&, Read m) {
        return read_struct<S>(r, v, path, m);
    }
    static json write(const S& s, Write m) { return write_struct(s, m); }
    static void schema(ordered_json& p, const Limits&) {
        if constexpr (requires { Described<S>::def; })
            p["$ref"] = "#/$defs/" + std::string(Described<S>::def);
        else
            p.update(schema_object<S>());
    }
    static constexpr bool has_default = false;
};

// --- the schema ---

template <class S, class M>
ordered_json field_schema(const Field<S, M>& f) {
    ordered_json p = ordered_json::object();
    if (!f.doc.empty()) p["description"] = f.doc;
    if (!f.examples.empty()) p["examples"] = ordered_json::parse(f.examples);
    if constexpr (Codec<M>::has_default) {
        static const S defaults{};
        // An empty string or list by default stands for none: no value a file would write.
        const json d = Codec<M>::write(defaults.*f.member, Write::complete);
        const bool none = (d.is_string() && d.get_ref<const std::string&>().empty()) || (d.is_array() && d.empty());
        if (!f.required && !none) p["default"] = ordered_json::parse(d.dump());
    }
    Codec<M>::schema(p, f.limits);
    return p;
}

template <class S>
void schema_fields(ordered_json& properties, ordered_json& required);

template <class S, class M>
void schema_one(const Field<S, M>& f, ordered_json& properties, ordered_json& required) {
    if (f.origin == Origin::derived) return;
    properties[std::string(f.key)] = field_schema(f);
    if (f.required) required.push_back(f.key);
}
template <class S, class M>
void schema_one(const FlatField<S, M>&, ordered_json& properties, ordered_json& required) {
    schema_fields<M>(properties, required);
}
template <class S, class J>
void schema_one(const CustomField<S, J>& f, ordered_json& properties, ordered_json& required) {
    ordered_json p = ordered_json::object();
    if (!f.doc.empty()) p["description"] = f.doc;
    const ordered_json rest = ordered_json::parse(f.schema);
    for (const auto& [key, value] : rest.items()) p[key] = value;
    properties[std::string(f.key)] = std::move(p);
    if (f.required) required.push_back(f.key);
}

template <class S>
void schema_fields(ordered_json& properties, ordered_json& required) {
    for_each_field<S>([&](const auto& f) { schema_one(f, properties, required); });
}

// S's schema: {"description", "type", "additionalProperties": false, "properties", "required",
// and its rules}. A struct with a presence flag may also be null.
template <class S>
ordered_json schema_object() {
    ordered_json out = ordered_json::object();
    if constexpr (requires { Described<S>::doc; }) out["description"] = Described<S>::doc;
    if constexpr (takes_null<S>())
        out["type"] = ordered_json::array({"object", "null"});
    else
        out["type"] = "object";
    out["additionalProperties"] = false;
    ordered_json properties = ordered_json::object();
    ordered_json required = ordered_json::array();
    schema_fields<S>(properties, required);
    out["properties"] = std::move(properties);
    if (!required.empty()) out["required"] = std::move(required);
    if constexpr (requires { Described<S>::rules; }) {
        const ordered_json rules = ordered_json::parse(Described<S>::rules);
        for (const auto& [key, value] : rules.items()) out[key] = value;
    }
    return out;
}

// --- the $defs a struct's schema refers to ---

// Adds to `defs` the $defs entry of every described struct with a `def` that T is or holds.
template <class T>
struct Defs {
    static void add(ordered_json&) {}
};
template <class T>
struct Defs<std::optional<T>> {
    static void add(ordered_json& defs) { Defs<T>::add(defs); }
};
template <class T>
struct Defs<std::vector<T>> {
    static void add(ordered_json& defs) { Defs<T>::add(defs); }
};
template <class T>
struct Defs<OneOrMany<T>> {
    static void add(ordered_json& defs) { Defs<T>::add(defs); }
};
template <class T>
struct Defs<std::map<std::string, T>> {
    static void add(ordered_json& defs) { Defs<T>::add(defs); }
};

template <class S, class M>
void add_defs(const Field<S, M>& f, ordered_json& defs) {
    if (f.origin == Origin::file) Defs<M>::add(defs);
}
template <class S, class M>
void add_defs(const FlatField<S, M>&, ordered_json& defs) {
    Defs<M>::add(defs);
}
template <class S, class J>
void add_defs(const CustomField<S, J>&, ordered_json&) {}

template <class S>
    requires IsDescribed<S>
struct Defs<S> {
    static void add(ordered_json& defs) {
        if constexpr (requires { Described<S>::def; }) {
            const std::string name(Described<S>::def);
            if (defs.contains(name)) return;
            defs[name] = schema_object<S>();
        }
        for_each_field<S>([&](const auto& f) { add_defs(f, defs); });
    }
};

// --- the entry points ---

// S from a scenario file's object at `path`: unknown fields refused, defaults for what it leaves out.
template <class S>
S read_file(const Reader& r, const json& v, const std::string& path, const std::vector<std::string>& also = {}) {
    return read_struct<S>(r, v, path, Read::file, also);
}

// A value of any described shape (a list of described structs, a map) from a scenario file.
template <class T>
T read_value(const Reader& r, const json& v, const std::string& path, const Limits& limits = {}) {
    return Codec<T>::read(r, v, path, limits, Read::file);
}

// S from relab's own JSON written by write_complete: every field must be there. `what` names the
// JSON in errors ("role settings").
template <class S>
S read_complete(const json& v, const std::string& what) {
    return read_struct<S>(Reader(what), v, "", Read::complete);
}

// S from relab's own JSON as any relab wrote it (a report): absent or null fields keep their
// defaults, unknown ones are ignored; a value of the wrong type is a ScenarioError naming `what`
// and its JSON Pointer, `path` being where `v` is in that JSON.
template <class S>
S read_lenient(const json& v, const std::string& what, const std::string& path) {
    return read_struct<S>(Reader(what), v, path, Read::lenient);
}

template <class S>
json write_complete(const S& s) {
    return write_struct(s, Write::complete);
}

// The fields of S marked tabled(), as write_complete writes them: a row of a table that sets
// structs side by side, which leaves out what only the full record needs.
template <class S>
json write_table_row(const S& s) {
    json out = json::object();
    for_each_field<S>([&](const auto& f) {
        if constexpr (requires { f.in_table; })  // a flat or custom field is no column
            if (f.in_table) write_one(f, s, Write::complete, out);
    });
    return out;
}

// S as a scenario file would give it: what differs from the defaults.
template <class S>
json write_file(const S& s) {
    return write_struct(s, Write::file);
}

// A value of any described shape (a list of described structs, a map) as a scenario file holds it.
template <class T>
json write_value(const T& v) {
    return Codec<T>::write(v, Write::file);
}

// --- the figures an expectation may bound ---

// `x` counted in `from` as counted in `to`: microseconds as milliseconds (an integer truncated),
// and back; a unit as itself.
template <class T>
T in_unit(T x, Unit from, Unit to) {
    if (from == to) return x;
    if (from == Unit::us && to == Unit::ms) return x / 1000;
    RELAB_CHECK(from == Unit::ms && to == Unit::us, "a figure converted between units other than ms and us");
    return x * 1000;
}

// The figures of S an expectation may bound (fields marked bound_as), in the description's order.
template <class S>
std::vector<std::string> figure_names() {
    std::vector<std::string> out;
    for_each_field<S>([&](const auto& f) {
        if constexpr (requires { f.figure; })  // a flat or custom field is no figure
            if (!f.figure.name.empty()) out.emplace_back(f.figure.name);
    });
    return out;
}

// The figure one field gives, as an integer: its value in the figure's unit (a number with a
// fraction rounded, a bool 0 or 1), or what the figure computes; nullopt when not measured.
template <class S, class M>
std::optional<int64_t> figure_value(const S& s, const Field<S, M>& f) {
    if (f.figure.of) return f.figure.of(s);
    const Unit to = f.figure.unit == Unit::none ? f.limits.unit : f.figure.unit;
    const M& v = s.*f.member;
    if constexpr (std::is_same_v<M, bool>) {
        return v ? 1 : 0;
    } else if constexpr (std::is_floating_point_v<M>) {
        return std::llround(in_unit(static_cast<double>(v), f.limits.unit, to));
    } else if constexpr (std::is_integral_v<M>) {
        if (f.figure.negative_unmeasured && v < 0) return std::nullopt;
        return in_unit(static_cast<int64_t>(v), f.limits.unit, to);
    } else {
        RELAB_CHECK(f.figure.name.empty(), "a figure that is not a number must be computed by `of`");
        return std::nullopt;
    }
}

// The figure of `s` named `name`; nullopt for a name that is none of figure_names<S>(), or a
// figure not measured.
template <class S>
std::optional<int64_t> figure(const S& s, std::string_view name) {
    std::optional<int64_t> out;
    for_each_field<S>([&](const auto& f) {
        if constexpr (requires { f.figure; })
            if (!f.figure.name.empty() && f.figure.name == name) out = figure_value(s, f);
    });
    return out;
}

}  // namespace relab::desc
