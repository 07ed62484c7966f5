#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "ports/ports.h"

namespace relab {

// Event (order, type, v) and event_json are in ports/ports.h: history records carry events.
Fields event_fields(const Event& e);
Event event_from_entry(const StreamEntry& e);  // throws std::runtime_error on a malformed entry
// "1792591578172-0" -> 179259157817200000 (ms * 100000 + seq), the article's entry-ID version.
int64_t entry_id_as_version(const std::string& entry_id);

}  // namespace relab
