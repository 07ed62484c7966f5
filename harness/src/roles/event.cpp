#include "roles/event.h"
#include "util/json_object.h"

#include <stdexcept>

namespace relab {

Fields event_fields(const Event& e) {
    Fields out{{"order", std::to_string(e.order)}, {"type", e.type}, {"v", std::to_string(e.v)}};
    if (e.delta) out.emplace_back("delta", std::to_string(*e.delta));
    if (e.amount) out.emplace_back("amount", std::to_string(*e.amount));
    return out;
}

Event event_from_entry(const StreamEntry& e) {
    try {
        Event ev{std::stoll(e.field("order")), e.field("type"), std::stoll(e.field("v"))};
        // P4's events carry their change and the amount after it; the other labs' carry neither.
        if (const std::string d = e.field("delta"); !d.empty()) ev.delta = std::stoll(d);
        if (const std::string a = e.field("amount"); !a.empty()) ev.amount = std::stoll(a);
        return ev;
    } catch (const std::exception&) {
        throw std::runtime_error("stream entry " + e.id +
                                 " is not an event (needs fields order, type, v; delta and amount, when present, integers)");
    }
}

int64_t entry_id_as_version(const std::string& entry_id) {
    const auto dash = entry_id.find('-');
    if (dash == std::string::npos) throw std::runtime_error("bad entry id " + entry_id);
    return std::stoll(entry_id.substr(0, dash)) * 100000 + std::stoll(entry_id.substr(dash + 1));
}

}  // namespace relab
