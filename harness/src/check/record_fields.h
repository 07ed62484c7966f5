// Field readers that tolerate records lacking a field: a malformed record counts as "not that".
// Shared by the checker and the accounting so the two read a record's data the same way.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace relab::record_fields {

inline std::string text_field(const nlohmann::json& data, const char* key) {
    if (!data.is_object()) return {};
    auto it = data.find(key);
    return it != data.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

inline int64_t int_field(const nlohmann::json& data, const char* key, int64_t fallback = 0) {
    if (!data.is_object()) return fallback;
    auto it = data.find(key);
    return it != data.end() && it->is_number() ? it->get<int64_t>() : fallback;
}

}  // namespace relab::record_fields
