#include "roles/order_sql.h"

#include <fmt/format.h>

namespace relab {

std::string order_write_sql(const OrderWrite& w) {
    // Status strings come from scenario files; quote them as SQL literals.
    std::string quoted = "'";
    for (char c : w.status) {
        if (c == '\'') quoted += '\'';
        quoted += c;
    }
    quoted += "'";
    if (w.mode == WriteMode::plain)
        return fmt::format("UPDATE tmp_orders SET status = {} WHERE id = {}", quoted, w.order);
    return fmt::format("UPDATE tmp_orders SET status = {}, version = {} WHERE id = {} AND version < {}", quoted,
                       w.version, w.order, w.version);
}

}  // namespace relab
