// libpqxx connections and the OrderStore port over them. Every connection of a run sets
// search_path to the run's own schema, so SQL in scenarios says "tmp_orders" as the article does.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ports/ports.h"
#include "roles/order_write.h"
#include "clients/endpoint.h"

namespace relab {

class PgError : public std::runtime_error {
public:
    PgError(std::string sql, std::string sqlstate, std::string message);
    const std::string& sql() const { return m_sql; }
    const std::string& sqlstate() const { return m_sqlstate; }
    const std::string& server_message() const { return m_message; }

private:
    std::string m_sql, m_sqlstate, m_message;
};

// What one statement did, errors included (scripted sessions expect some errors).
struct SqlStepResult {
    std::string tag;       // command tag: "UPDATE 1", "BEGIN", "SELECT 1"; empty on error
    int64_t affected = 0;
    std::vector<std::string> columns;
    std::vector<std::vector<std::string>> rows;  // NULL as ""
    std::string sqlstate;  // set on error, e.g. "40001"
    std::string error;     // the server's message on error
    bool ok() const { return sqlstate.empty() && error.empty(); }
};

// One session: a connection in autocommit mode on which BEGIN/COMMIT/ROLLBACK are plain
// statements, like psql.
// When a PgSession opens its connection: at once (a failure throws from the constructor), or at
// its first statement (a role that may never need one, as a stream lab's producer, costs the
// server no backend).
enum class PgConnect { now, on_first_use };

// Connects now and keeps the session for this process's next PgSession of the same endpoint and
// schema, which takes it rather than connecting (a PostgreSQL backend's start is a role's dearest
// step, docs/performance.md). A
// role process the spawner forks ahead of its trial calls it while the previous trial runs
// (process/role_spawner.h). A kept session the server has since written to (it closed it, or is
// shutting down) is not taken. Throws PgError when it cannot connect.
void open_pg_session_ahead(const PgEndpoint& ep, const std::string& schema);

class PgSession {
public:
    // schema empty: the server's default search_path.
    PgSession(const PgEndpoint& ep, const std::string& schema, PgConnect when = PgConnect::now);
    ~PgSession();
    PgSession(const PgSession&) = delete;
    PgSession& operator=(const PgSession&) = delete;

    SqlStepResult run(const std::string& sql);  // never throws for SQL errors
    SqlStepResult exec(const std::string& sql); // throws PgError on SQL errors
    // `definition` ($1, $2, ... for `params`) prepared once per connection as `name` and executed
    // with `params`: the server skips parsing and planning it again. `shown` is the statement as a
    // reader sees it (with its values), for errors. Throws PgError on SQL errors.
    SqlStepResult exec_prepared(const std::string& name, const std::string& definition,
                                const std::vector<std::string>& params, const std::string& shown);
    // `statements` (no semicolons of their own) as one multi-statement query: one round trip, and
    // one transaction, since the server runs such a query as a single implicit transaction unless
    // it holds BEGIN or COMMIT itself. A result per statement; throws PgError for the first that
    // failed, and then none of them took effect. `shown` names the batch in errors.
    std::vector<SqlStepResult> exec_batch(const std::vector<std::string>& statements, const std::string& shown);
    std::string server_version();               // "15.18"
    // After a lost connection (PgError with SQLSTATE 08006) every call fails until this connects
    // again (search_path as before; any open transaction is gone). A role's ports call it before
    // each statement; scripted sessions never do. Throws PgError when the server is still away.
    void reconnect_if_broken();

private:
    void connect();
    template <class Exec>
    SqlStepResult run_on_connection(const std::string& sql, Exec exec);
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

// CREATE SCHEMA name. Throws PgError (also when it exists).
void create_schema(const PgEndpoint& ep, const std::string& name);
// DROP SCHEMA IF EXISTS name CASCADE, waiting at most 10 s for a lock. Throws PgError.
void drop_schema(const PgEndpoint& ep, const std::string& name);

// The server is away: the connection was refused or lost (class 08), or the server is shutting
// down or still starting (57P01-57P03): what a killed or restarting PostgreSQL answers.
bool is_connection_failure(const PgError& e);

// The consumer side's tmp_orders in a schema. A lost connection is StoreUnavailable, and the next
// call connects again.
// Its writes follow the one write path (roles/order_write.h); the statements are its own.
class RealOrderStore : public OrderStore, private OrderStatements {
public:
    explicit RealOrderStore(PgSession& s);
    WriteResult write_state(const OrderWrite& w) override;
    std::vector<WriteResult> write_states(const std::vector<OrderWrite>& ws) override;
    std::vector<OrderRow> rows() override;
    int64_t send_side_effect(int64_t order, const std::string& event_type, int64_t version) override;
    std::vector<SideEffectRow> side_effects() override;
    std::optional<int64_t> begin_job(WriteIsolation level, int64_t order) override;
    void commit_job() override;
    void rollback_job() override;

private:
    int64_t update(const OrderUpdate& u) override;
    std::vector<int64_t> update_all(const std::vector<OrderUpdate>& us) override;
    std::optional<int64_t> update_once(const OrderWrite& w, const OrderUpdate& u) override;
    std::optional<int64_t> insert(const OrderRow& row) override;
    Upserted upsert(const OrderRow& row, VersionGuard guard) override;

    PgSession& m_session;
};

// The source system's tmp_src_orders + tmp_outbox in a schema. A lost connection is
// StoreUnavailable, and the next call connects again.
class RealOutbox : public Outbox {
public:
    explicit RealOutbox(PgSession& s);
    int64_t record_change(int64_t order, const std::string& status, int64_t version) override;
    std::vector<OutboxRow> unpublished(OutboxOrder order) override;
    void mark_published(int64_t id, const std::string& entry_id) override;
    void count_failed_attempt(int64_t id) override;
    void begin_round() override;
    void commit_round() override;
    std::optional<OutboxRow> claim_next(ClaimScope scope, const std::vector<int64_t>& skip) override;

private:
    PgSession& m_session;
    bool m_in_round = false;
};

// Creates tmp_src_orders and tmp_outbox if needed; source rows as given, the outbox empty and
// its ids restarting at 1.
void reset_source_tables(PgSession& s, const std::vector<OrderRow>& source_rows);

// A string as an SQL literal: 'it''s' (standard_conforming_strings, as every server since 9.1).
std::string sql_quote_literal(const std::string& s);

// Creates tmp_side_effects if needed (seq bigserial, order_id, event_type, version, sent_at), empty
// with seq restarting at 1. In the run's schema, dropped with it.
void reset_side_effects_table(PgSession& s);

// Creates tmp_orders if needed and resets it to the scenario's initial rows.
void reset_orders_table(PgSession& s, const std::vector<OrderRow>& initial);

// Creates the consumer's inbox tmp_inbox (aggregate_id, version) if needed, empty: the events a
// deduplicating consumer (write.dedupe) has applied.
void reset_inbox_table(PgSession& s);

// The claim of RealOutbox::claim_next as SQL (for the tests and the report).
std::string outbox_claim_sql(ClaimScope scope, const std::vector<int64_t>& skip);

}  // namespace relab
