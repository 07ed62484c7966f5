#include "report/text/record_text.h"

#include <fmt/format.h>

#include "util/json_number.h"

namespace relab {

std::string field_text(const nlohmann::json& data, const char* key) {
    if (!data.is_object()) return "?";
    const auto it = data.find(key);
    if (it == data.end() || it->is_null()) return "?";
    if (it->is_string()) return it->get<std::string>();
    return it->dump();
}

int64_t field_int(const nlohmann::json& data, const char* key, int64_t fallback) {
    if (!data.is_object()) return fallback;
    const auto it = data.find(key);
    if (it == data.end()) return fallback;
    if (it->is_number()) return json_number_as<int64_t>(*it).value_or(fallback);  // 1e300: the fallback
    if (it->is_string()) {
        try {
            return std::stoll(it->get<std::string>());
        } catch (const std::exception&) {
            return fallback;
        }
    }
    return fallback;
}

std::string event_text(const nlohmann::json& event, bool several_orders) {
    std::string text;
    if (several_orders) text = "#" + field_text(event, "order") + " ";
    return text + field_text(event, "type") + " (v=" + field_text(event, "v") + ")";
}

nlohmann::json event_of(const nlohmann::json& data) {
    if (data.is_object() && data.contains("event") && data.at("event").is_object()) return data.at("event");
    return nlohmann::json::object();
}

std::string entry_text(const StreamEntry& e, bool several_orders) {
    std::string v = e.field("v");
    if (v.empty()) v = e.field("version");
    std::string text = e.id + " ";
    if (several_orders) text += "#" + e.field("order") + " ";
    return text + e.field("type") + " (v=" + v + ")";
}

std::string time_text(int64_t t_ns) {
    const int64_t ms = t_ns >= 0 ? t_ns / 1'000'000 : -((-t_ns + 999'999) / 1'000'000);
    return fmt::format("t={:>4} ms", ms);
}

}  // namespace relab
