#include "clients/pg_client.h"

#include <poll.h>

#include <cctype>
#include <cstdio>
#include <mutex>
#include <set>

#include <fmt/format.h>
#include <pqxx/pqxx>

#include "roles/order_sql.h"

namespace relab {

namespace {

std::string quote_ident(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

std::string quote_literal(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'') out += '\'';
        out += c;
    }
    return out + "'";
}

// libpqxx 6.4 keeps result::cmd_status() (PQcmdStatus: the command tag psql prints, "UPDATE 1",
// or "ROLLBACK" for a COMMIT of an aborted block) private, and libpq itself is not linked. An
// explicit instantiation may name a private member ([temp.explicit]), so the tag is reached
// through one without a second client library.
using CmdStatusFn = const char* (pqxx::result::*)() const noexcept;
CmdStatusFn cmd_status_fn();
template <CmdStatusFn F>
struct CmdStatusAccess {
    friend CmdStatusFn cmd_status_fn() { return F; }
};
template struct CmdStatusAccess<&pqxx::result::cmd_status>;

std::string command_tag(const pqxx::result& res) {
    const char* tag = (res.*cmd_status_fn())();
    return tag ? tag : "";
}

// libpq's text ("ERROR:  could not serialize access...\n") without severity prefix and newline.
std::string server_message(const char* what) {
    std::string m = what ? what : "";
    for (const char* severity : {"ERROR:  ", "FATAL:  ", "PANIC:  "}) {
        std::string s = severity;
        if (m.compare(0, s.size(), s) == 0) {
            m.erase(0, s.size());
            break;
        }
    }
    while (!m.empty() && std::isspace(static_cast<unsigned char>(m.back()))) m.pop_back();
    return m;
}

}  // namespace

PgError::PgError(std::string sql, std::string sqlstate, std::string message)
    : std::runtime_error(sqlstate.empty() ? fmt::format("postgres: {} in: {}", message, sql)
                                          : fmt::format("postgres: {} (SQLSTATE {}) in: {}", message, sqlstate, sql)),
      m_sql(std::move(sql)),
      m_sqlstate(std::move(sqlstate)),
      m_message(std::move(message)) {}

struct PgSession::Impl {
    PgEndpoint ep;
    std::string schema;
    bool broken = false;  // the connection was lost: calls fail until reconnect_if_broken()
    std::unique_ptr<pqxx::connection> conn;
    // Declared after conn so it unregisters before the connection goes. Notices (a WARNING for
    // COMMIT outside a transaction, ...) would otherwise go to stderr; results carry what matters.
    std::unique_ptr<pqxx::quiet_errorhandler> quiet;
    std::set<std::string> prepared;  // statements prepared on this connection (exec_prepared)
};

namespace {

// open_pg_session_ahead's session, until a PgSession takes it.
struct SessionAhead {
    std::mutex mu;
    std::string key;
    std::unique_ptr<pqxx::connection> conn;
};

SessionAhead& session_ahead() {
    static SessionAhead s;
    return s;
}

std::string ahead_key(const PgEndpoint& ep, const std::string& schema) { return ep.conninfo() + '\n' + schema; }

std::unique_ptr<pqxx::connection> connect_pg(const PgEndpoint& ep, const std::string& what) {
    try {
        return std::make_unique<pqxx::connection>(ep.conninfo());
    } catch (const pqxx::broken_connection& e) {
        throw PgError(what, "08001", server_message(e.what()));
    } catch (const pqxx::sql_error& e) {
        throw PgError(what, e.sqlstate(), server_message(e.what()));
    } catch (const pqxx::failure& e) {
        throw PgError(what, "", server_message(e.what()));
    }
}

// The kept session for ep and schema, if there is one and the server has not written to it since.
std::unique_ptr<pqxx::connection> take_session_ahead(const PgEndpoint& ep, const std::string& schema) {
    SessionAhead& s = session_ahead();
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.conn) return nullptr;
    std::unique_ptr<pqxx::connection> conn = std::move(s.conn);
    if (s.key != ahead_key(ep, schema)) {
        s.conn = std::move(conn);
        return nullptr;
    }
    pollfd p{conn->sock(), POLLIN, 0};
    if (p.fd < 0 || ::poll(&p, 1, 0) != 0) return nullptr;  // closed by the server, or unusable
    return conn;
}

}  // namespace

