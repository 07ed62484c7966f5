// The idempotency labs' orders table (article 002) in the run's schema, over a PgSession.
#pragma once

#include "ports/ports.h"
#include "clients/pg_client.h"

namespace relab {

class RealOrderTable : public OrderTable {
public:
    explicit RealOrderTable(PgSession& s);
    // A unique violation (SQLSTATE 23505) becomes DuplicateOrderError.
    int64_t place_order(int64_t user_id, const std::string& idem_key, const std::string& payload) override;
    std::vector<PlacedOrder> orders() override;

private:
    PgSession& m_session;
};

// Drops and creates `orders`; with layer4, CREATE UNIQUE INDEX ON orders (idem_key).
void reset_order_table(PgSession& s, bool layer4);
void drop_order_table(PgSession& s);

}  // namespace relab
