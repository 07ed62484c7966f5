// A PostgreSQL table of (id, status, version, amount) rows with the concurrency the labs depend on:
// transactions, row versions (MVCC), row locks held until commit or rollback, READ COMMITTED and
// REPEATABLE READ snapshots. An UPDATE that finds its row locked by another open transaction is
// blocked; once the holder ends, resume() finishes it:
//   READ COMMITTED: re-checks its WHERE on the newest committed version and updates that one
//                   (or nothing), as PostgreSQL's EvalPlanQual does;
//   REPEATABLE READ: fails with SQLSTATE 40001 "could not serialize access due to concurrent
//                   update" when the holder committed a change to the row.
// Pure: nothing waits here. The caller parks a blocked statement and calls resume() after the
// blocker's commit or rollback.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ports/ports.h"

namespace relab::sim {

enum class Isolation { read_committed, repeatable_read };

using TxnId = uint64_t;


struct StatementResult {
    enum class Kind { done, blocked, error };
    Kind kind = Kind::done;
    int64_t affected = 0;  // done: rows changed
    bool inserted = false; // done: an INSERT (or an upsert's insert) added the row
    TxnId blocked_by = 0;  // blocked: the transaction holding the row lock
    std::string sqlstate;  // error: "40001", "25P02", ...
    std::string message;
    bool done() const { return kind == Kind::done; }
    bool blocked() const { return kind == Kind::blocked; }
    bool failed() const { return kind == Kind::error; }
};

// A misuse of the model (a statement on a transaction that is not open): a bug in the caller.
class TableModelError : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

class TableModel {
public:
    // Drops every row and transaction; `rows` become committed rows.
    void reset(const std::vector<OrderRow>& rows);

    TxnId begin(Isolation iso = Isolation::read_committed);
    // A new UPDATE statement in an open transaction. Only one statement of a transaction can be
    // blocked at a time, and no other may run until it is resumed.
    StatementResult update(TxnId txn, const OrderUpdate& u);
    // Finishes the blocked statement after its blocker ended; may block again on a newer holder.
    StatementResult resume(TxnId txn);
    // INSERT INTO t VALUES (...): 23505 when a visible or locked row has the id.
    StatementResult insert(TxnId txn, const OrderRow& row);
    // INSERT INTO t VALUES (row) ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, version =
    // EXCLUDED.version WHERE t.version <guard> EXCLUDED.version: inserts when no row has the id
    // (inserted); otherwise the guarded UPDATE (affected 0 when the guard refuses it).
    // As PostgreSQL's, the conflict check sees the newest committed row, not a REPEATABLE READ
    // snapshot's; a row locked by an open transaction blocks it like an UPDATE.
    StatementResult upsert(TxnId txn, const OrderRow& row, VersionGuard guard);
    // Rows visible to the transaction (its snapshot, plus its own changes), by id.
    std::vector<OrderRow> select(TxnId txn);
    // COMMIT; a transaction that failed is rolled back instead, and this returns false ("ROLLBACK").
    bool commit(TxnId txn);
    void rollback(TxnId txn);
    bool open(TxnId txn) const;
    bool failed(TxnId txn) const;  // an error aborted it; only ROLLBACK (or COMMIT) is accepted
    // The transaction that blocked `txn`'s statement, or 0.
    TxnId waiting_for(TxnId txn) const;

    // Autocommit: BEGIN; UPDATE; COMMIT. Throws TableModelError if the row is locked (no open
    // transaction exists in a lab that only writes in autocommit).
    int64_t update_autocommit(const OrderUpdate& u);
    // Autocommit INSERT and upsert; an error (23505) is returned, the transaction rolled back.
    StatementResult insert_autocommit(const OrderRow& row);
    StatementResult upsert_autocommit(const OrderRow& row, VersionGuard guard);

    // tmp_side_effects: a job's side effect, numbered in the order it was sent (seq from 1 after
    // reset). An autocommit INSERT ... RETURNING seq.
    int64_t send_side_effect(int64_t order, const std::string& event_type, int64_t version);
    const std::vector<SideEffectRow>& side_effects() const { return m_side_effects; }
    // Committed rows, by id.
    std::vector<OrderRow> rows() const;

private:
    enum class TxnState { open, failed, committed, aborted };
    struct Txn {
        Isolation iso = Isolation::read_committed;
        TxnState state = TxnState::open;
        bool has_snapshot = false;
        uint64_t snapshot = 0;       // REPEATABLE READ: commits up to this sequence are visible
        uint64_t commit_seq = 0;
        std::optional<OrderUpdate> blocked_stmt;
        uint64_t blocked_snapshot = 0;  // the blocked statement's snapshot
        TxnId blocked_by = 0;
    };
    struct Version {
        OrderRow row;
        TxnId xmin = 0;  // creator; 0 = there before any transaction
        TxnId xmax = 0;  // the transaction that replaced (and so locks) it; 0 = none
    };

    Txn& txn_or_throw(TxnId id, const char* what);
    uint64_t statement_snapshot(Txn& t);
    bool committed_by(TxnId creator, uint64_t snapshot) const;
    bool visible(const Version& v, TxnId me, uint64_t snapshot) const;
    bool replaced_for(const Version& v, TxnId me, uint64_t snapshot) const;
    Version* visible_version(int64_t id, TxnId me, uint64_t snapshot);
    StatementResult run_update(TxnId me, Txn& t, const OrderUpdate& u, uint64_t snapshot);
    StatementResult fail(Txn& t, std::string sqlstate, std::string message);
    static bool where_holds(const OrderRow& row, const OrderUpdate& u);

    std::map<int64_t, std::vector<Version>> m_rows;  // id -> versions, oldest first
    std::map<TxnId, Txn> m_txns;
    TxnId m_next_txn = 1;
    uint64_t m_commit_seq = 0;
    std::vector<SideEffectRow> m_side_effects;
};

}  // namespace relab::sim