void open_pg_session_ahead(const PgEndpoint& ep, const std::string& schema) {
    std::unique_ptr<pqxx::connection> conn = connect_pg(ep, "connect to " + ep.display());
    if (!schema.empty()) try {
            pqxx::nontransaction tx(*conn);
            tx.exec("SET search_path TO " + quote_ident(schema));
        } catch (const pqxx::sql_error& e) {
            throw PgError("SET search_path", e.sqlstate(), server_message(e.what()));
        }
    SessionAhead& s = session_ahead();
    std::lock_guard<std::mutex> lock(s.mu);
    s.key = ahead_key(ep, schema);
    s.conn = std::move(conn);
}

PgSession::PgSession(const PgEndpoint& ep, const std::string& schema, PgConnect when)
    : m_impl(std::make_unique<Impl>()) {
    m_impl->ep = ep;
    m_impl->schema = schema;
    if (when == PgConnect::now) connect();
}

void PgSession::connect() {
    const PgEndpoint& ep = m_impl->ep;
    const std::string& schema = m_impl->schema;
    m_impl->conn = take_session_ahead(ep, schema);
    const bool ahead = m_impl->conn != nullptr;  // search_path already set
    if (!ahead) m_impl->conn = connect_pg(ep, "connect to " + ep.display());
    // libpqxx 6 silently reconnects a broken connection on the next statement, which would lose
    // search_path and the session's open transaction; a session must fail instead.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    m_impl->conn->inhibit_reactivation(true);
#pragma GCC diagnostic pop
    m_impl->quiet = std::make_unique<pqxx::quiet_errorhandler>(*m_impl->conn);
    if (!schema.empty() && !ahead) exec("SET search_path TO " + quote_ident(schema));
}

void PgSession::reconnect_if_broken() {
    if (!m_impl->broken) return;
    m_impl->quiet.reset();
    m_impl->conn.reset();
    m_impl->prepared.clear();
    m_impl->broken = false;
    try {
        connect();
    } catch (...) {
        m_impl->broken = true;
        throw;
    }
}

PgSession::~PgSession() = default;

SqlStepResult PgSession::run(const std::string& sql) {
    return run_on_connection(sql, [&](pqxx::nontransaction& tx) { return tx.exec(sql); });
}

SqlStepResult PgSession::exec_prepared(const std::string& name, const std::string& definition,
                                       const std::vector<std::string>& params, const std::string& shown) {
    SqlStepResult r = run_on_connection(shown, [&](pqxx::nontransaction& tx) {
        if (m_impl->prepared.insert(name).second) m_impl->conn->prepare(name, definition);
        return tx.exec_prepared(name, pqxx::prepare::make_dynamic_params(params));
    });
    if (!r.ok()) throw PgError(shown, r.sqlstate, r.error);
    return r;
}

std::vector<SqlStepResult> PgSession::exec_batch(const std::vector<std::string>& statements, const std::string& shown) {
    std::vector<SqlStepResult> out;
    if (statements.empty()) return out;
    std::vector<pqxx::result> results;
    const SqlStepResult r = run_on_connection(shown, [&](pqxx::nontransaction& tx) {
        pqxx::pipeline p(tx);
        // Retained until the first retrieve: then every statement leaves in one query string.
        p.retain(static_cast<int>(statements.size()) + 1);
        std::vector<pqxx::pipeline::query_id> ids;
        ids.reserve(statements.size());
        for (const auto& sql : statements) ids.push_back(p.insert(sql));
        results.reserve(statements.size());
        for (const auto id : ids) results.push_back(p.retrieve(id));
        return results.back();
    });
    if (!r.ok()) throw PgError(shown, r.sqlstate, r.error);
    out.reserve(results.size());
    for (const auto& res : results) {
        SqlStepResult s;
        s.tag = command_tag(res);
        s.affected = static_cast<int64_t>(res.affected_rows());
        out.push_back(std::move(s));
    }
    return out;
}

