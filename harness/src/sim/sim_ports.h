// The ports on the simulated world: what a role's fiber calls instead of Redis, PostgreSQL and
// the system clock. Each call is a round trip to the world's models (see SimWorld); the logical
// key names are used as they are, since a simulated trial has the world to itself.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ports/ports.h"
#include "roles/order_write.h"
#include "sim/sim_world.h"

namespace relab::sim {

class SimClock : public Clock {
public:
    explicit SimClock(SimWorld& w) : m_world(w) {}
    Nanos now() override { return m_world.now(); }
    void sleep_for(Nanos d) override { m_world.sleep(d); }

private:
    SimWorld& m_world;
};

class SimStream : public Stream {
public:
    explicit SimStream(SimWorld& w, SimConnection* conn = nullptr) : m_world(w), m_conn(conn) {}
    std::vector<std::string> xadd(const std::string& stream, const std::vector<Fields>& batch) override;
    std::string xadd_idmp(const std::string& stream, const Fields& fields, const std::string& producer_id,
                          const std::string& iid) override;
    std::vector<StreamEntry> xreadgroup(const std::string& group, const std::string& consumer,
                                        const std::string& stream, int count, Millis block) override;
    std::vector<StreamEntry> xreadgroup_pending(const std::string& group, const std::string& consumer,
                                                const std::string& stream, int count, const std::string& after) override;
    AutoClaimed xautoclaim(const std::string& stream, const std::string& group, const std::string& consumer,
                           Millis min_idle, const std::string& start, int count) override;
    bool create_group(const std::string& stream, const std::string& group, const std::string& start) override;
    void xack(const std::string& stream, const std::string& group, const std::string& id) override;
    void xack_all(const std::string& stream, const std::string& group, const std::vector<std::string>& ids) override;
    std::vector<StreamEntry> xrange(const std::string& stream) override;
    bool group_drained(const std::string& stream, const std::string& group) override;
    void wait_readers_blocked(int readers, Millis timeout) override;

private:
    SimWorld& m_world;
    SimConnection* m_conn;
};

// A Redis 7 server: compare-and-delete is the Lua script; DELEX IFEQ (8.4) when the lab requires
// DELEX (KvModel::delex).
class SimKv : public Kv {
public:
    explicit SimKv(SimWorld& w, SimConnection* conn = nullptr) : m_world(w), m_conn(conn) {}
    bool set_nx_px(const std::string& key, const std::string& value, Millis ttl) override;
    int64_t delete_if_equals(const std::string& key, const std::string& token) override;
    std::string delete_if_equals_method() const override;
    bool exists(const std::string& key) override;
    KvSetResult set(const std::string& key, const std::string& value, const KvSetOptions& o) override;
    std::optional<std::string> get(const std::string& key) override;
    int64_t del(const std::string& key) override;
    // The simulated server has no replica: WAIT answers 0, at once when no replica is asked for,
    // otherwise once its timeout has run out at the server (WAIT n 0 would block forever, and
    // is refused with a SimError).
    int64_t wait_replicas(int64_t replicas, Millis timeout) override;

private:
    SimWorld& m_world;
    SimConnection* m_conn;
};

// The idempotency labs' orders table: each INSERT (or SELECT) is one autocommit statement, one
// round trip, like RealOrderTable.
class SimOrderTable : public OrderTable {
public:
    explicit SimOrderTable(SimWorld& w, SimConnection* conn = nullptr) : m_world(w), m_conn(conn) {}
    int64_t place_order(int64_t user_id, const std::string& idem_key, const std::string& payload) override;
    std::vector<PlacedOrder> orders() override;

private:
    SimWorld& m_world;
    SimConnection* m_conn;
};

// tmp_orders: its writes follow the one write path (roles/order_write.h), each statement an
// autocommit one applied to the table model, one round trip. With a connection, the PostgreSQL
// model's faults reach it (SimPostgres::at).
class SimOrderStore : public OrderStore, private OrderStatements {
public:
    explicit SimOrderStore(SimWorld& w, SimConnection* conn = nullptr) : m_world(w), m_conn(conn) {}
    WriteResult write_state(const OrderWrite& w) override;
    // One round trip; every write takes effect in the same step, or none when the model is down.
    std::vector<WriteResult> write_states(const std::vector<OrderWrite>& ws) override;
    std::vector<OrderRow> rows() override;
    int64_t send_side_effect(int64_t order, const std::string& event_type, int64_t version) override;
    std::vector<SideEffectRow> side_effects() override;

private:
    int64_t update(const OrderUpdate& u) override;
    std::vector<int64_t> update_all(const std::vector<OrderUpdate>& us) override;
    std::optional<int64_t> update_once(const OrderWrite& w, const OrderUpdate& u) override;
    std::optional<int64_t> insert(const OrderRow& row) override;
    Upserted upsert(const OrderRow& row, VersionGuard guard) override;
    // One statement: a round trip, at the PostgreSQL model.
    template <class Op>
    auto statement(Op op) -> decltype(op()) {
        return m_world.round_trip([&] { return m_world.at_postgres(op, m_conn); }, m_conn);
    }

    SimWorld& m_world;
    SimConnection* m_conn;
};

// tmp_src_orders + tmp_outbox. record_change costs four round trips (BEGIN, UPDATE, INSERT,
// COMMIT) like RealOutbox and takes effect at the COMMIT; a dispatcher round in a transaction
// (begin_round) keeps its marks and counts until commit_round. A connection lost in between (the
// PostgreSQL model killed) loses the transaction.
class SimOutbox : public Outbox {
public:
    explicit SimOutbox(SimWorld& w, SimConnection* conn = nullptr) : m_world(w), m_conn(conn) {}
    int64_t record_change(int64_t order, const std::string& status, int64_t version) override;
    std::vector<OutboxRow> unpublished(OutboxOrder order) override;
    void mark_published(int64_t id, const std::string& entry_id) override;
    void count_failed_attempt(int64_t id) override;
    void begin_round() override;
    void commit_round() override;
    std::optional<OutboxRow> claim_next(ClaimScope scope, const std::vector<int64_t>& skip) override;

private:
    // The lock owner of this connection's transaction in the outbox model.
    const void* owner() const { return m_conn; }
    // One statement: a round trip, at the PostgreSQL model.
    template <class Op>
    auto statement(Op op) -> decltype(op()) {
        return m_world.round_trip([&] { return m_world.at_postgres(op, m_conn); }, m_conn);
    }
    SimWorld& m_world;
    SimConnection* m_conn;
    bool m_in_round = false;
    std::vector<std::pair<int64_t, std::string>> m_round_marks;  // outbox id -> entry ("" : a failed attempt)
};

// The trial's history in memory: every actor appends to one list, stamped with the trial number.
class SimHistory : public History {
public:
    void reset(int trial) {
        m_trial = trial;
        m_records.clear();
        // take() handed the last trial's list on: start this one at its size, not from nothing.
        m_records.reserve(m_last_size);
    }
    void record(HistoryRecord r) override {
        r.trial = m_trial;
        m_records.push_back(std::move(r));
    }
    std::vector<HistoryRecord> take() {
        m_last_size = m_records.size();
        return std::move(m_records);
    }
    // What has been recorded so far, in recording order (a supervisor waiting for a step).
    const std::vector<HistoryRecord>& records() const { return m_records; }

private:
    int m_trial = 0;
    size_t m_last_size = 0;
    std::vector<HistoryRecord> m_records;
};

}  // namespace relab::sim
