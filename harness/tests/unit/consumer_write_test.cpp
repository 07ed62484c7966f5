// The consumer's write path (roles/consumer/write.h): plain and CAS writes on the simulator's
// table, a read's writes in one batch, the side effect, and write.isolation's transaction with its
// serialization retries (on a store whose COMMITs a test refuses: the simulator has no
// transactions of its own).
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "roles/consumer/write.h"
#include "roles/order_sql.h"
#include "sim_role_fixture.h"

namespace relab {
namespace consumer_write_test {

using test::SimRoleWorld;

const Event k_paid{42, "paid", 2};
const Event k_created{42, "created", 1};

// k_paid's spec, as a poison event ("fails": true).
EventSpec poison_paid() {
    EventSpec e;
    e.order = 42;
    e.type = "paid";
    e.version = 2;
    e.fails = true;
    return e;
}

StreamEntry entry_of(const std::string& id, const Event& ev) { return StreamEntry{id, event_fields(ev)}; }

// The write path of one consumer on `p`, its results in order.
struct Writer {
    Writer(const RoleSettings& s, RolePorts& p) : c(s, "C1", p), job(c), acks(c), write(c, job, acks) {}
    ConsumerContext c;
    ConsumerJob job;
    StreamAcks acks;
    ConsumerWrite write;
};

TEST(ConsumerWriteTest, a_plain_write_updates_the_row_and_records_its_statement) {
    const RoleSettings s;
    SimRoleWorld w(s);
    std::optional<ConsumerWrite::Result> result;
    w.spawn("C1", [&](RolePorts& p) { result = Writer(s, p).write.run(entry_of("5-0", k_paid), k_paid); });
    w.run();
    EXPECT_EQ(result, ConsumerWrite::Result::done);
    EXPECT_EQ(w.world.orders().rows().at(0).status, "paid");
    const auto writes = w.records(Op::write);
    ASSERT_EQ(writes.size(), 1u);
    EXPECT_EQ(writes[0].data.at("sql"), "UPDATE tmp_orders SET status = 'paid' WHERE id = 42");
    EXPECT_EQ(writes[0].data.at("mode"), "plain");
    EXPECT_EQ(writes[0].data.at("affected"), 1);
    EXPECT_FALSE(writes[0].data.contains("version"));
    EXPECT_EQ(record_entry(writes[0]), "5-0");
    EXPECT_TRUE(w.records(Op::ack).empty());  // acknowledging is the caller's
}

// CAS: v2 applied, then v1 refused by the guard (affected 0): the row keeps v2.
TEST(ConsumerWriteTest, a_cas_write_of_an_older_version_changes_nothing) {
    RoleSettings s;
    s.write.mode = WriteMode::cas;
    SimRoleWorld w(s);
    w.spawn("C1", [&](RolePorts& p) {
        Writer writer(s, p);
        writer.write.run(entry_of("5-0", k_paid), k_paid);
        writer.write.run(entry_of("6-0", k_created), k_created);
    });
    w.run();
    const auto writes = w.records(Op::write);
    ASSERT_EQ(writes.size(), 2u);
    EXPECT_EQ(writes[0].data.at("affected"), 1);
    EXPECT_EQ(writes[0].data.at("version"), 2);
    EXPECT_EQ(writes[1].data.at("affected"), 0);
    EXPECT_EQ(writes[1].data.at("sql"),
              "UPDATE tmp_orders SET status = 'created', version = 1 WHERE id = 42 AND version < 1");
    EXPECT_EQ(w.world.orders().rows().at(0).status, "paid");
    EXPECT_EQ(w.world.orders().rows().at(0).version, 2);
}

// write.commit "batch": nothing reaches the table until flush; then both writes in one round
// trip, each recorded with the batch's size, and only then their XACKs.
TEST(ConsumerWriteTest, a_batch_waits_for_flush_and_is_acknowledged_after_its_writes) {
    RoleSettings s;
    s.write.mode = WriteMode::cas;
    s.write.commit = WriteSpec::Commit::batch;
    SimRoleWorld w(s);
    std::vector<ConsumerWrite::Result> results;
    std::string before_flush;
    Nanos flush_took{0};
    w.spawn("C1", [&](RolePorts& p) {
        Writer writer(s, p);
        results.push_back(writer.write.run(entry_of("5-0", k_created), k_created));
        results.push_back(writer.write.run(entry_of("6-0", k_paid), k_paid));
        before_flush = w.world.orders().rows().at(0).status;
        const Nanos t0 = p.clock.now();
        writer.write.flush();
        flush_took = p.clock.now() - t0;
    });
    w.run();
    EXPECT_EQ(results, std::vector<ConsumerWrite::Result>(2, ConsumerWrite::Result::batched));
    EXPECT_EQ(before_flush, "new");
    EXPECT_EQ(w.world.orders().rows().at(0).status, "paid");
    EXPECT_EQ(w.ops(), (std::vector<std::string>{"write", "write", "ack", "ack"}));
    for (const auto& r : w.records(Op::write)) EXPECT_EQ(r.data.at("batch"), 2);
    // One write round trip and two XACKs of 100 µs each.
    EXPECT_EQ(flush_took, Nanos{300'000});
}

TEST(ConsumerWriteTest, the_side_effect_goes_out_after_the_write_whatever_it_did) {
    RoleSettings s;
    s.write.mode = WriteMode::cas;
    s.write.side_effect = true;
    SimRoleWorld w(s);
    w.spawn("C1", [&](RolePorts& p) {
        Writer writer(s, p);
        writer.write.run(entry_of("5-0", k_paid), k_paid);
        writer.write.run(entry_of("6-0", k_created), k_created);
    });
    w.run();
    EXPECT_EQ(w.ops(), (std::vector<std::string>{"write", "side_effect", "write", "side_effect"}));
    const auto sent = w.records(Op::side_effect);
    EXPECT_EQ(sent[0].data.at("applied"), true);
    EXPECT_EQ(sent[1].data.at("applied"), false);
    EXPECT_EQ(sent[1].data.at("seq"), 2);
    EXPECT_EQ(w.world.orders().side_effects().size(), 2u);
}

// A poison event's job fails after its cost: nothing written, nothing recorded.
TEST(ConsumerWriteTest, a_poison_job_fails_after_its_cost_and_writes_nothing) {
    RoleSettings s;
    s.events = {poison_paid()};
    s.job_cost_ms = {{"paid", 10}};
    SimRoleWorld w(s);
    std::optional<ConsumerWrite::Result> result;
    w.spawn("C1", [&](RolePorts& p) { result = Writer(s, p).write.run(entry_of("5-0", k_paid), k_paid); });
    w.run();
    EXPECT_EQ(result, ConsumerWrite::Result::failed);
    EXPECT_TRUE(w.history.records().empty());
    EXPECT_EQ(w.world.orders().rows().at(0).status, "new");
    EXPECT_GE(w.world.now(), Millis{10});
}

// A job's transaction store for write.isolation: its first `conflicts` COMMITs are refused with
// 40001, as PostgreSQL refuses a transaction whose row another one changed after its snapshot.
// A refused try never reaches the table; the try that commits writes through the simulator's.
class ConflictingTransactions : public OrderStore {
public:
    ConflictingTransactions(OrderStore& table, int conflicts) : m_table(table), m_conflicts_left(conflicts) {}
    std::optional<int64_t> begin_job(WriteIsolation level, int64_t order) override {
        begun.push_back(job_begin_sql(level) + "; " + snapshot_select_sql(order));
        return 7;
    }
    WriteResult write_state(const OrderWrite& w) override {
        if (m_conflicts_left == 0) return m_table.write_state(w);
        WriteResult refused_later;
        refused_later.affected = 1;
        refused_later.sql = order_write_sql(w);
        return refused_later;
    }
    void commit_job() override {
        if (m_conflicts_left == 0) return;
        --m_conflicts_left;
        throw SerializationFailure("could not serialize access due to concurrent update");
    }
    void rollback_job() override { ++rollbacks; }
    std::vector<OrderRow> rows() override { return m_table.rows(); }

    std::vector<std::string> begun;
    int rollbacks = 0;

private:
    OrderStore& m_table;
    int m_conflicts_left;
};

struct IsolatedRun {
    std::optional<ConsumerWrite::Result> result;
    std::vector<std::string> begun;
    int rollbacks = 0;
};

// One job under repeatable_read (3 retries, a 10 ms cost) whose first `conflicts` COMMITs fail.
IsolatedRun run_isolated(SimRoleWorld& w, const RoleSettings& s, int conflicts) {
    IsolatedRun out;
    w.spawn("C1", [&](RolePorts& p) {
        ConflictingTransactions store(p.orders, conflicts);
        RolePorts q{p.clock, p.rng, p.stream, p.kv, store, p.outbox, p.history};
        out.result = Writer(s, q).write.run(entry_of("5-0", k_paid), k_paid);
        out.begun = store.begun;
        out.rollbacks = store.rollbacks;
    });
    w.run();
    return out;
}

RoleSettings isolated() {
    RoleSettings s;
    s.write.mode = WriteMode::cas;
    s.write.isolation = WriteIsolation::repeatable_read;
    s.write.serialization_retries = 3;
    s.job_cost_ms = {{"paid", 10}};
    return s;
}

// Two 40001s: each recorded with its try and the snapshot it read, the whole job run again; the
// third try commits and is the one write, saying it took 3 attempts.
TEST(ConsumerWriteTest, under_isolation_a_serialization_failure_runs_the_whole_job_again) {
    const RoleSettings s = isolated();
    SimRoleWorld w(s);
    const IsolatedRun run = run_isolated(w, s, 2);
    EXPECT_EQ(run.result, ConsumerWrite::Result::done);
    EXPECT_EQ(w.ops(), (std::vector<std::string>{"serialization_failure", "serialization_failure", "write"}));
    const auto failures = w.records(Op::serialization_failure);
    for (size_t i = 0; i < failures.size(); ++i) {
        EXPECT_EQ(failures[i].data.at("attempt"), i + 1);
        EXPECT_EQ(failures[i].data.at("retry"), true);
        EXPECT_EQ(failures[i].data.at("snapshot_version"), 7);
        EXPECT_EQ(failures[i].data.at("isolation"), "repeatable_read");
    }
    const auto writes = w.records(Op::write);
    ASSERT_EQ(writes.size(), 1u);
    EXPECT_EQ(writes[0].data.at("attempts"), 3);
    const std::string update = "UPDATE tmp_orders SET status = 'paid', version = 2 WHERE id = 42 AND version < 2";
    EXPECT_EQ(writes[0].data.at("sql"), job_transaction_sql(WriteIsolation::repeatable_read, 42, update));
    EXPECT_EQ(run.begun.size(), 3u);
    EXPECT_EQ(run.begun[0], "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT version FROM tmp_orders WHERE id = 42");
    EXPECT_EQ(run.rollbacks, 2);
    EXPECT_GE(w.world.now(), Millis{30});  // the job's cost, once per try
    EXPECT_EQ(w.world.orders().rows().at(0).status, "paid");
}

// Four 40001s with 3 retries: the fourth failure says no retry, and the job is over unwritten (the
// caller acknowledges it, as a consumer that logs the error and moves on does).
TEST(ConsumerWriteTest, under_isolation_the_job_is_given_up_unwritten_after_serialization_retries) {
    const RoleSettings s = isolated();
    SimRoleWorld w(s);
    const IsolatedRun run = run_isolated(w, s, 4);
    EXPECT_EQ(run.result, ConsumerWrite::Result::done);
    const auto failures = w.records(Op::serialization_failure);
    ASSERT_EQ(failures.size(), 4u);
    EXPECT_EQ(failures[2].data.at("retry"), true);
    EXPECT_EQ(failures[3].data.at("retry"), false);
    EXPECT_TRUE(w.records(Op::write).empty());
    EXPECT_EQ(run.rollbacks, 4);
    EXPECT_EQ(w.world.orders().rows().at(0).status, "new");
}

TEST(ConsumerWriteTest, under_isolation_a_poison_job_rolls_back_and_fails) {
    RoleSettings s = isolated();
    s.events = {poison_paid()};
    SimRoleWorld w(s);
    const IsolatedRun run = run_isolated(w, s, 0);
    EXPECT_EQ(run.result, ConsumerWrite::Result::failed);
    EXPECT_EQ(run.rollbacks, 1);
    EXPECT_TRUE(w.history.records().empty());
    EXPECT_EQ(w.world.orders().rows().at(0).status, "new");
}

}  // namespace consumer_write_test
}  // namespace relab