template <class Exec>
SqlStepResult PgSession::run_on_connection(const std::string& sql, Exec exec) {
    if (m_impl->broken)
        throw PgError(sql, "08003", "the connection was lost and not opened again (" + m_impl->ep.display() + ")");
    if (!m_impl->conn) connect();  // PgConnect::on_first_use
    SqlStepResult r;
    auto failed = [&r](std::string sqlstate, const char* what) {
        r.sqlstate = std::move(sqlstate);
        r.error = server_message(what);
        if (r.error.empty()) r.error = "error without a message";
    };
    // Each statement in its own nontransaction: libpqxx sends the text as is and keeps no state of
    // its own, so a typed BEGIN opens a server-side block that lasts until a typed COMMIT or
    // ROLLBACK, and after an error the server stays in the aborted block, as with psql.
    try {
        pqxx::nontransaction tx(*m_impl->conn);
        pqxx::result res = exec(tx);
        tx.commit();
        r.tag = command_tag(res);
        r.affected = static_cast<int64_t>(res.affected_rows());
        for (pqxx::row_size_type c = 0; c < res.columns(); ++c) r.columns.emplace_back(res.column_name(c));
        r.rows.reserve(res.size());
        for (const pqxx::row& row : res) {
            std::vector<std::string> values;
            values.reserve(row.size());
            for (const pqxx::field& f : row) values.emplace_back(f.is_null() ? "" : f.c_str());
            r.rows.push_back(std::move(values));
        }
    } catch (const pqxx::broken_connection& e) {
        m_impl->broken = true;
        throw PgError(sql, "08006", server_message(e.what()) + " (" + m_impl->ep.display() + ")");
    } catch (const pqxx::sql_error& e) {
        // The server ended this session (shutdown, crash of another backend): it is gone too.
        if (e.sqlstate().compare(0, 4, "57P0") == 0) m_impl->broken = true;
        failed(e.sqlstate(), e.what());
    }
    // libpqxx 6.4 turns class 40 into exceptions that do not derive from sql_error and carry no
    // SQLSTATE; each type stands for exactly one code.
    catch (const pqxx::serialization_failure& e) {
        failed("40001", e.what());
    } catch (const pqxx::deadlock_detected& e) {
        failed("40P01", e.what());
    } catch (const pqxx::statement_completion_unknown& e) {
        failed("40003", e.what());
    } catch (const pqxx::transaction_rollback& e) {
        failed("40000", e.what());
    } catch (const pqxx::failure& e) {
        failed("", e.what());
    }
    return r;
}

SqlStepResult PgSession::exec(const std::string& sql) {
    SqlStepResult r = run(sql);
    if (!r.ok()) throw PgError(sql, r.sqlstate, r.error);
    return r;
}

std::string PgSession::server_version() {
    SqlStepResult r = exec("SHOW server_version");
    if (r.rows.empty() || r.rows[0].empty()) throw PgError("SHOW server_version", "", "no row returned");
    // Debian builds say "15.18 (Debian 15.18-0+deb12u1)".
    const std::string& v = r.rows[0][0];
    return v.substr(0, v.find(' '));
}

void create_schema(const PgEndpoint& ep, const std::string& name) {
    PgSession s(ep, "");
    s.exec("CREATE SCHEMA " + quote_ident(name));
}

void drop_schema(const PgEndpoint& ep, const std::string& name) {
    PgSession s(ep, "");
    // A session left inside a transaction holds locks in the schema; do not wait forever on it.
    s.exec("SET lock_timeout = '10s'");
    s.exec("DROP SCHEMA IF EXISTS " + quote_ident(name) + " CASCADE");
}

bool is_connection_failure(const PgError& e) {
    const std::string& state = e.sqlstate();
    return state.compare(0, 2, "08") == 0 || state == "57P01" || state == "57P02" || state == "57P03";
}

namespace {

// A role's statement: on a connection opened again if the last one was lost; the server being
// away is StoreUnavailable (the port's word for it), any other error stays a PgError.
template <class F>
auto on_store(PgSession& s, F f) -> decltype(f()) {
    try {
        s.reconnect_if_broken();
        return f();
    } catch (const PgError& e) {
        if (is_connection_failure(e)) throw StoreUnavailable(e.what());
        // Only a transaction at repeatable read or serializable (write.isolation) can meet it; a
        // role elsewhere ends on it as on any database error.
        if (e.sqlstate() == "40001") throw SerializationFailure(e.what());
        throw;
    }
}

}  // namespace

