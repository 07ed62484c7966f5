// Issue 12, S3 worker per key: the fanout option's loader checks, its settings' round trip, and
// the two S3 labs run on the simulator (the same consumer code the role processes run): what
// each trial shows, the throughput beside S1's, and the mutants that break each lab.
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
namespace s3_fanout_test {

using nlohmann::json;
using test::expect_load_error;
using test::run_sim;
using test::scenario;

json doc() {
    return json::parse(R"({
        "id": "t-s3", "title": "T", "kind": "workload", "consumers": 1,
        "orders": [ { "id": 42 } ],
        "events": [ { "order": 42, "type": "created", "version": 1 },
                    { "order": 42, "type": "paid", "version": 2 } ],
        "fanout": { "workers": 2 },
        "expect": { "wrong": "none" }
    })");
}

// Per order, the event types its applied writes wrote, in time order.
std::map<int64_t, std::vector<std::string>> writes_per_order(const TrialOutcome& t) {
    std::map<int64_t, std::vector<std::string>> out;
    for (const auto& r : t.history)
        if (r.op == Op::write && r.data.value("affected", 0) > 0)
            out[r.data.at("event").at("order").get<int64_t>()].push_back(r.data.at("event").at("type"));
    return out;
}

TEST(S3LoaderTest, fanout_loads_with_its_defaults_and_reaches_the_roles_settings) {
    const Scenario s = parse_scenario(doc().dump(), "f.json");
    EXPECT_TRUE(s.flow().fanout.enabled);
    EXPECT_EQ(s.flow().fanout.workers, 2);
    EXPECT_EQ(s.flow().fanout.poll_ms, 1);
    EXPECT_EQ(s.flow().fanout.dispatch, FanoutSpec::Dispatch::per_key);
    EXPECT_TRUE(s.flow().show_throughput);  // on by default with fanout
    const RoleSettings r = role_settings(s);
    EXPECT_EQ(r.fanout, s.flow().fanout);
    EXPECT_EQ(role_settings_from_json(role_settings_to_json(r)), r);

    json d = doc();
    d["fanout"] = {{"workers", 3}, {"poll_ms", 5}, {"dispatch", "any_worker"}};
    d["show_throughput"] = false;
    const Scenario t = parse_scenario(d.dump(), "f.json");
    EXPECT_EQ(t.flow().fanout.workers, 3);
    EXPECT_EQ(t.flow().fanout.poll_ms, 5);
    EXPECT_EQ(t.flow().fanout.dispatch, FanoutSpec::Dispatch::any_worker);
    EXPECT_FALSE(t.flow().show_throughput);

    json plain = doc();
    plain.erase("fanout");
    EXPECT_FALSE(parse_scenario(plain.dump(), "f.json").flow().fanout.enabled);
}

TEST(S3LoaderTest, bad_fanout_fields_are_refused_with_their_path) {
    json d = doc();
    d["fanout"]["workers"] = 0;
    expect_load_error(d, "/fanout/workers", "an integer");
    d["fanout"]["workers"] = 65;
    expect_load_error(d, "/fanout/workers", "an integer");
    d["fanout"] = json::object();
    expect_load_error(d, "/fanout/workers", "required field is missing");
    d["fanout"] = {{"workers", "4"}};
    expect_load_error(d, "/fanout/workers", "an integer");
    d["fanout"] = {{"workers", 2}, {"poll_ms", 0}};
    expect_load_error(d, "/fanout/poll_ms", "an integer");
    d["fanout"] = {{"workers", 2}, {"dispatch", "round_robin"}};
    expect_load_error(d, "/fanout/dispatch", "one of");
    d["fanout"] = {{"workers", 2}, {"threads", 2}};
    expect_load_error(d, "/fanout/threads", "unknown field");
    d["fanout"] = 4;
    expect_load_error(d, "/fanout", "an object");
    d["fanout"] = {{"workers", 2}};
    d["buffer"] = json::object();
    expect_load_error(d, "/fanout", "reorder buffer");
    d.erase("buffer");
    d["show_throughput"] = "yes";
    expect_load_error(d, "/show_throughput", "true or false");
}

