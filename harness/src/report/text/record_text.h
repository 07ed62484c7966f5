// A stream lab's history records as the text report words them: the fields of a record's data,
// its event, a stream entry and a time.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "check/outcome.h"

namespace relab {

// A field of a record's data as text: strings as they are, anything else as JSON, "?" if absent.
std::string field_text(const nlohmann::json& data, const char* key);
// A field of a record's data as an integer (a number or a numeric string), else the fallback.
int64_t field_int(const nlohmann::json& data, const char* key, int64_t fallback);
// "created (v=1)", or "#42 created (v=1)" when the lab has several orders.
std::string event_text(const nlohmann::json& event, bool several_orders);
// The record's event object, or an empty object.
nlohmann::json event_of(const nlohmann::json& data);
// "1790000000001-0 created (v=1)", with "#42 " before the type when the lab has several orders.
std::string entry_text(const StreamEntry& e, bool several_orders);
// Milliseconds rounded down, right-aligned in 4 characters: "t=   2 ms", "t=1005 ms".
std::string time_text(int64_t t_ns);

}  // namespace relab
