// The checked reading of JSON that every loader shares: each failure is a ScenarioError naming the
// file, the JSON Pointer of the value and what was expected. The scenario loaders use it, and the
// described structs' generic reader (describe/describe.h) reads every field through it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "describe/json_error.h"
#include "ports/history_op.h"

namespace relab::scenario_json {

using nlohmann::json;

inline constexpr int64_t k_int64_min = std::numeric_limits<int64_t>::min();
inline constexpr int64_t k_int64_max = std::numeric_limits<int64_t>::max();
inline constexpr int64_t k_int_max = std::numeric_limits<int>::max();

// RFC 6901 escaping, so a key holding '/' or '~' still names exactly one place.
inline std::string pointer_token(const std::string& key) {
    std::string out;
    for (char c : key) {
        if (c == '~')
            out += "~0";
        else if (c == '/')
            out += "~1";
        else
            out += c;
    }
    return out;
}

inline std::string child(const std::string& path, const std::string& key) { return path + "/" + pointer_token(key); }
inline std::string child(const std::string& path, size_t index) { return path + "/" + std::to_string(index); }

// A value as shown after "got": its JSON text, cut short (on a UTF-8 boundary) when long.
inline std::string shown(const json& v) {
    std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
    constexpr size_t k_limit = 60;
    if (text.size() > k_limit) {
        size_t cut = k_limit;
        while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
        text = text.substr(0, cut) + "...";
    }
    return text;
}

inline std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
    return out;
}

inline std::string quoted_list(const std::vector<std::string>& items) {
    std::vector<std::string> q;
    for (const auto& s : items) q.push_back("\"" + s + "\"");
    return joined(q);
}

// What an integer in [lo, hi] is called. An upper bound that only guards the storage type
// (int or int64_t) is left out of the wording.
inline std::string integer_range_text(int64_t lo, int64_t hi) {
    if (hi == k_int_max) hi = k_int64_max;
    if (lo == k_int64_min && hi == k_int64_max) return "an integer";
    if (lo == 0 && hi == k_int64_max) return "a non-negative integer";
    if (lo == 1 && hi == k_int64_max) return "a positive integer";
    if (hi == k_int64_max) return fmt::format("an integer >= {}", lo);
    return fmt::format("an integer in {}..{}", lo, hi);
}

inline bool is_slug(const std::string& s) {
    auto ok = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (s.empty() || !ok(s[0])) return false;
    return std::all_of(s.begin(), s.end(), [&](char c) { return ok(c) || c == '-'; });
}

// Reads values of one file; every failure throws ScenarioError naming that file.
class Reader {
public:
    explicit Reader(std::string file) : m_file(std::move(file)) {}

    [[noreturn]] void fail(const std::string& path, const std::string& reason) const {
        throw ScenarioError(m_file, path, reason);
    }
    [[noreturn]] void expected(const std::string& path, const std::string& what, const json& got) const {
        fail(path, fmt::format("expected {}, got {}", what, shown(got)));
    }

    std::string string(const json& v, const std::string& path, bool non_empty = true) const {
        if (!v.is_string()) expected(path, non_empty ? "a non-empty string" : "a string", v);
        std::string s = v.get<std::string>();
        if (non_empty && s.empty()) expected(path, "a non-empty string", v);
        return s;
    }

    int64_t integer(const json& v, const std::string& path, int64_t lo, int64_t hi) const {
        const std::string what = integer_range_text(lo, hi);
        if (!v.is_number_integer()) expected(path, what, v);
        if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(k_int64_max)) expected(path, what, v);
        const int64_t x = v.get<int64_t>();
        if (x < lo) expected(path, what, v);
        if (x > hi) expected(path, hi == k_int_max ? fmt::format("{} no larger than {}", what, hi) : what, v);
        return x;
    }

    uint64_t unsigned_integer(const json& v, const std::string& path) const {
        if (v.is_number_unsigned()) return v.get<uint64_t>();
        if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
        expected(path, "a non-negative integer", v);
    }

    const json& array(const json& v, const std::string& path, bool non_empty) const {
        if (!v.is_array() || (non_empty && v.empty()))
            expected(path, non_empty ? "a non-empty array" : "an array", v);
        return v;
    }

    std::vector<std::string> strings(const json& v, const std::string& path) const {
        std::vector<std::string> out;
        array(v, path, false);
        for (size_t i = 0; i < v.size(); ++i) out.push_back(string(v[i], child(path, i), false));
        return out;
    }

    const std::string& file() const { return m_file; }

