// Field readers that tolerate records lacking a field: a malformed record counts as "not that".
// Shared by the checker and the accounting so the two read a record's data the same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "util/json_number.h"

namespace relab::record_fields {

inline std::string text_field(const nlohmann::json& data, std::string_view key, const std::string& fallback = {}) {
    if (!data.is_object()) return fallback;
    auto it = data.find(key);
    return it != data.end() && it->is_string() ? it->get<std::string>() : fallback;
}

// text_field without the copy: a view into `data`, valid while `data` is.
inline std::string_view text_view(const nlohmann::json& data, std::string_view key) {
    if (!data.is_object()) return {};
    auto it = data.find(key);
    return it != data.end() && it->is_string() ? std::string_view(it->get_ref<const std::string&>()) : std::string_view();
}

// A number beyond int64_t (1e300, 2^64 - 1: a record read back from an edited report) is "not
// that" too, rather than a cast that is undefined or wraps.
inline int64_t int_field(const nlohmann::json& data, std::string_view key, int64_t fallback = 0) {
    if (!data.is_object()) return fallback;
    auto it = data.find(key);
    return it != data.end() ? json_number_as<int64_t>(*it).value_or(fallback) : fallback;
}

inline bool bool_field(const nlohmann::json& data, std::string_view key, bool fallback = false) {
    if (!data.is_object()) return fallback;
    auto it = data.find(key);
    return it != data.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

}  // namespace relab::record_fields
