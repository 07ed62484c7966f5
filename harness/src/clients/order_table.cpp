#include "clients/order_table.h"

#include <fmt/format.h>

namespace relab {

RealOrderTable::RealOrderTable(PgSession& s) : m_session(s) {}

int64_t RealOrderTable::place_order(int64_t user_id, const std::string& idem_key, const std::string& payload) {
    const std::string sql = fmt::format("INSERT INTO orders (user_id, idem_key, payload) VALUES ({}, {}, {}) RETURNING id",
                                        user_id, sql_quote_literal(idem_key), sql_quote_literal(payload));
    const SqlStepResult r = m_session.run(sql);
    if (r.sqlstate == "23505") throw DuplicateOrderError("layer 4: " + r.error);
    if (!r.ok()) throw PgError(sql, r.sqlstate, r.error);
    if (r.rows.size() != 1 || r.rows[0].empty()) throw PgError(sql, "", "expected one id back");
    return std::stoll(r.rows[0][0]);
}

std::vector<PlacedOrder> RealOrderTable::orders() {
    const std::string sql = "SELECT id, user_id, idem_key, payload FROM orders ORDER BY id";
    const SqlStepResult r = m_session.exec(sql);
    std::vector<PlacedOrder> out;
    for (const auto& row : r.rows) {
        if (row.size() != 4) throw PgError(sql, "", "expected 4 columns");
        out.push_back(PlacedOrder{std::stoll(row[0]), std::stoll(row[1]), row[2], row[3]});
    }
    return out;
}

void reset_order_table(PgSession& s, bool layer4) {
    drop_order_table(s);
    s.exec("CREATE TABLE orders (id bigserial PRIMARY KEY, user_id bigint NOT NULL, idem_key text NOT NULL, "
           "payload text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())");
    if (layer4) s.exec("CREATE UNIQUE INDEX orders_idem_key ON orders (idem_key)");
}

void drop_order_table(PgSession& s) { s.exec("DROP TABLE IF EXISTS orders"); }

}  // namespace relab