private:
    std::string m_file;
};

// One JSON object of the file, with the fields it may hold. Construction rejects a non-object and
// any field not in `known` or `ignored` (fields accepted and left unread, kept out of the "known
// fields" an error lists: the top level's "$schema").
class Object {
public:
    Object(const Reader& r, const json& v, std::string path, const std::vector<std::string>& known,
           const std::vector<std::string>& ignored = {})
        : m_r(r), m_v(v), m_path(std::move(path)) {
        if (!v.is_object()) m_r.expected(m_path, "an object", v);
        for (const auto& [key, value] : v.items()) {
            if (std::find(known.begin(), known.end(), key) == known.end() &&
                std::find(ignored.begin(), ignored.end(), key) == ignored.end())
                m_r.fail(child(m_path, key), "unknown field; known fields are: " + joined(known));
        }
    }

    const Reader& reader() const { return m_r; }
    const json& value() const { return m_v; }
    const std::string& path() const { return m_path; }
    std::string path(const std::string& key) const { return child(m_path, key); }
    bool has(const std::string& key) const { return m_v.contains(key); }

    const json& at(const std::string& key) const {
        if (!has(key)) m_r.fail(path(key), "required field is missing");
        return m_v.at(key);
    }

    std::string req_string(const std::string& key, bool non_empty = true) const {
        return m_r.string(at(key), path(key), non_empty);
    }
    std::string opt_string(const std::string& key, std::string fallback, bool non_empty = true) const {
        return has(key) ? req_string(key, non_empty) : std::move(fallback);
    }
    std::optional<std::string> maybe_string(const std::string& key, bool non_empty = true) const {
        if (!has(key)) return std::nullopt;
        return req_string(key, non_empty);
    }

    int64_t req_int(const std::string& key, int64_t lo, int64_t hi = k_int64_max) const {
        return m_r.integer(at(key), path(key), lo, hi);
    }
    int64_t opt_int(const std::string& key, int64_t fallback, int64_t lo, int64_t hi = k_int64_max) const {
        return has(key) ? req_int(key, lo, hi) : fallback;
    }
    std::optional<int64_t> maybe_int(const std::string& key, int64_t lo, int64_t hi = k_int64_max) const {
        if (!has(key)) return std::nullopt;
        return req_int(key, lo, hi);
    }

    // One of `choices`, as a string.
    std::string opt_choice(const std::string& key, const std::string& fallback,
                           const std::vector<std::string>& choices) const {
        if (!has(key)) return fallback;
        const json& v = at(key);
        if (v.is_string() && std::find(choices.begin(), choices.end(), v.get<std::string>()) != choices.end())
            return v.get<std::string>();
        m_r.expected(path(key), "one of " + quoted_list(choices), v);
    }
    // One of the names of `table` (rows of {value, name}, util/enum_names.h), as its value.
    template <class Table, class E>
    E opt_named(const std::string& key, E fallback, const Table& table) const {
        return *value_named(table, opt_choice(key, std::string(name_in(table, fallback)), names_in(table)));
    }

private:
    const Reader& m_r;
    const json& m_v;
    std::string m_path;
};

// The history op `o` names at `key` (expectations' records, fault triggers): one of the ops
// ports/history_op.h lists, so a misspelt op fails here instead of never matching.
inline Op read_op(const Object& o, const std::string& key) {
    const json& v = o.at(key);
    const std::optional<Op> op = v.is_string() ? op_named(v.get<std::string>()) : std::nullopt;
    if (!op) o.reader().expected(o.path(key), "a history op, one of " + quoted_list(op_names()), v);
    return *op;
}

// Every key of the object `fields` (at `path`) is a data field that `op` carries.
inline void check_op_fields(const Reader& r, Op op, const json& fields, const std::string& path) {
    for (const auto& [key, value] : fields.items()) {
        if (op_carries(op, key)) continue;
        const std::vector<std::string> known = op_fields(op);
        r.fail(child(path, key), fmt::format("op \"{}\" never carries this field; {}", to_string(op),
                                             known.empty() ? std::string("it carries none")
                                                           : "its fields are: " + quoted_list(known)));
    }
}

}  // namespace relab::scenario_json
