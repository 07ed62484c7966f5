#include "sim/table_model.h"

#include <fmt/format.h>

namespace relab::sim {

void TableModel::reset(const std::vector<OrderRow>& rows) {
    m_rows.clear();
    m_txns.clear();
    m_next_txn = 1;
    m_commit_seq = 0;
    m_side_effects.clear();
    for (const auto& r : rows) m_rows[r.id] = {Version{r, 0, 0}};
}

TableModel::Txn& TableModel::txn_or_throw(TxnId id, const char* what) {
    auto it = m_txns.find(id);
    if (it == m_txns.end()) throw TableModelError(fmt::format("{}: no transaction {}", what, id));
    return it->second;
}

TxnId TableModel::begin(Isolation iso) {
    const TxnId id = m_next_txn++;
    Txn t;
    t.iso = iso;
    m_txns.emplace(id, t);
    return id;
}

uint64_t TableModel::statement_snapshot(Txn& t) {
    if (t.iso == Isolation::read_committed) return m_commit_seq;
    // REPEATABLE READ: one snapshot, taken by the transaction's first statement (not by BEGIN).
    if (!t.has_snapshot) {
        t.has_snapshot = true;
        t.snapshot = m_commit_seq;
    }
    return t.snapshot;
}

bool TableModel::committed_by(TxnId creator, uint64_t snapshot) const {
    if (creator == 0) return true;
    const auto it = m_txns.find(creator);
    return it != m_txns.end() && it->second.state == TxnState::committed && it->second.commit_seq <= snapshot;
}

bool TableModel::replaced_for(const Version& v, TxnId me, uint64_t snapshot) const {
    return v.xmax != 0 && (v.xmax == me || committed_by(v.xmax, snapshot));
}

bool TableModel::visible(const Version& v, TxnId me, uint64_t snapshot) const {
    const bool created = (me != 0 && v.xmin == me) || committed_by(v.xmin, snapshot);
    return created && !replaced_for(v, me, snapshot);
}

TableModel::Version* TableModel::visible_version(int64_t id, TxnId me, uint64_t snapshot) {
    auto it = m_rows.find(id);
    if (it == m_rows.end()) return nullptr;
    for (auto& v : it->second)
        if (visible(v, me, snapshot)) return &v;
    return nullptr;
}

bool TableModel::where_holds(const OrderRow& row, const OrderUpdate& u) {
    return row.id == u.id && guard_holds(u.guard, row.version, u.guard_version) && amount_floor_holds(u, row.amount);
}

StatementResult TableModel::fail(Txn& t, std::string sqlstate, std::string message) {
    t.state = TxnState::failed;
    StatementResult r;
    r.kind = StatementResult::Kind::error;
    r.sqlstate = std::move(sqlstate);
    r.message = std::move(message);
    return r;
}

StatementResult TableModel::run_update(TxnId me, Txn& t, const OrderUpdate& u, uint64_t snapshot) {
    StatementResult done;
    Version* v = visible_version(u.id, me, snapshot);
    if (!v || !where_holds(v->row, u)) return done;
    for (;;) {
        const TxnId holder = v->xmax;
        if (holder == 0 || holder == me) break;
        const Txn& h = m_txns.at(holder);
        if (h.state == TxnState::aborted) break;  // its lock went with it
        if (h.state == TxnState::open || h.state == TxnState::failed) {
            t.blocked_stmt = u;
            t.blocked_snapshot = snapshot;
            t.blocked_by = holder;
            StatementResult r;
            r.kind = StatementResult::Kind::blocked;
            r.blocked_by = holder;
            return r;
        }
        // The holder committed a newer version after this statement's snapshot.
        if (t.iso == Isolation::repeatable_read)
            return fail(t, "40001", "could not serialize access due to concurrent update");
        // READ COMMITTED: follow the row to its newest version and re-check the WHERE there.
        auto& versions = m_rows.at(u.id);
        Version* newest = nullptr;
        for (auto& candidate : versions) {
            if (candidate.xmin == 0 || candidate.xmin == me) {
                newest = &candidate;
                continue;
            }
            const TxnState st = m_txns.at(candidate.xmin).state;
            if (st != TxnState::aborted) newest = &candidate;
        }
        v = newest;
        if (!v || !where_holds(v->row, u)) return done;
    }
    Version next{v->row, me, 0};
    next.row.status = u.status;
    next.row.amount = amount_after(u, next.row.amount);
    if (u.new_version) next.row.version = *u.new_version;
    v->xmax = me;
    m_rows.at(u.id).push_back(std::move(next));  // invalidates v
    done.affected = 1;
    return done;
}

StatementResult TableModel::update(TxnId txn, const OrderUpdate& u) {
    Txn& t = txn_or_throw(txn, "UPDATE");
    if (t.state == TxnState::committed || t.state == TxnState::aborted)
        throw TableModelError(fmt::format("UPDATE in transaction {} after it ended", txn));
    if (t.blocked_stmt) throw TableModelError(fmt::format("UPDATE in transaction {} while its statement is blocked", txn));
    if (t.state == TxnState::failed)
        return fail(t, "25P02", "current transaction is aborted, commands ignored until end of transaction block");
    return run_update(txn, t, u, statement_snapshot(t));
}

StatementResult TableModel::resume(TxnId txn) {
    Txn& t = txn_or_throw(txn, "resume");
    if (!t.blocked_stmt) throw TableModelError(fmt::format("resume: transaction {} has no blocked statement", txn));
    const TxnState holder = m_txns.at(t.blocked_by).state;
    if (holder == TxnState::open || holder == TxnState::failed) {
        StatementResult r;
        r.kind = StatementResult::Kind::blocked;
        r.blocked_by = t.blocked_by;
        return r;
    }
    const OrderUpdate u = *t.blocked_stmt;
    t.blocked_stmt.reset();
    t.blocked_by = 0;
    return run_update(txn, t, u, t.blocked_snapshot);
}

StatementResult TableModel::insert(TxnId txn, const OrderRow& row) {
    Txn& t = txn_or_throw(txn, "INSERT");
    if (t.state == TxnState::committed || t.state == TxnState::aborted || t.blocked_stmt)
        throw TableModelError(fmt::format("INSERT in transaction {} that cannot run statements", txn));
    if (t.state == TxnState::failed)
        return fail(t, "25P02", "current transaction is aborted, commands ignored until end of transaction block");
    const uint64_t snapshot = statement_snapshot(t);
    if (visible_version(row.id, txn, snapshot))
        return fail(t, "23505",
                    fmt::format("duplicate key value violates unique constraint \"tmp_orders_pkey\" (id={})", row.id));
    m_rows[row.id].push_back(Version{row, txn, 0});
    StatementResult r;
    r.affected = 1;
    return r;
}

StatementResult TableModel::upsert(TxnId txn, const OrderRow& row, VersionGuard guard) {
    Txn& t = txn_or_throw(txn, "INSERT ... ON CONFLICT");
    if (t.state == TxnState::committed || t.state == TxnState::aborted || t.blocked_stmt)
        throw TableModelError(fmt::format("INSERT ... ON CONFLICT in transaction {} that cannot run statements", txn));
    if (t.state == TxnState::failed)
        return fail(t, "25P02", "current transaction is aborted, commands ignored until end of transaction block");
    // The arbiter index sees every row version whose creator did not abort: a committed one or this
    // transaction's own. A row inserted by a transaction still open (PostgreSQL waits for it to end)
    // is not modelled: the consumers' writes are autocommit statements.
    bool exists = false;
    TxnId open_creator = 0;
    if (auto it = m_rows.find(row.id); it != m_rows.end())
        for (const auto& v : it->second) {
            if (v.xmin == 0 || v.xmin == txn) {
                exists = true;
                continue;
            }
            const TxnState st = m_txns.at(v.xmin).state;
            if (st == TxnState::committed) exists = true;
            if (st == TxnState::open || st == TxnState::failed) open_creator = v.xmin;
        }
    if (!exists && open_creator != 0)
        throw TableModelError(fmt::format("INSERT ... ON CONFLICT of row {} inserted by open transaction {}: not modelled",
                                          row.id, open_creator));
    if (!exists) {
        m_rows[row.id].push_back(Version{row, txn, 0});
        StatementResult r;
        r.affected = 1;
        r.inserted = true;
        return r;
    }
    const OrderUpdate u{row.id, row.status, row.version, guard, row.version};
    // ON CONFLICT DO UPDATE reads the newest committed row whatever the isolation's snapshot.
    return run_update(txn, t, u, m_commit_seq);
}

std::vector<OrderRow> TableModel::select(TxnId txn) {
    Txn& t = txn_or_throw(txn, "SELECT");
    const uint64_t snapshot = statement_snapshot(t);
    std::vector<OrderRow> out;
    for (auto& [id, versions] : m_rows)
        for (const auto& v : versions)
            if (visible(v, txn, snapshot)) {
                out.push_back(v.row);
                break;
            }
    return out;
}

bool TableModel::commit(TxnId txn) {
    Txn& t = txn_or_throw(txn, "COMMIT");
    if (t.blocked_stmt) throw TableModelError(fmt::format("COMMIT of transaction {} while its statement is blocked", txn));
    if (t.state == TxnState::failed) {
        t.state = TxnState::aborted;
        return false;
    }
    if (t.state != TxnState::open) throw TableModelError(fmt::format("COMMIT of transaction {} after it ended", txn));
    t.state = TxnState::committed;
    t.commit_seq = ++m_commit_seq;
    return true;
}

void TableModel::rollback(TxnId txn) {
    Txn& t = txn_or_throw(txn, "ROLLBACK");
    t.blocked_stmt.reset();
    t.blocked_by = 0;
    if (t.state == TxnState::open || t.state == TxnState::failed) t.state = TxnState::aborted;
}

bool TableModel::open(TxnId txn) const {
    auto it = m_txns.find(txn);
    return it != m_txns.end() && (it->second.state == TxnState::open || it->second.state == TxnState::failed);
}

bool TableModel::failed(TxnId txn) const {
    auto it = m_txns.find(txn);
    return it != m_txns.end() && it->second.state == TxnState::failed;
}

TxnId TableModel::waiting_for(TxnId txn) const {
    auto it = m_txns.find(txn);
    return it == m_txns.end() ? 0 : it->second.blocked_by;
}

int64_t TableModel::update_autocommit(const OrderUpdate& u) {
    const TxnId txn = begin(Isolation::read_committed);
    const StatementResult r = update(txn, u);
    if (r.blocked()) {
        rollback(txn);
        throw TableModelError(fmt::format("autocommit UPDATE of row {} found it locked by open transaction {}", u.id,
                                          r.blocked_by));
    }
    commit(txn);
    return r.affected;
}

StatementResult TableModel::insert_autocommit(const OrderRow& row) {
    const TxnId txn = begin(Isolation::read_committed);
    const StatementResult r = insert(txn, row);
    if (r.failed()) {
        rollback(txn);
        return r;
    }
    commit(txn);
    return r;
}

StatementResult TableModel::upsert_autocommit(const OrderRow& row, VersionGuard guard) {
    const TxnId txn = begin(Isolation::read_committed);
    const StatementResult r = upsert(txn, row, guard);
    if (r.blocked()) {
        rollback(txn);
        throw TableModelError(fmt::format("autocommit upsert of row {} found it locked by open transaction {}", row.id,
                                          r.blocked_by));
    }
    if (r.failed()) {
        rollback(txn);
        return r;
    }
    commit(txn);
    return r;
}

int64_t TableModel::send_side_effect(int64_t order, const std::string& event_type, int64_t version) {
    const int64_t seq = static_cast<int64_t>(m_side_effects.size()) + 1;
    m_side_effects.push_back(SideEffectRow{seq, order, event_type, version});
    return seq;
}

std::vector<OrderRow> TableModel::rows() const {
    std::vector<OrderRow> out;
    for (const auto& [id, versions] : m_rows)
        for (const auto& v : versions)
            if (visible(v, 0, m_commit_seq)) {
                out.push_back(v.row);
                break;
            }
    return out;
}

}  // namespace relab::sim
