#include "roles/order_write.h"

#include "roles/order_sql.h"

namespace relab {

namespace {

// The inbox's transaction around the mode's UPDATE: an event is applied once, whatever number of
// times it was published.
WriteResult write_once(const OrderWrite& w, OrderStatements& db) {
    WriteResult out;
    const std::string update = order_write_sql(w);
    const std::optional<int64_t> affected = db.update_once(w, order_update(w));
    out.duplicate = !affected;
    out.affected = affected.value_or(0);
    out.sql = inbox_insert_sql(w) + (out.duplicate ? " → INSERT 0 0; ROLLBACK" : "; " + update);
    return out;
}

const char* row_action(int64_t affected, const char* done) { return affected > 0 ? done : "none"; }

}  // namespace

WriteResult write_order_state(const OrderWrite& w, OrderStatements& db) {
    // Only an UPDATE goes in the inbox's transaction (the loader refuses the inbox with the others).
    if (w.dedupe) return write_once(w, db);
    const WriteModeInfo& mode = write_mode_info(w.mode);
    const OrderRow row{w.order, w.status, w.version};
    WriteResult out;
    out.sql = order_write_sql(w);
    switch (mode.statement) {
        case WriteStatement::update: out.affected = db.update(order_update(w)); break;
        case WriteStatement::upsert: {
            const OrderStatements::Upserted r = db.upsert(row, mode.guard);
            out.affected = r.affected;
            out.row_action = row_action(r.affected, r.inserted ? "inserted" : "updated");
            break;
        }
        case WriteStatement::insert_then_update: {
            if (const std::optional<int64_t> inserted = db.insert(row)) {
                out.affected = *inserted;
                out.row_action = row_action(out.affected, "inserted");
                break;
            }
            out.insert_conflict = true;
            const OrderUpdate fallback = order_fallback_update(w);
            out.affected = db.update(fallback);
            out.row_action = row_action(out.affected, "updated");
            out.sql += "; -- ERROR 23505 unique_violation, then: " + order_update_sql(fallback);
            break;
        }
    }
    return out;
}

std::vector<WriteResult> write_order_states(const std::vector<OrderWrite>& ws, OrderStatements& db) {
    std::vector<WriteResult> out(ws.size());
    if (ws.empty()) return out;
    std::vector<OrderUpdate> updates;
    updates.reserve(ws.size());
    for (size_t i = 0; i < ws.size(); ++i) {
        out[i].sql = batched_write_sql(ws[i]);
        updates.push_back(order_update(ws[i]));
    }
    const std::vector<int64_t> affected = db.update_all(updates);
    for (size_t i = 0; i < ws.size(); ++i) out[i].affected = affected.at(i);
    return out;
}

}  // namespace relab