RealOrderStore::RealOrderStore(PgSession& s) : m_session(s) {}

WriteResult RealOrderStore::write_state(const OrderWrite& w) { return write_order_state(w, *this); }

std::vector<WriteResult> RealOrderStore::write_states(const std::vector<OrderWrite>& ws) {
    return write_order_states(ws, *this);
}

int64_t RealOrderStore::update(const OrderUpdate& u) {
    // Prepared once per connection; the timeline's text is the statement with the values in place.
    const PreparedSql p = order_update_prepared(u);
    const std::string shown = order_update_sql(u);
    return on_store(m_session, [&] { return m_session.exec_prepared(p.name, p.definition, p.params, shown).affected; });
}

std::vector<int64_t> RealOrderStore::update_all(const std::vector<OrderUpdate>& us) {
    std::vector<std::string> statements;
    statements.reserve(us.size());
    for (const auto& u : us) statements.push_back(order_update_sql(u));
    const std::string shown = fmt::format("{} UPDATEs in one transaction, the first: {}", us.size(), statements.front());
    const std::vector<SqlStepResult> rs = on_store(m_session, [&] { return m_session.exec_batch(statements, shown); });
    std::vector<int64_t> affected;
    for (size_t i = 0; i < us.size(); ++i) affected.push_back(rs.at(i).affected);
    return affected;
}

std::optional<int64_t> RealOrderStore::update_once(const OrderWrite& w, const OrderUpdate& u) {
    const std::string inbox = inbox_insert_sql(w);
    const std::string update = order_update_sql(u);
    return on_store(m_session, [&]() -> std::optional<int64_t> {
        m_session.exec("BEGIN");
        try {
            if (m_session.exec(inbox).affected == 0) {
                m_session.exec("ROLLBACK");
                return std::nullopt;
            }
            const int64_t affected = m_session.exec(update).affected;
            m_session.exec("COMMIT");
            return affected;
        } catch (const PgError& e) {
            if (!is_connection_failure(e)) m_session.run("ROLLBACK");
            throw;
        }
    });
}

std::optional<int64_t> RealOrderStore::insert(const OrderRow& row) {
    const std::string sql = order_insert_sql(row);
    const SqlStepResult r = on_store(m_session, [&] {
        SqlStepResult ran = m_session.run(sql);
        if (!ran.ok() && ran.sqlstate != "23505") throw PgError(sql, ran.sqlstate, ran.error);
        return ran;
    });
    if (!r.ok()) return std::nullopt;
    return r.affected;
}

OrderStatements::Upserted RealOrderStore::upsert(const OrderRow& row, VersionGuard guard) {
    // (xmax = 0) tells a row this statement inserted from one it updated.
    const std::string sql = order_upsert_sql(row, guard) + " RETURNING (xmax = 0) AS inserted";
    const SqlStepResult r = on_store(m_session, [&] { return m_session.exec(sql); });
    if (r.rows.size() > 1 || (r.rows.size() == 1 && r.rows[0].size() != 1))
        throw PgError(sql, "", "expected at most one row of one column");
    return {static_cast<int64_t>(r.rows.size()), r.rows.size() == 1 && r.rows[0][0] == "t"};
}

std::optional<int64_t> RealOrderStore::begin_job(WriteIsolation level, int64_t order) {
    const std::string begin = job_begin_sql(level);
    const std::string shown = snapshot_select_sql(order);
    return on_store(m_session, [&]() -> std::optional<int64_t> {
        m_session.exec(begin);
        const SqlStepResult r = m_session.exec_prepared(
            "relab_snapshot_version", "SELECT version FROM tmp_orders WHERE id = $1", {std::to_string(order)}, shown);
        if (r.rows.empty()) return std::nullopt;
        if (r.rows.size() != 1 || r.rows[0].size() != 1) throw PgError(shown, "", "expected at most one row of one column");
        return std::stoll(r.rows[0][0]);
    });
}

void RealOrderStore::commit_job() {
    // A COMMIT the server answers ROLLBACK (the block had failed) would hide a lost write.
    const SqlStepResult r = on_store(m_session, [&] { return m_session.exec("COMMIT"); });
    if (r.tag != "COMMIT") throw PgError("COMMIT", "", "the job's transaction ended with " + r.tag + ", not COMMIT");
}

