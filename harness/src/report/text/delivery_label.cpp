#include "report/text/delivery_label.h"

#include <fmt/format.h>

#include "check/record_fields.h"

namespace relab {

std::string delivery_label(const nlohmann::json& data) {
    const int64_t deliveries = record_fields::int_field(data, "deliveries", 1);
    const std::string via = record_fields::text_field(data, "via", "new");
    if (deliveries <= 1 && via == "new") return {};
    std::string label = fmt::format("delivery {}", deliveries);
    if (via == "claim")
        label += ", claimed";
    else if (via == "pending")
        label += ", from its pending list";
    else if (via != "new")
        label += ", via " + via;
    return label;
}

}  // namespace relab
