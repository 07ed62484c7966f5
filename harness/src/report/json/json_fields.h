// Reading a JSON run report's fields, as run_from_json (json_reader.cpp) and read_idem_json
// (idem_json.cpp) do: absent or null fields take their defaults, so a report written by an older
// relab still reads; a field of the wrong type, or a number its field cannot hold, is a
// std::runtime_error naming its JSON Pointer: "JSON report: at /labs/0/trials: expected an array,
// got a string".
#pragma once

#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "describe/describe.h"
#include "util/json_number.h"

namespace relab::report_json {

using nlohmann::json;

inline std::string kind_text(const json& v) {
    switch (v.type()) {
        case json::value_t::null: return "null";
        case json::value_t::boolean: return "a boolean";
        case json::value_t::string: return "a string";
        case json::value_t::array: return "an array";
        case json::value_t::object: return "an object";
        default: return "a number";
    }
}

[[noreturn]] inline void wrong_type(const std::string& path, const char* expected, const json& got) {
    throw std::runtime_error(fmt::format("JSON report: at {}: expected {}, got {}", path.empty() ? "/" : path,
                                         expected, kind_text(got)));
}

inline const json& object_at(const json& v, const std::string& path) {
    if (!v.is_object()) wrong_type(path, "an object", v);
    return v;
}

// `v` (at `path`) as the number T: an integer T holds, or a fraction whose integer part it holds
// (json_number_as); a number beyond T, such as 1e300 for an int, is an error.
template <class T>
T number_at(const json& v, const std::string& path) {
    if (!v.is_number()) wrong_type(path, "a number", v);
    const std::optional<T> x = json_number_as<T>(v);
    if (!x) {
        using L = std::numeric_limits<T>;
        throw std::runtime_error(fmt::format("JSON report: at {}: expected a number from {} to {}, got {}",
                                             path.empty() ? "/" : path, L::min(), L::max(), v.dump()));
    }
    return *x;
}

// The field `key` of the object `obj` (at `path`), or `fallback` when it is absent or null.
template <class T>
T get(const json& obj, const std::string& path, const char* key, T fallback) {
    object_at(obj, path);
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return fallback;
    const std::string at = path + "/" + key;
    if constexpr (std::is_same_v<T, bool>) {
        if (!it->is_boolean()) wrong_type(at, "a boolean", *it);
        return it->get<bool>();
    } else if constexpr (std::is_arithmetic_v<T>) {
        return number_at<T>(*it, at);
    } else {
        static_assert(std::is_same_v<T, std::string>);
        if (!it->is_string()) wrong_type(at, "a string", *it);
        return it->get<std::string>();
    }
}

// The array field `key`, or an empty array when absent or null.
inline const json& array_at(const json& obj, const std::string& path, const char* key) {
    static const json empty = json::array();
    object_at(obj, path);
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return empty;
    if (!it->is_array()) wrong_type(path + "/" + key, "an array", *it);
    return *it;
}

// The object field `key`, or an empty object when absent or null.
inline const json& object_field(const json& obj, const std::string& path, const char* key) {
    static const json empty = json::object();
    object_at(obj, path);
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return empty;
    return object_at(*it, path + "/" + key);
}

inline std::string index_path(const std::string& path, const char* key, size_t i) {
    return fmt::format("{}/{}/{}", path, key, i);
}

inline std::vector<std::string> strings_at(const json& obj, const std::string& path, const char* key) {
    std::vector<std::string> out;
    const json& list = array_at(obj, path, key);
    for (size_t i = 0; i < list.size(); ++i) {
        if (!list[i].is_string()) wrong_type(index_path(path, key, i), "a string", list[i]);
        out.push_back(list[i].get<std::string>());
    }
    return out;
}

// A described struct (describe/describe.h) at `path`, read as any relab wrote it: absent or null
// fields keep their defaults, unknown ones are ignored; a value of the wrong type is the readers'
// own std::runtime_error, naming its JSON Pointer.
template <class S>
S read_described(const json& v, const std::string& path) {
    try {
        return desc::read_lenient<S>(v, "JSON report", path);
    } catch (const ScenarioError& e) {
        throw std::runtime_error(e.what());
    }
}

// The described struct in the field `key` of the object `obj` (at `path`); its defaults when the
// field is absent or null.
template <class S>
S described_field(const json& obj, const std::string& path, const char* key) {
    object_at(obj, path);
    const auto it = obj.find(key);
    return it == obj.end() ? S{} : read_described<S>(*it, path + "/" + key);
}

}  // namespace relab::report_json