void RealOrderStore::rollback_job() {
    try {
        m_session.run("ROLLBACK");  // its own errors (no transaction left, a lost connection) change nothing
    } catch (const PgError&) {
    }
}

int64_t RealOrderStore::send_side_effect(int64_t order, const std::string& event_type, int64_t version) {
    const std::string sql = side_effect_sql(order, event_type, version);
    const SqlStepResult r = on_store(m_session, [&] { return m_session.exec(sql); });
    if (r.rows.size() != 1 || r.rows[0].size() != 1) throw PgError(sql, "", "expected one row with seq");
    return std::stoll(r.rows[0][0]);
}

std::vector<SideEffectRow> RealOrderStore::side_effects() {
    const std::string sql = "SELECT seq, order_id, event_type, version FROM tmp_side_effects ORDER BY seq";
    SqlStepResult r = on_store(m_session, [&] { return m_session.exec(sql); });
    std::vector<SideEffectRow> out;
    for (const auto& row : r.rows) {
        if (row.size() != 4) throw PgError(sql, "", "expected 4 columns");
        out.push_back(SideEffectRow{std::stoll(row[0]), std::stoll(row[1]), row[2], std::stoll(row[3])});
    }
    return out;
}

std::vector<OrderRow> RealOrderStore::rows() {
    const std::string sql = "SELECT id, status, version, amount FROM tmp_orders ORDER BY id";
    SqlStepResult r = on_store(m_session, [&] { return m_session.exec(sql); });
    std::vector<OrderRow> out;
    out.reserve(r.rows.size());
    for (const auto& row : r.rows) {
        if (row.size() != 4) throw PgError(sql, "", "expected 4 columns");
        out.push_back(OrderRow{std::stoll(row[0]), row[1], std::stoll(row[2]), std::stoll(row[3])});
    }
    return out;
}

std::string sql_quote_literal(const std::string& s) { return quote_literal(s); }

void reset_inbox_table(PgSession& s) {
    s.exec("CREATE TABLE IF NOT EXISTS tmp_inbox (aggregate_id bigint NOT NULL, version bigint NOT NULL, "
           "PRIMARY KEY (aggregate_id, version))");
    s.exec("DELETE FROM tmp_inbox");
}

void reset_orders_table(PgSession& s, const std::vector<OrderRow>& initial) {
    s.exec("CREATE TABLE IF NOT EXISTS tmp_orders (id bigint PRIMARY KEY, status text NOT NULL, version bigint NOT NULL, "
           "amount bigint NOT NULL DEFAULT 0)");
    s.exec("DELETE FROM tmp_orders");
    if (initial.empty()) return;
    std::string sql = "INSERT INTO tmp_orders (id, status, version, amount) VALUES ";
    for (size_t i = 0; i < initial.size(); ++i) {
        if (i > 0) sql += ", ";
        sql += fmt::format("({}, {}, {}, {})", initial[i].id, quote_literal(initial[i].status), initial[i].version,
                           initial[i].amount);
    }
    s.exec(sql);
}

}  // namespace relab

