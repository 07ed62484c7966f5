// write.commit: when a consumer's writes reach PostgreSQL. "each" (the default) sends every
// job's UPDATE on its own, one autocommit round trip per event; "batch" runs the jobs of a read
// first and then sends their UPDATEs as one transaction, one round trip per read. The loader's
// checks, the settings' round trip, and what the consumer does on the simulator.
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "check/outcome.h"
#include "roles/order_sql.h"
#include "roles/role_settings.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"
#include "sim_fixture.h"

namespace relab {
namespace write_commit_test {

using nlohmann::json;
using test::expect_load_error;
using test::run_sim;

// One consumer busy with #1's 100 ms job while #2..#4 arrive: its next read (COUNT 5) gets all
// three. #2 has two events in that read, paid then shipped, so the order inside the transaction
// decides its final status.
json doc(const std::string& commit) {
    json d = json::parse(R"({
        "id": "t-commit", "title": "T", "kind": "workload", "consumers": 1,
        "stream": { "read_count": 5, "ack": "batch" },
        "orders": [ { "id": 1 }, { "id": 2 }, { "id": 3 } ],
        "events": [ { "order": 1, "type": "paid", "version": 1, "at_ms": 0 },
                    { "order": 2, "type": "paid", "version": 1, "at_ms": 20 },
                    { "order": 2, "type": "shipped", "version": 2, "at_ms": 20 },
                    { "order": 3, "type": "paid", "version": 1, "at_ms": 20 } ],
        "job_cost_ms": { "paid": 100 },
        "write": { "mode": "cas" },
        "expect": { "wrong": "none", "lost": 0, "duplicated": 0 }
    })");
    d["write"]["commit"] = commit;
    return d;
}

struct Write {
    int64_t t_ns = 0;
    int64_t order = 0;
    int64_t batch = 0;  // 0: the record has no "batch"
    int64_t affected = 0;
};

std::vector<Write> writes(const TrialOutcome& t) {
    std::vector<Write> out;
    for (const auto& r : t.history) {
        if (r.op != Op::write) continue;
        out.push_back(Write{r.t_ns, r.data.at("event").at("order").get<int64_t>(), r.data.value("batch", int64_t{0}),
                            r.data.at("affected").get<int64_t>()});
    }
    return out;
}

TEST(WriteCommitTest, each_is_the_default_and_batch_reaches_the_roles_settings) {
    json d = doc("each");
    d["write"].erase("commit");
    EXPECT_EQ(parse_scenario(d.dump(), "f.json").flow().write.commit, WriteSpec::Commit::each);
    const Scenario s = parse_scenario(doc("batch").dump(), "f.json");
    EXPECT_EQ(s.flow().write.commit, WriteSpec::Commit::batch);
    EXPECT_EQ(role_settings_from_json(role_settings_to_json(role_settings(s))).write.commit, WriteSpec::Commit::batch);
}

// Whatever a job does per event around its own write has no place in one transaction per read.
TEST(WriteCommitTest, batch_is_refused_with_what_needs_a_write_of_its_own_and_says_why) {
    expect_load_error(doc("later"), "/write/commit", "\"each\"");
    json d = doc("batch");
    d["write"]["mode"] = "upsert";
    expect_load_error(d, "/write/commit", "mode \"plain\" or \"cas\", got mode \"upsert\"");
    d = doc("batch");
    d["write"]["dedupe"] = "aggregate_version";
    expect_load_error(d, "/write/commit", "inbox dedupe");
    d = doc("batch");
    d["write"]["side_effect"] = true;
    expect_load_error(d, "/write/commit", "side effect");
    d = doc("batch");
    d["lock"] = {{"key", "lock:order:{order}"}, {"ttl_ms", 1000}, {"retry_ms", 10}};
    expect_load_error(d, "/write/commit", "lock");
    d = doc("batch");
    d["buffer"] = json::object();
    expect_load_error(d, "/write/commit", "reorder buffer");
    d = doc("batch");
    d["stream"].erase("ack");
    d["fanout"] = {{"workers", 2}};
    expect_load_error(d, "/write/commit", "fanout");
}

// each: every write its own round trip, so the three writes of the second read land at three
// different virtual times. batch: the three go in one round trip after the read's jobs ran, all
// recorded at the commit's time with "batch": 3, in the read's order (#2 shipped after #2 paid);
// the final rows are the same.
// Both stores build a batch's statements with batched_write_sql: a write the loader would have
// refused is a harness error there, not a statement sent.
TEST(WriteCommitTest, a_batch_takes_plain_and_cas_writes_without_the_inbox_only) {
    OrderWrite w{42, "paid", 2, WriteMode::cas};
    EXPECT_EQ(batched_write_sql(w), "UPDATE tmp_orders SET status = 'paid', version = 2 WHERE id = 42 AND version < 2");
    w.mode = WriteMode::plain;
    EXPECT_EQ(batched_write_sql(w), "UPDATE tmp_orders SET status = 'paid' WHERE id = 42");
    w.dedupe = true;
    EXPECT_THROW(batched_write_sql(w), std::logic_error);
    w.dedupe = false;
    w.mode = WriteMode::upsert;
    EXPECT_THROW(batched_write_sql(w), std::logic_error);
    w.mode = WriteMode::insert_then_update;
    EXPECT_THROW(batched_write_sql(w), std::logic_error);
}

TEST(WriteCommitTest, batch_sends_a_reads_writes_in_one_round_trip_in_their_order) {
    const LabResult each = run_sim(parse_scenario(doc("each").dump(), "f.json"), 3);
    const LabResult batch = run_sim(parse_scenario(doc("batch").dump(), "f.json"), 3);
    ASSERT_EQ(each.trials.size(), 3u);
    ASSERT_EQ(batch.trials.size(), 3u);
    for (const auto& t : each.trials) {
        const auto w = writes(t);
        ASSERT_EQ(w.size(), 4u);
        for (const auto& x : w) EXPECT_EQ(x.batch, 0);
        EXPECT_LT(w[1].t_ns, w[2].t_ns);
        EXPECT_LT(w[2].t_ns, w[3].t_ns);
        EXPECT_TRUE(t.unmet.empty());
    }
    for (const auto& t : batch.trials) {
        const auto w = writes(t);
        ASSERT_EQ(w.size(), 4u);
        EXPECT_EQ(w[0].order, 1);
        EXPECT_EQ(w[0].batch, 1);
        std::vector<int64_t> orders;
        for (size_t i = 1; i < w.size(); ++i) {
            orders.push_back(w[i].order);
            EXPECT_EQ(w[i].batch, 3);
            EXPECT_EQ(w[i].t_ns, w[1].t_ns);
            EXPECT_EQ(w[i].affected, 1) << "CAS v" << i;
        }
        EXPECT_EQ(orders, (std::vector<int64_t>{2, 2, 3}));
        EXPECT_TRUE(t.unmet.empty());
    }
    for (const auto* lab : {&each, &batch})
        for (const auto& t : lab->trials) {
            std::map<int64_t, std::string> status;
            for (const auto& row : t.final_rows) status[row.id] = row.status;
            EXPECT_EQ(status, (std::map<int64_t, std::string>{{1, "paid"}, {2, "shipped"}, {3, "paid"}}));
        }
}

}  // namespace write_commit_test
}  // namespace relab
