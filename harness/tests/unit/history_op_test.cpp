// The history ops' one table (ports/history_op.h): every op's name reads back as the op, the
// JSON history keeps the names, the scenario loader refuses an op or a field the table does not
// have, and the records the roles write carry only the fields the table lists for their op.
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ports/history_op.h"
#include "ports/ports.h"
#include "backend_sim/sim_backend.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"
#include "sim_fixture.h"

namespace relab {
namespace history_op_test {

using nlohmann::json;

using test::k_scenarios;
using test::scenario_json;

// The ScenarioError that parsing `doc` raises; fails the test when it parses.
ScenarioError error_of(const json& doc) {
    try {
        parse_scenario(doc.dump(), "lab.json");
    } catch (const ScenarioError& e) {
        return e;
    }
    ADD_FAILURE() << "the scenario parsed";
    return ScenarioError("", "", "");
}

TEST(HistoryOpTest, every_op_has_a_distinct_name_that_reads_back_as_the_op) {
    std::set<std::string_view> names;
    for (const auto& row : k_ops) {
        EXPECT_FALSE(row.name.empty());
        EXPECT_FALSE(row.meaning.empty()) << row.name;
        EXPECT_TRUE(names.insert(row.name).second) << "duplicate name " << row.name;
        EXPECT_EQ(&op_info(row.op), &row);
        EXPECT_EQ(to_string(row.op), row.name);
        ASSERT_TRUE(op_named(row.name).has_value()) << row.name;
        EXPECT_EQ(*op_named(row.name), row.op);
        // Through the JSON history, as files and reports store it: the name, unchanged.
        const HistoryRecord r{3, 4'000, "C1", row.op, {{"entry", "1-0"}}};
        const json j = to_json(r);
        EXPECT_EQ(j.at("op"), std::string(row.name));
        const HistoryRecord back = history_record_from_json(j);
        EXPECT_EQ(back.op, row.op);
        EXPECT_EQ(back.data, r.data);
    }
    EXPECT_EQ(op_names().size(), k_ops.size());
}

TEST(HistoryOpTest, an_unknown_name_is_no_op_and_a_history_line_with_one_is_refused) {
    EXPECT_FALSE(op_named("recieve").has_value());
    EXPECT_FALSE(op_named("").has_value());
    EXPECT_FALSE(op_named("Receive").has_value());
    try {
        history_record_from_json({{"trial", 1}, {"t_us", 0}, {"actor", "C1"}, {"op", "skew"}});
        FAIL() << "an unknown op was read";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("unknown history op \"skew\""), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("receive"), std::string::npos) << e.what();
    }
}

TEST(HistoryOpTest, fields_are_listed_per_op) {
    EXPECT_TRUE(op_fields(Op::start).empty());
    EXPECT_EQ(op_fields(Op::ack), (std::vector<std::string>{"entry", "stream", "batch", "seen_by"}));  // stream: S2's shards; seen_by: a program's
    EXPECT_TRUE(op_carries(Op::lock_release, "result"));
    EXPECT_TRUE(op_carries(Op::figure, "value"));
    EXPECT_FALSE(op_carries(Op::lock_release, "resutl"));
    EXPECT_FALSE(op_carries(Op::ack, "ent"));  // whole names only
    for (const auto& row : k_ops)
        for (const auto& f : op_fields(row.op)) EXPECT_TRUE(op_carries(row.op, f)) << row.name << " " << f;
}

TEST(HistoryOpTest, the_loader_refuses_an_unknown_op_in_every_place_that_names_one_and_lists_the_known_ops) {
    auto expect_unknown_op = [](const json& doc, const std::string& path) {
        const ScenarioError e = error_of(doc);
        EXPECT_EQ(e.file(), "lab.json");
        EXPECT_EQ(e.json_path(), path);
        EXPECT_NE(e.reason().find("expected a history op, one of \"start\", \"publish\""), std::string::npos)
            << e.reason();
        EXPECT_NE(e.reason().find("\"store\""), std::string::npos) << e.reason();
        EXPECT_NE(e.reason().find("got \"recieve\""), std::string::npos) << e.reason();
    };
    json doc = scenario_json("08a-baseline.json");
    doc["expect"]["every_trial_has"] = json::parse(R"([{"op": "write"}, {"op": "recieve"}])");
    expect_unknown_op(doc, "/expect/every_trial_has/1/op");

    doc = scenario_json("08a-baseline.json");
    doc["expect"]["never"] = json::parse(R"([{"op": "recieve", "actor": "C1"}])");
    expect_unknown_op(doc, "/expect/never/0/op");

    doc = scenario_json("08a-baseline.json");
    doc["expect"]["every_wrong_trial"]["sequence"] = json::parse(R"([{"op": "receive"}, {"op": "recieve"}])");
    expect_unknown_op(doc, "/expect/every_wrong_trial/sequence/1/op");

    doc = scenario_json("08h-claim-plain.json");
    doc["faults"][0]["after"]["op"] = "recieve";
    expect_unknown_op(doc, "/faults/0/after/op");

    doc = scenario_json("idem-r-restart-rdb.json");
    doc["faults"][0]["after"]["op"] = "recieve";
    expect_unknown_op(doc, "/faults/0/after/op");
}

TEST(HistoryOpTest, the_loader_refuses_a_field_the_op_never_carries_and_lists_the_ones_it_does) {
    auto expect_unknown_field = [](const json& doc, const std::string& path, const std::string& op_and_fields) {
        const ScenarioError e = error_of(doc);
        EXPECT_EQ(e.file(), "lab.json");
        EXPECT_EQ(e.json_path(), path);
        EXPECT_NE(e.reason().find(op_and_fields), std::string::npos) << e.reason();
    };
    json doc = scenario_json("08a-baseline.json");
    doc["expect"]["every_trial_has"] = json::parse(R"([{"op": "lock_release", "fields": {"reslt": 0}}])");
    expect_unknown_field(doc, "/expect/every_trial_has/0/fields/reslt",
                         "op \"lock_release\" never carries this field; its fields are: \"key\", \"result\"");

    doc = scenario_json("08a-baseline.json");
    doc["expect"]["never"] = json::parse(R"([{"op": "write", "bands": {"rows": {"at_least": 1}}}])");
    expect_unknown_field(doc, "/expect/never/0/bands/rows", "op \"write\" never carries this field");

    doc = scenario_json("08a-baseline.json");
    doc["expect"]["every_trial_has"] = json::parse(R"([{"op": "start", "fields": {"at": 0}}])");
    expect_unknown_field(doc, "/expect/every_trial_has/0/fields/at", "op \"start\" never carries this field; it carries none");

    doc = scenario_json("08h-claim-plain.json");
    doc["faults"][0]["after"]["fields"] = {{"evnt", {{"type", "created"}}}};
    expect_unknown_field(doc, "/faults/0/after/fields/evnt", "op \"receive\" never carries this field");

    doc = scenario_json("idem-r-restart-rdb.json");
    doc["faults"][0]["after"]["fields"] = {{"status", 201}};
    expect_unknown_field(doc, "/faults/0/after/fields/status", "op \"answer\" never carries this field");
}

TEST(HistoryOpTest, every_scenario_in_the_repository_still_loads_with_its_mutants) {
    const std::vector<Scenario> all = load_scenario_dir(k_scenarios);
    EXPECT_GE(all.size(), 49u);
    for (const auto& s : all)
        for (const auto& m : s.mutants) EXPECT_NO_THROW(apply_mutant(s, m)) << s.id << " mutant " << m.name;
}

// The table against its writers: every record of one simulated trial of each lab the simulator
// runs carries only data fields its op lists (a field missing from the table would make the
// loader refuse an expectation on it).
TEST(HistoryOpTest, the_records_the_roles_write_carry_only_the_fields_their_op_lists) {
    SimOptions o;
    o.trials = 1;
    o.self_check = false;
    SimBackend sim(o);
    int ran = 0;
    std::set<Op> seen;
    for (const auto& s : load_scenario_dir(k_scenarios)) {
        const LabResult lab = sim.run(s);
        if (lab.skipped) continue;
        ++ran;
        for (const auto& t : lab.trials)
            for (const auto& r : t.history) {
                seen.insert(r.op);
                for (const auto& [field, value] : r.data.items())
                    EXPECT_TRUE(op_carries(r.op, field))
                        << s.id << ": " << r.actor << " recorded " << to_string(r.op) << " with field " << field;
            }
    }
    EXPECT_GE(ran, 20);
    for (Op op : {Op::start, Op::publish, Op::receive, Op::write, Op::ack, Op::lock_acquire, Op::lock_release,
                  Op::send, Op::answer, Op::claim, Op::order})
        EXPECT_TRUE(seen.count(op)) << to_string(op) << " never recorded";
}

}  // namespace history_op_test
}  // namespace relab
