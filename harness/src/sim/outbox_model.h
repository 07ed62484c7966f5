// The source system's tables in memory: tmp_src_orders (the order's own state) and tmp_outbox
// (events waiting to be published), as RealOutbox uses them. Each call is one atomic step: the
// real record_change is one transaction, and nothing else writes these tables concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ports/ports.h"

namespace relab::sim {

class OutboxModel {
public:
    // tmp_src_orders as given, tmp_outbox empty with ids restarting at 1.
    void reset(const std::vector<OrderRow>& source_rows);

    // UPDATE tmp_src_orders (a missing order changes no row, as in SQL) + INSERT INTO tmp_outbox;
    // returns the new outbox id.
    int64_t record_change(int64_t order, const std::string& status, int64_t version);
    std::vector<OutboxRow> unpublished(OutboxOrder order) const;
    // UPDATE tmp_outbox SET published_at = now(), stream_id = ... WHERE id = ...
    void mark_published(int64_t id, const std::string& entry_id, Nanos now);
    void count_failed_attempt(int64_t id);

    // SELECT ... ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED by the transaction `owner`: the first
    // unpublished row (aggregate_head: only an aggregate's first unpublished row) that no other
    // live transaction has locked, and whose id (row) or aggregate (aggregate_head) is not in
    // `skip`; it is locked for `owner` until release(owner). An aggregate whose first row another
    // holds has nothing to claim. `live` says whether a lock holder's transaction is still open (its
    // connection not lost): a dead holder's locks are gone, as PostgreSQL aborts its transaction.
    std::optional<OutboxRow> claim(ClaimScope scope, const std::vector<int64_t>& skip, const void* owner,
                                   const std::function<bool(const void*)>& live);
    // The holder's COMMIT or ROLLBACK: its row locks are released.
    void release(const void* owner);
    // Who holds row `id`'s lock (live or not), or nullptr.
    const void* lock_holder(int64_t id) const;

    struct Row {
        OutboxRow row;
        std::optional<Nanos> published_at;
        std::string stream_id;
    };
    const std::vector<Row>& outbox() const { return m_outbox; }
    std::vector<OrderRow> source_rows() const;

private:
    Row* find(int64_t id);

    std::map<int64_t, OrderRow> m_source;
    std::vector<Row> m_outbox;  // by id: row i has id i + 1
    std::map<int64_t, const void*> m_locks;  // row id -> the transaction holding its FOR UPDATE lock
};

}  // namespace relab::sim
