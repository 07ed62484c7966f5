// The idempotency labs' orders table (article 002) in memory, as RealOrderTable uses it:
//   CREATE TABLE orders (id bigserial PRIMARY KEY, user_id, idem_key, payload, ...)
//   [CREATE UNIQUE INDEX orders_idem_key ON orders (idem_key)]   -- layer 4
// Each INSERT is one autocommit statement, atomic at the instant the server runs it, so no
// transaction state is needed. As in PostgreSQL, an INSERT the unique index refuses still
// consumes its id from the sequence (nextval is not rolled back), so the ids that follow match
// the real table's.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "ports/ports.h"

namespace relab::sim {

class PlacedOrdersModel {
public:
    // An empty table whose ids restart at 1; unique_idem_key adds layer 4's unique index.
    void reset(bool unique_idem_key);

    // INSERT INTO orders (user_id, idem_key, payload) VALUES (...) RETURNING id. Throws
    // DuplicateOrderError (SQLSTATE 23505's message) when the unique index holds idem_key already.
    int64_t place_order(int64_t user_id, const std::string& idem_key, const std::string& payload);
    // SELECT id, user_id, idem_key, payload FROM orders ORDER BY id
    const std::vector<PlacedOrder>& orders() const { return m_rows; }
    bool unique_idem_key() const { return m_unique; }

private:
    bool m_unique = false;
    int64_t m_last_id = 0;  // the bigserial's sequence: the last value nextval gave
    std::vector<PlacedOrder> m_rows;  // by id (ids only grow)
    std::set<std::string> m_index;    // the unique index's keys
};

}  // namespace relab::sim
