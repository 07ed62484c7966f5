// PgSession, PgSchemaGuard and RealOrderStore against a real PostgreSQL: one EmbeddedPostgres for
// the whole binary, started by the first test that needs it; every test works in its own schema.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "clients/pg_client.h"
#include "process/pg_schema_guard.h"
#include "process/proc_stat.h"
#include "servers/servers.h"
#include "roles/order_sql.h"

namespace relab {

// gtest prints these in failure messages.
inline bool operator==(const OrderRow& a, const OrderRow& b) {
    return a.id == b.id && a.status == b.status && a.version == b.version;
}
inline std::ostream& operator<<(std::ostream& os, const OrderRow& r) {
    return os << "{" << r.id << ", " << r.status << ", " << r.version << "}";
}

namespace pg_client_test {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

// Stops the shared server after the last test, before static destruction.
class SharedPostgresEnvironment : public ::testing::Environment {
public:
    static const PgEndpoint& endpoint() {
        if (!s_pg && s_error.empty()) {
            try {
                s_pg = std::make_unique<EmbeddedPostgres>();
            } catch (const std::exception& e) {
                s_error = e.what();
            }
        }
        if (!s_pg) throw std::runtime_error("no PostgreSQL for the tests: " + s_error);
        return s_pg->endpoint();
    }
    void TearDown() override { s_pg.reset(); }

private:
    static inline std::unique_ptr<EmbeddedPostgres> s_pg;
    static inline std::string s_error;
};

[[maybe_unused]] ::testing::Environment* const g_pg_environment =
    ::testing::AddGlobalTestEnvironment(new SharedPostgresEnvironment);

std::string unique_schema_name() {
    static int counter = 0;
    return "relabtest_" + std::to_string(getpid()) + "_" + std::to_string(++counter);
}

bool schema_exists(PgSession& admin, const std::string& name) {
    std::string literal = "'";
    for (char c : name) literal += c == '\'' ? std::string("''") : std::string(1, c);
    literal += "'";
    return admin.exec("SELECT count(*) FROM pg_namespace WHERE nspname = " + literal).rows.at(0).at(0) == "1";
}

// "name" as an SQL identifier, quotes doubled.
std::string quoted_ident(const std::string& name) {
    std::string out = "\"";
    for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

// True once the backend `pid` waits for a lock (an UPDATE queued behind another's row lock).
bool wait_until_waiting_on_lock(PgSession& admin, const std::string& pid) {
    const auto deadline = SteadyClock::now() + 5s;
    while (SteadyClock::now() < deadline) {
        SqlStepResult r = admin.exec("SELECT wait_event_type FROM pg_stat_activity WHERE pid = " + pid);
        if (!r.rows.empty() && r.rows[0][0] == "Lock") return true;
        std::this_thread::sleep_for(5ms);
    }
    return false;
}

const std::string kPaidCas = order_write_sql({42, "paid", 2, WriteMode::cas});
const std::string kShippedCas = order_write_sql({42, "shipped", 2, WriteMode::cas});

// Each test gets a schema of its own with tmp_orders = {42, created, 1}, and a session in it.
class PgFixture : public ::testing::Test {
protected:
    void SetUp() override {
        m_guard = std::make_unique<PgSchemaGuard>(endpoint(), unique_schema_name());
        m_session = std::make_unique<PgSession>(endpoint(), schema());
        reset_orders_table(session(), {{42, "created", 1}});
    }
    void TearDown() override {
        m_session.reset();
        m_guard.reset();
    }
    const PgEndpoint& endpoint() const { return SharedPostgresEnvironment::endpoint(); }
    const std::string& schema() const { return m_guard->name(); }
    PgSession& session() { return *m_session; }

    std::unique_ptr<PgSchemaGuard> m_guard;
    std::unique_ptr<PgSession> m_session;
};

class PgSessionTest : public PgFixture {};
class OrderStoreTest : public PgFixture {};

// ---------------------------------------------------------------- PgSession

TEST_F(PgSessionTest, BeginUpdateCommitGiveCommandTags) {
    SqlStepResult begin = session().run("BEGIN");
    EXPECT_TRUE(begin.ok());
    EXPECT_EQ(begin.tag, "BEGIN");
    SqlStepResult update = session().run(kPaidCas);
    EXPECT_EQ(update.tag, "UPDATE 1");
    EXPECT_EQ(update.affected, 1);
    EXPECT_EQ(session().run("COMMIT").tag, "COMMIT");

    SqlStepResult select = session().run("SELECT id, status, NULL AS note FROM tmp_orders");
    EXPECT_EQ(select.tag, "SELECT 1");
    EXPECT_EQ(select.columns, (std::vector<std::string>{"id", "status", "note"}));
    EXPECT_EQ(select.rows, (std::vector<std::vector<std::string>>{{"42", "paid", ""}}));
    // Outside a block COMMIT only warns, as in psql.
    EXPECT_EQ(session().run("COMMIT").tag, "COMMIT");
}

TEST_F(PgSessionTest, SessionWorksInItsSchema) {
    EXPECT_EQ(session().exec("SELECT current_schema()").rows.at(0).at(0), schema());
    PgSession admin(endpoint(), "");
    EXPECT_EQ(admin.exec("SELECT count(*) FROM information_schema.tables WHERE table_name = 'tmp_orders' AND "
                         "table_schema = '" + schema() + "'")
                  .rows.at(0)
                  .at(0),
              "1");
}

// PgConnect::on_first_use (a stream lab's producer): no backend until a statement comes; then
// the session is as any other, in its schema; a server that is not there fails that statement.
TEST_F(PgSessionTest, ASessionThatConnectsOnFirstUseOpensNoBackendUntilItsFirstStatement) {
    PgSession admin(endpoint(), "");
    const auto backends = [&] {
        return std::stoi(admin.exec("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'")
                             .rows.at(0)
                             .at(0));
    };
    const int before = backends();
    PgSession lazy(endpoint(), schema(), PgConnect::on_first_use);
    EXPECT_EQ(backends(), before) << "connected before its first statement";
    EXPECT_EQ(lazy.exec("SELECT current_schema()").rows.at(0).at(0), schema());
    EXPECT_EQ(backends(), before + 1);

    PgEndpoint nowhere = endpoint();
    nowhere.port = 1;
    PgSession away(nowhere, schema(), PgConnect::on_first_use);  // no throw: nothing tried yet
    try {
        away.exec("SELECT 1");
        FAIL() << "a statement ran on a server that is not there";
    } catch (const PgError& e) {
        EXPECT_NE(std::string(e.what()).find("connect to"), std::string::npos) << e.what();
    }
}

TEST_F(PgSessionTest, ErrorsCarryTheSqlstateAndExecThrows) {
    SqlStepResult r = session().run("SELEC 1");
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.sqlstate, "42601");
    EXPECT_NE(r.error.find("syntax error"), std::string::npos) << r.error;
    EXPECT_EQ(r.error.rfind("ERROR:", 0), std::string::npos) << r.error;
    EXPECT_TRUE(r.tag.empty());
    try {
        session().exec("SELECT * FROM no_such_table");
        FAIL() << "exec must throw on an SQL error";
    } catch (const PgError& e) {
        EXPECT_EQ(e.sql(), "SELECT * FROM no_such_table");
        EXPECT_EQ(e.sqlstate(), "42P01");
        EXPECT_NE(std::string(e.what()).find("no_such_table"), std::string::npos) << e.what();
    }
}

TEST_F(PgSessionTest, TransactionRollbackErrorsKeepTheirExactSqlstate) {
    // libpqxx 6.4 maps these to exception types without a SQLSTATE; the session must restore it.
    for (const std::string code : {"40000", "40001", "40002", "40003", "40P01", "23505", "57014"}) {
        SqlStepResult r =
            session().run("DO $$ BEGIN RAISE EXCEPTION 'boom %', 1 USING ERRCODE = '" + code + "'; END $$");
        EXPECT_EQ(r.sqlstate, code);
        EXPECT_NE(r.error.find("boom 1"), std::string::npos) << code << ": " << r.error;
    }
}

TEST_F(PgSessionTest, AnErrorInsideABlockLeavesItAbortedUntilRollback) {
    EXPECT_EQ(session().run("BEGIN").tag, "BEGIN");
    EXPECT_EQ(session().run(kPaidCas).tag, "UPDATE 1");
    EXPECT_EQ(session().run("SELEC 1").sqlstate, "42601");
    EXPECT_EQ(session().run("SELECT 1").sqlstate, "25P02");
    // COMMIT of an aborted block rolls back and says so.
    EXPECT_EQ(session().run("COMMIT").tag, "ROLLBACK");
    EXPECT_EQ(session().exec("SELECT status FROM tmp_orders WHERE id = 42").rows.at(0).at(0), "created");
}

TEST_F(PgSessionTest, OverlappingUpdateUnderReadCommittedWaitsThenMatchesNothing) {
    PgSession admin(endpoint(), "");
    PgSession b(endpoint(), schema());
    b.exec("SET lock_timeout = '10s'");  // a broken test must not hang
    const std::string b_pid = b.exec("SELECT pg_backend_pid()").rows.at(0).at(0);
    std::future<SqlStepResult> b_update;
    // Declared last so that, should anything throw, its connection closes first and releases b.
    PgSession a(endpoint(), schema());

    EXPECT_EQ(a.run("BEGIN").tag, "BEGIN");
    EXPECT_EQ(a.run(kPaidCas).tag, "UPDATE 1");
    b_update = std::async(std::launch::async, [&] { return b.run(kShippedCas); });
    EXPECT_TRUE(wait_until_waiting_on_lock(admin, b_pid));
    EXPECT_EQ(b_update.wait_for(0ms), std::future_status::timeout);
    EXPECT_EQ(a.run("COMMIT").tag, "COMMIT");

    SqlStepResult r = b_update.get();
    EXPECT_TRUE(r.ok()) << r.sqlstate << " " << r.error;
    EXPECT_EQ(r.tag, "UPDATE 0");
    EXPECT_EQ(r.affected, 0);
    EXPECT_EQ(RealOrderStore(session()).rows(), (std::vector<OrderRow>{{42, "paid", 2}}));
}

TEST_F(PgSessionTest, OverlappingUpdateUnderRepeatableReadFailsWith40001AndRollbackWorks) {
    PgSession admin(endpoint(), "");
    PgSession b(endpoint(), schema());
    b.exec("SET lock_timeout = '10s'");
    const std::string b_pid = b.exec("SELECT pg_backend_pid()").rows.at(0).at(0);
    std::future<SqlStepResult> b_update;
    PgSession a(endpoint(), schema());

    EXPECT_EQ(b.run("BEGIN ISOLATION LEVEL REPEATABLE READ").tag, "BEGIN");
    EXPECT_EQ(a.run("BEGIN").tag, "BEGIN");
    EXPECT_EQ(a.run(kPaidCas).tag, "UPDATE 1");
    b_update = std::async(std::launch::async, [&] { return b.run(kShippedCas); });
    EXPECT_TRUE(wait_until_waiting_on_lock(admin, b_pid));
    EXPECT_EQ(a.run("COMMIT").tag, "COMMIT");

    SqlStepResult r = b_update.get();
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.sqlstate, "40001");
    EXPECT_NE(r.error.find("could not serialize access"), std::string::npos) << r.error;
    EXPECT_TRUE(r.tag.empty());
    EXPECT_EQ(b.run("SELECT 1").sqlstate, "25P02");
    EXPECT_EQ(b.run("ROLLBACK").tag, "ROLLBACK");
    EXPECT_EQ(b.run("SELECT status, version FROM tmp_orders WHERE id = 42").rows,
              (std::vector<std::vector<std::string>>{{"paid", "2"}}));
}

TEST_F(PgSessionTest, ServerVersionIsTheNumberOnly) {
    std::string v = session().server_version();
    EXPECT_TRUE(std::regex_match(v, std::regex(R"(\d+\.\d+)"))) << v;
    int num = std::stoi(session().exec("SHOW server_version_num").rows.at(0).at(0));
    EXPECT_EQ(std::stoi(v), num / 10000) << v;
}

TEST_F(PgSessionTest, ConnectionRefusedGivesPgErrorWithoutPassword) {
    PgEndpoint ep;
    ep.port = free_loopback_port();
    ep.user = "relab";
    ep.password = "pg-secret-42";
    ep.dbname = "relab";
    try {
        PgSession s(ep, "");
        FAIL() << "connecting to a closed port must throw";
    } catch (const PgError& e) {
        std::string what = e.what();
        EXPECT_EQ(e.sqlstate(), "08001");
        EXPECT_NE(what.find(std::to_string(ep.port)), std::string::npos) << what;
        EXPECT_EQ(what.find("pg-secret-42"), std::string::npos) << what;
    }
}

TEST_F(PgSessionTest, ALostConnectionFailsInsteadOfReconnectingSilently) {
    const std::string pid = session().exec("SELECT pg_backend_pid()").rows.at(0).at(0);
    EXPECT_EQ(session().run("BEGIN").tag, "BEGIN");
    PgSession admin(endpoint(), "");
    EXPECT_EQ(admin.exec("SELECT pg_terminate_backend(" + pid + ")").rows.at(0).at(0), "t");
    // A silent reconnect would run statements outside the block and outside the schema, so every
    // later statement must throw. (libpqxx 6 reconnects on the third one unless told not to.)
    for (int attempt = 0; attempt < 5; ++attempt) {
        try {
            session().run("SELECT 1");
            ADD_FAILURE() << "attempt " << attempt << " ran on a new connection";
        } catch (const PgError& e) {
            // The first statement meets the lost connection (08006); every later one is refused
            // because it was not opened again (08003, connection_does_not_exist).
            EXPECT_EQ(e.sqlstate(), attempt == 0 ? "08006" : "08003") << e.what();
        }
    }
    EXPECT_EQ(admin.exec("SELECT status FROM \"" + schema() + "\".tmp_orders").rows.at(0).at(0), "created");
}

// ---------------------------------------------------------------- PgSchemaGuard

TEST(PgSchemaTest, GuardCreatesAndDropsItsSchemaWithEverythingInIt) {
    const PgEndpoint& ep = SharedPostgresEnvironment::endpoint();
    PgSession admin(ep, "");
    const std::string name = unique_schema_name() + "_with \"quote\"";
    {
        PgSchemaGuard guard(ep, name);
        EXPECT_EQ(guard.name(), name);
        EXPECT_TRUE(schema_exists(admin, name));
        PgSession s(ep, name);
        reset_orders_table(s, {{1, "created", 1}});
        guard.drop();
        EXPECT_FALSE(schema_exists(admin, name));
        // Idempotent: a second drop() does nothing, even to a schema of the same name made since.
        admin.exec("CREATE SCHEMA " + quoted_ident(name));
        guard.drop();
        EXPECT_TRUE(schema_exists(admin, name));
        admin.exec("DROP SCHEMA " + quoted_ident(name));
    }
    std::string scoped;
    {
        PgSchemaGuard guard(ep, unique_schema_name());
        scoped = guard.name();
        EXPECT_TRUE(schema_exists(admin, scoped));
    }
    EXPECT_FALSE(schema_exists(admin, scoped));
}

TEST(PgSchemaTest, ExistingSchemaNameIsAnError) {
    const PgEndpoint& ep = SharedPostgresEnvironment::endpoint();
    PgSchemaGuard first(ep, unique_schema_name());
    try {
        PgSchemaGuard second(ep, first.name());
        FAIL() << "a second guard on the same schema must throw";
    } catch (const PgError& e) {
        EXPECT_EQ(e.sqlstate(), "42P06");
    }
    PgSession admin(ep, "");
    EXPECT_TRUE(schema_exists(admin, first.name()));
}

TEST(PgSchemaTest, DropIsQuietWhenTheServerIsGone) {
    EmbeddedPostgres pg;
    PgSchemaGuard guard(pg.endpoint(), unique_schema_name());
    pg.stop();
    auto start = SteadyClock::now();
    ::testing::internal::CaptureStderr();
    guard.drop();
    const std::string said = ::testing::internal::GetCapturedStderr();
    EXPECT_LT(SteadyClock::now() - start, 5s);
    // A server that is gone took the schema with it: nothing to warn about.
    EXPECT_EQ(said, "");
}

// ---------------------------------------------------------------- RealOrderStore

TEST_F(OrderStoreTest, CasWriteAffectsOneRowThenNone) {
    RealOrderStore store(session());
    OrderWrite paid{42, "paid", 2, WriteMode::cas};
    WriteResult first = store.write_state(paid);
    EXPECT_EQ(first.affected, 1);
    EXPECT_EQ(first.sql, order_write_sql(paid));
    WriteResult second = store.write_state({42, "shipped", 2, WriteMode::cas});
    EXPECT_EQ(second.affected, 0);
    EXPECT_EQ(store.rows(), (std::vector<OrderRow>{{42, "paid", 2}}));
}

// write.isolation's transaction: the snapshot's version is read at BEGIN; another session's commit
// to the row after it makes the CAS UPDATE a SerializationFailure under REPEATABLE READ (not under
// READ COMMITTED, which re-checks the guard on the committed row); after rollback_job the session
// runs the next transaction, which sees the committed version and commits.
TEST_F(OrderStoreTest, AJobsTransactionMeetsAConcurrentCommitAsASerializationFailureAndRunsAgain) {
    RealOrderStore store(session());
    PgSession other(endpoint(), schema());
    RealOrderStore other_store(other);
    const OrderWrite paid{42, "paid", 2, WriteMode::cas};
    const OrderWrite shipped{42, "shipped", 3, WriteMode::cas};

    EXPECT_EQ(store.begin_job(WriteIsolation::repeatable_read, 42), std::optional<int64_t>(1));
    EXPECT_EQ(other_store.write_state(shipped).affected, 1);  // committed after the snapshot
    EXPECT_THROW(store.write_state(paid), SerializationFailure);
    store.rollback_job();
    EXPECT_EQ(store.begin_job(WriteIsolation::repeatable_read, 42), std::optional<int64_t>(3));
    EXPECT_EQ(store.write_state(paid).affected, 0);  // the retry sees v3: the guard refuses v2
    store.commit_job();
    EXPECT_EQ(store.begin_job(WriteIsolation::serializable, 7), std::nullopt);  // no such row
    store.commit_job();

    reset_orders_table(session(), {{42, "created", 1}});
    EXPECT_EQ(store.begin_job(WriteIsolation::read_committed, 42), std::optional<int64_t>(1));
    EXPECT_EQ(other_store.write_state(shipped).affected, 1);
    EXPECT_EQ(store.write_state(paid).affected, 0);  // re-checked on the committed row, no error
    store.commit_job();
    EXPECT_EQ(store.rows(), (std::vector<OrderRow>{{42, "shipped", 3}}));
    EXPECT_EQ(job_transaction_sql(WriteIsolation::serializable, 42, "UPDATE …"),
              "BEGIN ISOLATION LEVEL SERIALIZABLE; SELECT version FROM tmp_orders WHERE id = 42; -- the job; UPDATE …; COMMIT");
}

TEST_F(OrderStoreTest, PlainWriteOverwritesWhateverTheVersion) {
    RealOrderStore store(session());
    EXPECT_EQ(store.write_state({42, "paid", 2, WriteMode::cas}).affected, 1);
    EXPECT_EQ(store.write_state({42, "created", 1, WriteMode::plain}).affected, 1);
    EXPECT_EQ(store.write_state({7, "created", 1, WriteMode::plain}).affected, 0);
    EXPECT_EQ(store.rows(), (std::vector<OrderRow>{{42, "created", 2}}));
}

// Plain and CAS writes run as statements prepared once per connection: a statement that quotes
// its value, and a connection opened again after the server dropped it (which has no prepared
// statement until the store prepares it again), still write what the text says.
TEST_F(OrderStoreTest, PreparedWritesQuoteTheirValueAndArePreparedAgainOnANewConnection) {
    RealOrderStore store(session());
    EXPECT_EQ(store.write_state({42, "o'neil", 1, WriteMode::plain}).affected, 1);
    EXPECT_EQ(store.rows(), (std::vector<OrderRow>{{42, "o'neil", 1}}));
    const std::string pid = session().exec("SELECT pg_backend_pid()").rows.at(0).at(0);
    PgSession admin(endpoint(), "");
    EXPECT_EQ(admin.exec("SELECT pg_terminate_backend(" + pid + ")").rows.at(0).at(0), "t");
    EXPECT_THROW(store.write_state({42, "paid", 2, WriteMode::cas}), StoreUnavailable);
    const WriteResult again = store.write_state({42, "paid", 2, WriteMode::cas});  // on a new connection
    EXPECT_EQ(again.affected, 1);
    EXPECT_EQ(again.sql, "UPDATE tmp_orders SET status = 'paid', version = 2 WHERE id = 42 AND version < 2");
    EXPECT_EQ(store.write_state({42, "created", 1, WriteMode::plain}).affected, 1);
    EXPECT_EQ(store.rows(), (std::vector<OrderRow>{{42, "created", 2}}));
}

// write.commit "batch": a read's writes as one multi-statement query. Each gets its own result, in
// order (the stale CAS affects nothing, the plain write to a missing row nothing), they commit
// together, and a statement that fails takes the others with it: the server runs the string as one
// transaction, and the session is usable afterwards.
TEST_F(OrderStoreTest, BatchedWritesGiveAResultEachAndCommitTogetherOrNotAtAll) {
    reset_orders_table(session(), {{42, "created", 1}, {43, "created", 1}});
    RealOrderStore store(session());
    const std::vector<OrderWrite> ws = {{42, "paid", 2, WriteMode::cas},
                                        {42, "created", 1, WriteMode::cas},
                                        {43, "o'neil", 3, WriteMode::plain},
                                        {7, "paid", 2, WriteMode::plain},
                                        {42, "shipped", 3, WriteMode::cas}};
    const std::vector<WriteResult> rs = store.write_states(ws);
    ASSERT_EQ(rs.size(), ws.size());
    std::vector<int64_t> affected;
    for (size_t i = 0; i < rs.size(); ++i) {
        affected.push_back(rs[i].affected);
        EXPECT_EQ(rs[i].sql, order_write_sql(ws[i]));
    }
    EXPECT_EQ(affected, (std::vector<int64_t>{1, 0, 1, 0, 1}));
    EXPECT_EQ(store.rows(), (std::vector<OrderRow>{{42, "shipped", 3}, {43, "o'neil", 1}}));
    EXPECT_TRUE(store.write_states({}).empty());

    // The second statement fails (division by zero) after the first ran: neither stays.
    try {
        session().exec_batch({"UPDATE tmp_orders SET status = 'lost' WHERE id = 42", "SELECT 1/0",
                              "UPDATE tmp_orders SET status = 'lost' WHERE id = 43"},
                             "a batch with a failing statement");
        ADD_FAILURE() << "the batch should have failed";
    } catch (const PgError& e) {
        EXPECT_EQ(e.sqlstate(), "22012") << e.what();
    }
    EXPECT_EQ(session().exec("SELECT count(*) FROM tmp_orders WHERE status = 'lost'").rows.at(0).at(0), "0");
    EXPECT_EQ(session().exec("SHOW transaction_isolation").rows.size(), 1u);  // no aborted block left
    EXPECT_EQ(store.rows(), (std::vector<OrderRow>{{42, "shipped", 3}, {43, "o'neil", 1}}));

    // A lost connection is StoreUnavailable, as for one write, and the next batch connects again.
    const std::string pid = session().exec("SELECT pg_backend_pid()").rows.at(0).at(0);
    PgSession admin(endpoint(), "");
    EXPECT_EQ(admin.exec("SELECT pg_terminate_backend(" + pid + ")").rows.at(0).at(0), "t");
    EXPECT_THROW(store.write_states({{43, "paid", 2, WriteMode::plain}}), StoreUnavailable);
    EXPECT_EQ(store.write_states({{43, "paid", 2, WriteMode::plain}}).at(0).affected, 1);
}

TEST_F(OrderStoreTest, UpsertInsertsAMissingRowThenAppliesOnlyNewerVersions) {
    RealOrderStore store(session());
    reset_orders_table(session(), {});
    const WriteResult paid = store.write_state({42, "paid", 2, WriteMode::upsert});
    EXPECT_EQ(paid.affected, 1);
    EXPECT_EQ(paid.row_action, "inserted");
    const WriteResult created = store.write_state({42, "created", 1, WriteMode::upsert});
    EXPECT_EQ(created.affected, 0);
    EXPECT_EQ(created.row_action, "none");
    const WriteResult shipped = store.write_state({42, "shipped", 3, WriteMode::upsert});
    EXPECT_EQ(shipped.affected, 1);
    EXPECT_EQ(shipped.row_action, "updated");
    EXPECT_EQ(store.rows(), (std::vector<OrderRow>{{42, "shipped", 3}}));
}

TEST_F(OrderStoreTest, InsertThenUpdateFallsBackToAPlainUpdateOnTheUniqueViolation) {
    RealOrderStore store(session());
    reset_orders_table(session(), {});
    const WriteResult paid = store.write_state({42, "paid", 2, WriteMode::insert_then_update});
    EXPECT_EQ(paid.row_action, "inserted");
    EXPECT_FALSE(paid.insert_conflict);
    const WriteResult created = store.write_state({42, "created", 1, WriteMode::insert_then_update});
    EXPECT_TRUE(created.insert_conflict);  // 23505, then the UPDATE
    EXPECT_EQ(created.affected, 1);
    EXPECT_EQ(created.row_action, "updated");
    EXPECT_NE(created.sql.find("23505"), std::string::npos) << created.sql;
    EXPECT_EQ(store.rows(), (std::vector<OrderRow>{{42, "created", 1}}));
}

TEST_F(OrderStoreTest, SideEffectsAreNumberedInTheOrderTheyAreSentAndResetWithTheTable) {
    RealOrderStore store(session());
    reset_side_effects_table(session());
    EXPECT_EQ(store.send_side_effect(42, "paid", 2), 1);
    EXPECT_EQ(store.send_side_effect(42, "created", 1), 2);
    EXPECT_EQ(store.side_effects(), (std::vector<SideEffectRow>{{1, 42, "paid", 2}, {2, 42, "created", 1}}));
    reset_side_effects_table(session());
    EXPECT_TRUE(store.side_effects().empty());
    EXPECT_EQ(store.send_side_effect(43, "created", 1), 1);
}

TEST_F(OrderStoreTest, ResetRestoresExactlyTheInitialRows) {
    RealOrderStore store(session());
    session().exec("INSERT INTO tmp_orders VALUES (99, 'stray', 5)");
    reset_orders_table(session(), {{2, "it's created", 1}, {1, "paid", 3}});
    EXPECT_EQ(store.rows(), (std::vector<OrderRow>{{1, "paid", 3}, {2, "it's created", 1}}));
    reset_orders_table(session(), {});
    EXPECT_TRUE(store.rows().empty());
}

}  // namespace pg_client_test
}  // namespace relab

