#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ports/ports.h"

namespace relab {

// The statements of a consumer's write, as text exactly as the article prints it: the real
// OrderStore executes this text, the simulator records it. Each is built from the mode's row
// (ports/write_mode.h):
//   plain: UPDATE tmp_orders SET status = 'paid' WHERE id = 42
//   cas:   UPDATE tmp_orders SET status = 'paid', version = 2 WHERE id = 42 AND version < 2
//   upsert: INSERT INTO tmp_orders (id, status, version) VALUES (42, 'paid', 2) ON CONFLICT (id)
//           DO UPDATE SET status = EXCLUDED.status, version = EXCLUDED.version
//           WHERE tmp_orders.version < EXCLUDED.version
//   insert_then_update: INSERT INTO tmp_orders (id, status, version) VALUES (42, 'paid', 2)
//           (its fallback after a unique violation is order_fallback_update)
//   delta: UPDATE tmp_orders SET status = 'amount_removed', amount = amount - 30 WHERE id = 42 AND amount >= 30
//   cas_state: UPDATE tmp_orders SET status = 'amount_removed', amount = 0, version = 2 WHERE id = 42 AND version < 2

// The UPDATE of a write whose mode's statement is one: its status, and its version and guard when
// the mode has them.
OrderUpdate order_update(const OrderWrite& w);
// insert_then_update's second statement, after its INSERT failed with 23505: status and version,
// no guard: UPDATE tmp_orders SET status = 'created', version = 1 WHERE id = 42
OrderUpdate order_fallback_update(const OrderWrite& w);
std::string order_update_sql(const OrderUpdate& u);
std::string order_insert_sql(const OrderRow& row);
std::string order_upsert_sql(const OrderRow& row, VersionGuard g);
// The first (for most modes the only) statement a write runs.
std::string order_write_sql(const OrderWrite& w);
// One write of a read committed as one transaction (write.commit "batch"): order_write_sql, after
// checking it is an UPDATE without the inbox (the loader allows no other); throws
// std::logic_error otherwise.
std::string batched_write_sql(const OrderWrite& w);
// An UPDATE as a statement with parameters ($1 the status, then the numbers as text), which the
// real OrderStore prepares once per connection and runs with `params`: the per-event path of a
// load lab. With each $n replaced by its value (the status quoted) it reads exactly as
// order_update_sql.
struct PreparedSql {
    std::string name;
    std::string definition;
    std::vector<std::string> params;
};
PreparedSql order_update_prepared(const OrderUpdate& u);
// The inbox's claim on an event (write.dedupe): INSERT INTO tmp_inbox (aggregate_id, version)
// VALUES (42, 2) ON CONFLICT DO NOTHING
std::string inbox_insert_sql(const OrderWrite& w);
// A job's side effect: INSERT INTO tmp_side_effects (order_id, event_type, version) VALUES (42,
// 'paid', 2) RETURNING seq
std::string side_effect_sql(int64_t order, const std::string& event_type, int64_t version);

// write.isolation's transaction: BEGIN ISOLATION LEVEL REPEATABLE READ (std::logic_error for none),
// the snapshot's read SELECT version FROM tmp_orders WHERE id = 42, and the whole transaction as
// the write record shows it: "BEGIN …; SELECT …; -- the job; UPDATE …; COMMIT".
std::string job_begin_sql(WriteIsolation level);
std::string snapshot_select_sql(int64_t order);
std::string job_transaction_sql(WriteIsolation level, int64_t order, const std::string& write);

}  // namespace relab
