#include "roles/event.h"
#include "util/json_object.h"

#include <stdexcept>

namespace relab {

Fields event_fields(const Event& e) {
    return {{"order", std::to_string(e.order)}, {"type", e.type}, {"v", std::to_string(e.v)}};
}

Event event_from_entry(const StreamEntry& e) {
    try {
        return Event{std::stoll(e.field("order")), e.field("type"), std::stoll(e.field("v"))};
    } catch (const std::exception&) {
        throw std::runtime_error("stream entry " + e.id + " is not an event (needs fields order, type, v)");
    }
}

int64_t entry_id_as_version(const std::string& entry_id) {
    const auto dash = entry_id.find('-');
    if (dash == std::string::npos) throw std::runtime_error("bad entry id " + entry_id);
    return std::stoll(entry_id.substr(0, dash)) * 100000 + std::stoll(entry_id.substr(dash + 1));
}

}  // namespace relab
