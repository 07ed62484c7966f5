// How a receive came, as both the text report and the timeline label it.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace relab {

// A receive record's data ("deliveries", "via") as "delivery 2, claimed" or "delivery 3, from its
// pending list"; empty for the first delivery of a new entry, and for records written before relab
// kept deliveries and via.
std::string delivery_label(const nlohmann::json& data);

}  // namespace relab