namespace relab {
namespace pg_client_test {

// The "postgres" fault target on real servers: crash() kills the postmaster and every backend (no
// orphan keeps the shared memory), a role's store then says StoreUnavailable (its connection is
// gone, then refused) instead of a harness error, and restart() brings back every committed row
// and none of the transaction that was open at the crash. The next call connects again.
TEST(PgFaultTest, a_crash_keeps_committed_rows_loses_the_open_transaction_and_leaves_no_backend) {
    EmbeddedPostgres pg;
    PgSession s(pg.endpoint(), "");
    reset_orders_table(s, {{42, "new", 0}});
    RealOrderStore store(s);
    store.write_state({42, "paid", 2, WriteMode::plain});
    PgSession open(pg.endpoint(), "");
    open.exec("BEGIN");
    open.exec("UPDATE tmp_orders SET status = 'shipped', version = 3 WHERE id = 42");
    const int postmaster = pg.pid();
    const std::vector<int> backends = children_of(postmaster);
    ASSERT_GE(backends.size(), 3u);  // the two sessions' backends and the server's own workers

    pg.crash();
    EXPECT_FALSE(pg.running());
    for (int b : backends) EXPECT_FALSE(process_running(b)) << "backend " << b << " outlived the crash";
    EXPECT_THROW(store.write_state({42, "created", 1, WriteMode::plain}), StoreUnavailable);  // the lost connection
    EXPECT_THROW(store.rows(), StoreUnavailable);                                           // refused: still down

    const auto t0 = SteadyClock::now();
    pg.restart();
    std::cout << "[ timing   ] PostgreSQL back after its crash in "
              << std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - t0).count() << " ms\n";
    EXPECT_TRUE(pg.running());
    EXPECT_NE(pg.pid(), postmaster);
    EXPECT_EQ(store.rows(), (std::vector<OrderRow>{{42, "paid", 0}}));  // on a new connection (plain: no version)
    // A scripted session never reconnects by itself: its lost connection stays an error.
    EXPECT_THROW(open.exec("COMMIT"), PgError);
    EXPECT_THROW(open.exec("SELECT 1"), PgError);
}

// pause: every process of the server stopped, connections open; a statement waits until resume.
TEST(PgFaultTest, a_paused_server_holds_statements_until_it_resumes) {
    EmbeddedPostgres pg;
    PgSession s(pg.endpoint(), "");
    pg.pause();
    EXPECT_TRUE(pg.paused());
    auto answer = std::async(std::launch::async, [&] { return s.exec("SELECT 1").rows.at(0).at(0); });
    EXPECT_EQ(answer.wait_for(300ms), std::future_status::timeout);
    pg.resume();
    EXPECT_FALSE(pg.paused());
    ASSERT_EQ(answer.wait_for(10s), std::future_status::ready);
    EXPECT_EQ(answer.get(), "1");
}

}  // namespace pg_client_test
}  // namespace relab
