#include "sim/placed_orders_model.h"

#include <fmt/format.h>

namespace relab::sim {

void PlacedOrdersModel::reset(bool unique_idem_key) {
    m_unique = unique_idem_key;
    m_last_id = 0;
    m_rows.clear();
    m_index.clear();
}

int64_t PlacedOrdersModel::place_order(int64_t user_id, const std::string& idem_key, const std::string& payload) {
    // The column default (nextval) is evaluated before the index is checked.
    const int64_t id = ++m_last_id;
    if (m_unique && !m_index.insert(idem_key).second)
        // RealOrderTable's text: "layer 4: " + the server's message without its "ERROR:  ".
        throw DuplicateOrderError(fmt::format("layer 4: duplicate key value violates unique constraint "
                                              "\"orders_idem_key\"\nDETAIL:  Key (idem_key)=({}) already exists.",
                                              idem_key));
    m_rows.push_back(PlacedOrder{id, user_id, idem_key, payload});
    return id;
}

}  // namespace relab::sim
