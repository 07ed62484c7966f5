// The simulated PostgreSQL server: its tables' models (tmp_orders with its side effects, the
// outbox and its source table, the deduplicating consumer's inbox, the idempotency labs' orders),
// whether it is up, and its incarnation (a connection opened on an earlier one is dead).
#pragma once

#include <cstdint>
#include <set>
#include <utility>

#include "ports/ports.h"
#include "sim/outbox_model.h"
#include "sim/placed_orders_model.h"
#include "sim/sim_network.h"
#include "sim/table_model.h"

namespace relab::sim {

class SimPostgres {
public:
    // Up, its first incarnation, every table empty (the placed orders without layer 4).
    void reset() {
        m_orders.reset({});
        m_outbox.reset({});
        m_inbox.clear();
        m_placed_orders.reset(false);
        m_up = true;
        m_epoch = 0;
    }

    TableModel& orders() { return m_orders; }
    OutboxModel& outbox() { return m_outbox; }
    // The deduplicating consumer's tmp_inbox: the (aggregate, version) pairs it has applied.
    std::set<std::pair<int64_t, int64_t>>& inbox() { return m_inbox; }
    // The idempotency labs' orders table (reset empty, without layer 4).
    PlacedOrdersModel& placed_orders() { return m_placed_orders; }

    // A role's PostgreSQL connection, opened when its process starts (PgSession's constructor).
    void open_connection(SimConnection& conn) const {
        conn.open = true;
        conn.epoch = m_epoch;
    }
    // A transaction on `conn` is still open at the server: the connection is open on this
    // incarnation of a running PostgreSQL (a killed role's or server's connections are not).
    bool connection_live(const SimConnection& conn) const { return m_up && conn.open && conn.epoch == m_epoch; }
    // PostgreSQL's side of a statement: StoreUnavailable while the server is down or on a
    // connection it closed.
    template <class Op>
    auto at(Op op, SimConnection* conn) -> decltype(op());

    // SIGKILL: every connection is closed (its next call fails once), calls are refused, and a
    // transaction not yet committed is gone with its connection.
    void kill() {
        m_up = false;
        ++m_epoch;
    }
    // Started again with every committed row: PostgreSQL replays its WAL (synchronous_commit on).
    void start() { m_up = true; }
    bool up() const { return m_up; }

private:
    TableModel m_orders;
    OutboxModel m_outbox;
    std::set<std::pair<int64_t, int64_t>> m_inbox;
    PlacedOrdersModel m_placed_orders;
    bool m_up = true;
    uint64_t m_epoch = 0;  // +1 on every kill: connections opened before are dead
};

template <class Op>
auto SimPostgres::at(Op op, SimConnection* conn) -> decltype(op()) {
    if (conn && conn->open && conn->epoch != m_epoch) {
        conn->open = false;
        throw relab::StoreUnavailable("server closed the connection unexpectedly");
    }
    if (!m_up) throw relab::StoreUnavailable("Connection refused: the simulated PostgreSQL is down");
    if (conn && !conn->open) {
        conn->open = true;
        conn->epoch = m_epoch;
    }
    return op();
}

}  // namespace relab::sim
