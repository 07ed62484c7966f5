#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "ports/ports.h"

namespace relab {

// A business event as carried in a stream entry: order, type, v (the version assigned when the
// event was created at the source).
struct Event {
    int64_t order = 0;
    std::string type;
    int64_t v = 0;
};

Fields event_fields(const Event& e);
Event event_from_entry(const StreamEntry& e);  // throws std::runtime_error on a malformed entry
nlohmann::json event_json(const Event& e);
// "1792591578172-0" -> 179259157817200000 (ms * 100000 + seq), the article's entry-ID version.
int64_t entry_id_as_version(const std::string& entry_id);

}  // namespace relab