// S3 on the simulator: every order's writes in stream order by one worker at a time, four orders
// side by side, and more jobs per second than S1 on the same workload.
TEST(S3SimTest, the_fanout_lab_keeps_each_orders_order_and_outpaces_s1_on_its_workload) {
    const LabResult s3 = run_sim(scenario("beyond-s3-fanout.json"), 50);
    const LabResult s1 = run_sim(scenario("beyond-s3-fanout-s1.json"), 50);
    ASSERT_TRUE(s3.held) << (s3.failures.empty() ? "" : s3.failures.front());
    ASSERT_TRUE(s1.held) << (s1.failures.empty() ? "" : s1.failures.front());
    EXPECT_EQ(s3.wrong, 0);
    const std::vector<std::string> in_order = {"created", "paid", "shipped"};
    for (const auto& t : s3.trials) {
        for (const auto& [order, types] : writes_per_order(t)) EXPECT_EQ(types, in_order) << "#" << order;
        EXPECT_EQ(t.accounting.stale_overwrites, 0);
        // Every job's write and XACK are its worker's; the reader only reads and dispatches.
        for (const auto& r : t.history) {
            if (r.op == Op::write || r.op == Op::ack || r.op == Op::take) {
                EXPECT_EQ(r.actor.rfind("C1.w", 0), 0u) << r.actor;
            }
            if (r.op == Op::receive || r.op == Op::dispatch) {
                EXPECT_EQ(r.actor, "C1");
            }
        }
    }
    ASSERT_GT(s3.throughput.trials, 0);
    ASSERT_GT(s1.throughput.trials, 0);
    EXPECT_EQ(s3.throughput.jobs, s1.throughput.jobs);
    EXPECT_GT(s3.throughput.per_s_min, s1.throughput.per_s_max);
}

// The reader killed with everything it read unacknowledged: XAUTOCLAIM gives the four entries
// back (same IDs, delivery 2) after the restarted reader applied each order's newer shipped.
TEST(S3SimTest, the_reader_crash_lab_gets_its_entries_back_by_xautoclaim_after_shipped) {
    const LabResult lab = run_sim(scenario("beyond-s3-reader-crash.json"), 50);
    ASSERT_TRUE(lab.held) << (lab.failures.empty() ? "" : lab.failures.front());
    EXPECT_EQ(lab.wrong, lab.total);
    for (const auto& t : lab.trials) {
        std::map<std::string, int> first_delivery;
        std::vector<std::string> claimed;
        for (const auto& r : t.history) {
            if (r.op != Op::receive) continue;
            const std::string entry = r.data.at("entry");
            if (r.data.at("via") == "new") first_delivery[entry] = 1;
            if (r.data.at("via") == "claim") {
                claimed.push_back(entry);
                EXPECT_EQ(r.data.at("deliveries"), 2);
                EXPECT_EQ(first_delivery.count(entry), 1u) << entry << " claimed under the ID it was first read with";
            }
        }
        EXPECT_EQ(claimed.size(), 4u);
        for (const auto& [order, types] : writes_per_order(t))
            EXPECT_EQ(types, (std::vector<std::string>{"shipped", "created", "paid"})) << "#" << order;
    }
}

TEST(S3SimTest, every_mutant_of_the_s3_labs_breaks_its_lab) {
    for (const std::string file : {"beyond-s3-fanout.json", "beyond-s3-fanout-s1.json", "beyond-s3-reader-crash.json"}) {
        const Scenario s = scenario(file);
        ASSERT_FALSE(s.mutants.empty()) << file;
        for (const auto& m : s.mutants) {
            const LabResult lab = run_sim(apply_mutant(s, m), 20);
            EXPECT_FALSE(lab.held) << file << " mutant " << m.name << " did not break it";
        }
    }
}

}  // namespace s3_fanout_test
}  // namespace relab
