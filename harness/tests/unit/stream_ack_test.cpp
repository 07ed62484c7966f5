// stream.ack: when a consumer sends XACK. "each" (the default) acknowledges an entry as soon as its
// job is over; "batch" sends one XACK for every entry of a read once the read's last job is over.
// The loader's checks, the settings' round trip, and what the consumer does on the simulator.
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "check/outcome.h"
#include "roles/role_settings.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"
#include "sim_fixture.h"

namespace relab {
namespace stream_ack_test {

using nlohmann::json;
using test::expect_load_error;
using test::run_sim;

// One consumer busy with #1's 100 ms job while #2..#4 arrive: its next read (COUNT 5) gets all three.
json doc(const std::string& ack) {
    json d = json::parse(R"({
        "id": "t-ack", "title": "T", "kind": "workload", "consumers": 1,
        "stream": { "read_count": 5 },
        "orders": [ { "id": 1 }, { "id": 2 }, { "id": 3 }, { "id": 4 } ],
        "events": [ { "order": 1, "type": "paid", "version": 1, "at_ms": 0 },
                    { "order": 2, "type": "paid", "version": 1, "at_ms": 20 },
                    { "order": 3, "type": "paid", "version": 1, "at_ms": 20 },
                    { "order": 4, "type": "paid", "version": 1, "at_ms": 20 } ],
        "job_cost_ms": { "paid": 100 },
        "expect": { "wrong": "none", "lost": 0, "duplicated": 0 }
    })");
    d["stream"]["ack"] = ack;
    return d;
}

// The ops of the consumer's records, in order: "w<order>" for a write, "a<order>" for an ack.
std::vector<std::string> writes_and_acks(const TrialOutcome& t) {
    std::map<std::string, int64_t> order_of;  // entry ID -> order
    std::vector<std::string> out;
    for (const auto& r : t.history) {
        if (r.op == Op::receive) order_of[r.data.at("entry")] = r.data.at("event").at("order").get<int64_t>();
        if (r.op == Op::write) out.push_back("w" + std::to_string(order_of.at(r.data.at("entry"))));
        if (r.op == Op::ack) out.push_back("a" + std::to_string(order_of.at(r.data.at("entry"))));
    }
    return out;
}

TEST(StreamAckTest, each_is_the_default_and_batch_reaches_the_roles_settings) {
    json d = doc("each");
    d["stream"].erase("ack");
    EXPECT_EQ(parse_scenario(d.dump(), "f.json").flow().stream.ack, StreamSpec::Ack::each);
    const Scenario s = parse_scenario(doc("batch").dump(), "f.json");
    EXPECT_EQ(s.flow().stream.ack, StreamSpec::Ack::batch);
    EXPECT_EQ(role_settings_from_json(role_settings_to_json(role_settings(s))).stream.ack, StreamSpec::Ack::batch);
}

TEST(StreamAckTest, an_unknown_ack_and_batch_with_fanout_are_refused_with_their_path) {
    expect_load_error(doc("later"), "/stream/ack", "\"each\"");
    json d = doc("batch");
    d["fanout"] = {{"workers", 2}};
    expect_load_error(d, "/fanout", "each worker acknowledges its own job");
}

// each: a write, then its XACK, entry by entry. batch: the read of #2..#4 is acknowledged by one
// XACK after its last write, the records of that XACK saying how many it covered.
TEST(StreamAckTest, batch_acknowledges_a_read_once_after_its_last_job_and_each_after_every_job) {
    const LabResult each = run_sim(parse_scenario(doc("each").dump(), "f.json"), 3);
    const LabResult batch = run_sim(parse_scenario(doc("batch").dump(), "f.json"), 3);
    ASSERT_EQ(each.trials.size(), 3u);
    ASSERT_EQ(batch.trials.size(), 3u);
    for (const auto& t : each.trials)
        EXPECT_EQ(writes_and_acks(t), (std::vector<std::string>{"w1", "a1", "w2", "a2", "w3", "a3", "w4", "a4"}));
    for (const auto& t : batch.trials) {
        EXPECT_EQ(writes_and_acks(t), (std::vector<std::string>{"w1", "a1", "w2", "w3", "w4", "a2", "a3", "a4"}));
        std::vector<int64_t> batches;
        for (const auto& r : t.history)
            if (r.op == Op::ack) batches.push_back(r.data.at("batch").get<int64_t>());
        EXPECT_EQ(batches, (std::vector<int64_t>{1, 3, 3, 3}));
        EXPECT_TRUE(t.unmet.empty());
    }
}

}  // namespace stream_ack_test
}  // namespace relab
