#include "roles/order_sql.h"

#include <stdexcept>

#include <fmt/format.h>

namespace relab {

namespace {
// Status strings come from scenario files; quote them as SQL literals.
std::string quoted_status(const OrderWrite& w) {
    std::string quoted = "'";
    for (char c : w.status) {
        if (c == '\'') quoted += '\'';
        quoted += c;
    }
    quoted += "'";
    return quoted;
}
}  // namespace

std::string order_write_sql(const OrderWrite& w) {
    const std::string quoted = quoted_status(w);
    switch (w.mode) {
        case WriteMode::plain: return fmt::format("UPDATE tmp_orders SET status = {} WHERE id = {}", quoted, w.order);
        case WriteMode::cas:
            return fmt::format("UPDATE tmp_orders SET status = {}, version = {} WHERE id = {} AND version < {}",
                               quoted, w.version, w.order, w.version);
        case WriteMode::upsert:
            return fmt::format(
                "INSERT INTO tmp_orders (id, status, version) VALUES ({}, {}, {}) ON CONFLICT (id) DO UPDATE SET "
                "status = EXCLUDED.status, version = EXCLUDED.version WHERE tmp_orders.version < EXCLUDED.version",
                w.order, quoted, w.version);
        case WriteMode::insert_then_update:
            return fmt::format("INSERT INTO tmp_orders (id, status, version) VALUES ({}, {}, {})", w.order, quoted,
                               w.version);
    }
    return {};
}

std::string batched_write_sql(const OrderWrite& w) {
    if (w.dedupe || (w.mode != WriteMode::plain && w.mode != WriteMode::cas))
        throw std::logic_error("write_states: only plain and CAS writes without the inbox go in one batch");
    return order_write_sql(w);
}

std::optional<PreparedSql> order_write_prepared(const OrderWrite& w) {
    switch (w.mode) {
        case WriteMode::plain:
            return PreparedSql{"relab_write_plain", "UPDATE tmp_orders SET status = $1 WHERE id = $2",
                               {w.status, std::to_string(w.order)}};
        case WriteMode::cas:
            return PreparedSql{"relab_write_cas",
                               "UPDATE tmp_orders SET status = $1, version = $2 WHERE id = $3 AND version < $2",
                               {w.status, std::to_string(w.version), std::to_string(w.order)}};
        case WriteMode::upsert:
        case WriteMode::insert_then_update: return std::nullopt;
    }
    return std::nullopt;
}

std::string order_fallback_update_sql(const OrderWrite& w) {
    return fmt::format("UPDATE tmp_orders SET status = {}, version = {} WHERE id = {}", quoted_status(w), w.version,
                       w.order);
}

std::string side_effect_sql(int64_t order, const std::string& event_type, int64_t version) {
    std::string quoted = "'";
    for (char c : event_type) {
        if (c == '\'') quoted += '\'';
        quoted += c;
    }
    quoted += "'";
    return fmt::format("INSERT INTO tmp_side_effects (order_id, event_type, version) VALUES ({}, {}, {}) RETURNING seq",
                       order, quoted, version);
}

}  // namespace relab