namespace relab {

RealOutbox::RealOutbox(PgSession& s) : m_session(s) {}

int64_t RealOutbox::record_change(int64_t order, const std::string& status, int64_t version) {
    return on_store(m_session, [&] {
        // The state change and its event commit together or not at all.
        m_session.exec("BEGIN");
        try {
            m_session.exec(fmt::format("UPDATE tmp_src_orders SET status = {}, version = {} WHERE id = {}",
                                       quote_literal(status), version, order));
            const auto r = m_session.exec(fmt::format(
                "INSERT INTO tmp_outbox (aggregate_id, type, version) VALUES ({}, {}, {}) RETURNING id", order,
                quote_literal(status), version));
            m_session.exec("COMMIT");
            return std::stoll(r.rows.at(0).at(0));
        } catch (const PgError& e) {
            if (!is_connection_failure(e)) m_session.run("ROLLBACK");  // a lost connection took the transaction
            throw;
        } catch (...) {
            m_session.run("ROLLBACK");
            throw;
        }
    });
}

std::vector<OutboxRow> RealOutbox::unpublished(OutboxOrder order) {
    const char* order_by = order == OutboxOrder::by_id ? "id" : "aggregate_id, id";
    const auto r = on_store(m_session, [&] {
        return m_session.exec(fmt::format(
            "SELECT id, aggregate_id, type, version, attempts FROM tmp_outbox WHERE published_at IS NULL ORDER BY {}{}",
            order_by, m_in_round ? " FOR UPDATE" : ""));
    });
    std::vector<OutboxRow> out;
    for (const auto& row : r.rows)
        out.push_back(OutboxRow{std::stoll(row[0]), std::stoll(row[1]), row[2], std::stoll(row[3]), std::stoi(row[4])});
    return out;
}

void RealOutbox::mark_published(int64_t id, const std::string& entry_id) {
    on_store(m_session, [&] {
        m_session.exec(fmt::format("UPDATE tmp_outbox SET published_at = now(), stream_id = {} WHERE id = {}",
                                   quote_literal(entry_id), id));
    });
}

void RealOutbox::count_failed_attempt(int64_t id) {
    on_store(m_session, [&] { m_session.exec(fmt::format("UPDATE tmp_outbox SET attempts = attempts + 1 WHERE id = {}", id)); });
}

void RealOutbox::begin_round() {
    m_in_round = false;  // a round whose connection was lost left no transaction behind
    on_store(m_session, [&] { m_session.exec("BEGIN"); });
    m_in_round = true;
}

void RealOutbox::commit_round() {
    m_in_round = false;
    on_store(m_session, [&] { m_session.exec("COMMIT"); });
}

void reset_side_effects_table(PgSession& s) {
    s.exec("CREATE TABLE IF NOT EXISTS tmp_side_effects (seq bigserial PRIMARY KEY, order_id bigint NOT NULL, "
           "event_type text NOT NULL, version bigint NOT NULL, sent_at timestamptz NOT NULL DEFAULT clock_timestamp())");
    s.exec("TRUNCATE tmp_side_effects RESTART IDENTITY");
}

std::string outbox_claim_sql(ClaimScope scope, const std::vector<int64_t>& skip) {
    std::string sql = "SELECT id, aggregate_id, type, version, attempts FROM tmp_outbox o WHERE published_at IS NULL";
    if (scope == ClaimScope::aggregate_head)
        sql += " AND NOT EXISTS (SELECT 1 FROM tmp_outbox e WHERE e.aggregate_id = o.aggregate_id "
               "AND e.published_at IS NULL AND e.id < o.id)";
    if (!skip.empty())
        sql += fmt::format(" AND {} NOT IN ({})", scope == ClaimScope::aggregate_head ? "aggregate_id" : "id",
                           fmt::join(skip, ", "));
    return sql + " ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED";
}

std::optional<OutboxRow> RealOutbox::claim_next(ClaimScope scope, const std::vector<int64_t>& skip) {
    if (!m_in_round) throw std::logic_error("RealOutbox::claim_next outside begin_round()");
    const auto r = on_store(m_session, [&] { return m_session.exec(outbox_claim_sql(scope, skip)); });
    if (r.rows.empty()) return std::nullopt;
    const auto& row = r.rows.front();
    return OutboxRow{std::stoll(row[0]), std::stoll(row[1]), row[2], std::stoll(row[3]), std::stoi(row[4])};
}

void reset_source_tables(PgSession& s, const std::vector<OrderRow>& source_rows) {
    s.exec("CREATE TABLE IF NOT EXISTS tmp_src_orders (id bigint PRIMARY KEY, status text NOT NULL, version bigint NOT NULL)");
    s.exec("CREATE TABLE IF NOT EXISTS tmp_outbox (id bigserial PRIMARY KEY, aggregate_id bigint NOT NULL, "
           "type text NOT NULL, version bigint NOT NULL, attempts int NOT NULL DEFAULT 0, "
           "published_at timestamptz, stream_id text)");
    s.exec("TRUNCATE tmp_outbox RESTART IDENTITY");
    s.exec("DELETE FROM tmp_src_orders");
    for (const auto& r : source_rows)
        s.exec(fmt::format("INSERT INTO tmp_src_orders (id, status, version) VALUES ({}, {}, {})", r.id,
                           quote_literal(r.status), r.version));
}

}  // namespace relab
