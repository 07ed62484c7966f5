// write_scenario: every shipped lab written back to JSON loads to the same lab, and writing that
// again gives the same JSON; the simulator runs the two alike.
#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "scenario/scenario_writer.h"
#include "sim_fixture.h"

namespace relab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Every lab file under scenarios/ (its examples, load and soak labs too), sorted.
std::vector<std::string> shipped_labs() {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(test::k_scenarios))
        if (e.is_regular_file() && e.path().extension() == ".json" && e.path().filename() != k_schema_file)
            out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

// What a stream lab's trial depends on of its own data, each part written whole.
json stream_view(const StreamLab& f) {
    return {{"stream", desc::write_complete(f.stream)},
            {"orders", desc::Codec<std::vector<OrderSpec>>::write(f.orders, desc::Write::complete)},
            {"events", desc::Codec<std::vector<EventSpec>>::write(f.events, desc::Write::complete)},
            {"job_cost_ms", f.job_cost_ms},
            {"consumers", f.consumers},
            {"write", desc::write_complete(f.write)},
            {"lock", desc::write_complete(f.lock)},
            {"buffer", desc::write_complete(f.buffer)},
            {"fanout", desc::write_complete(f.fanout)},
            {"producer", desc::write_complete(f.producer)},
            {"dispatcher", desc::write_complete(f.dispatcher)},
            {"shard", desc::write_complete(f.shard)},
            {"soak", desc::write_complete(f.soak)},
            {"recovery", desc::write_complete(f.recovery)},
            {"display", {f.stream_line, f.show_throughput}},
            {"beside", f.beside ? json{f.beside->name, f.beside->change, f.beside->patch} : json()}};
}

// What a trial depends on, each part as relab's own JSON writes it whole (derived fields too).
json trial_view(const Scenario& s) {
    json v = {{"id", s.id},
              {"part", s.part},
              {"output", s.output},
              {"group", s.group},
              {"requires", s.needs_features},
              {"only_on", {s.only_backend, s.only_backend_why}},
              {"titles", {s.title, s.title_vi}},
              {"kind", to_string(s.kind)},
              {"runs", s.runs},
              {"seed", s.seed},
              {"sim", desc::write_complete(s.sim)},
              {"faults", desc::Codec<std::vector<FaultSpec>>::write(s.faults, desc::Write::complete)},
              {"expect", s.expect.describe()},
              {"every_trial", s.expect.every_trial.describe()},
              {"every_wrong_trial", s.expect.every_wrong_trial.describe()},
              {"may_appear", s.expect.may_appear},
              {"mutants", s.mutants.size()}};
    if (const StreamLab* f = s.flow_if()) v["stream_lab"] = stream_view(*f);
    if (is_idem(s.kind)) v["idem"] = desc::write_complete(s.idem());
    return v;
}

// The parts of two labs trial_view cannot set side by side as JSON.
void expect_same_structs(const Scenario& a, const Scenario& b, const std::string& file) {
    ASSERT_EQ(a.spec.index(), b.spec.index()) << file;
    if (const StreamLab* f = a.flow_if()) {
        EXPECT_TRUE(f->load == b.flow().load) << file;
    }
    EXPECT_TRUE(a.servers == b.servers) << file;
    EXPECT_TRUE(a.exec == b.exec) << file;
    EXPECT_TRUE(a.compare == b.compare) << file;
    EXPECT_EQ(a.expect.until_wrong_max_runs, b.expect.until_wrong_max_runs) << file;
    EXPECT_TRUE(a.expect.throughput_ratio_at_least == b.expect.throughput_ratio_at_least) << file;
    EXPECT_EQ(a.expect.of_runs, b.expect.of_runs) << file;
    EXPECT_TRUE(a.documented.throughput == b.documented.throughput) << file;
    EXPECT_TRUE(a.documented.also == b.documented.also) << file;
    if (!counts_cases(a.kind)) return;
    const std::vector<SessionCase>& cases = a.sessions().cases;
    ASSERT_EQ(cases.size(), b.sessions().cases.size()) << file;
    for (size_t i = 0; i < cases.size(); ++i)
        EXPECT_EQ(b.sessions().cases[i].sessions.size(), cases[i].sessions.size()) << file;
}

TEST(ScenarioWriterTest, EveryShippedLabRoundTripsToAFixpoint) {
    const std::vector<std::string> files = shipped_labs();
    ASSERT_GE(files.size(), 100u);
    for (const std::string& file : files) {
        const Scenario s = load_scenario(file);
        const json written = write_scenario(s);
        Scenario back;
        try {
            back = parse_scenario(written.dump(), file);
        } catch (const ScenarioError& e) {
            ADD_FAILURE() << file << ": the written lab does not load: " << e.what() << "\n" << written.dump(2);
            continue;
        }
        EXPECT_EQ(write_scenario(back), written) << file;
        EXPECT_EQ(trial_view(back), trial_view(s)) << file;
        expect_same_structs(s, back, file);
    }
}

// What a run's trials came to, trial by trial.
json outcome_view(const LabResult& r) {
    json out = {{"held", r.held}, {"wrong", r.wrong}, {"total", r.total}, {"failures", r.failures}};
    for (const TrialOutcome& t : r.trials) {
        json rows = json::array();
        for (const OrderRow& row : t.final_rows) rows.push_back({row.id, row.status, row.version, row.amount});
        out["trials"].push_back({{"seed", t.seed},
                                 {"wrong", t.wrong},
                                 {"wrong_orders", t.wrong_orders},
                                 {"unmet", t.unmet},
                                 {"rows", rows},
                                 {"stream", t.stream.size()},
                                 {"history", t.history.size()},
                                 {"last", t.history.empty() ? 0 : t.history.back().t_ns}});
    }
    return out;
}

TEST(ScenarioWriterTest, TheSimulatorRunsARoundTrippedLabAsTheOriginal) {
    int ran = 0, seen = 0;
    for (const std::string& file : shipped_labs()) {
        const Scenario s = load_scenario(file);
        const StreamLab* f = s.flow_if();
        if (s.kind == LabKind::sessions || s.only_backend == "real" || (f && (f->soak.enabled || f->generate))) continue;
        if (seen++ % 4 != 0) continue;  // a sample: every fourth lab the simulator runs
        const Scenario back = parse_scenario(write_scenario(s).dump(), file);
        EXPECT_EQ(outcome_view(test::run_sim(back, 3)), outcome_view(test::run_sim(s, 3))) << file;
        ++ran;
    }
    EXPECT_GE(ran, 10);
}

TEST(ScenarioWriterTest, AChangedFieldSurvivesTheRoundTrip) {
    Scenario s = test::scenario("08a-baseline.json");
    s.flow().consumers = 3;
    s.flow().stream.quiet_ms = 4321;
    FaultSpec f;
    f.action = FaultAction::kill;
    f.target = Target::role("C1");
    f.trigger.at_ms = 250;
    s.faults.push_back(f);
    s.expect.every_trial.bands["lost"] = Band{0, 0};
    s.source = nullptr;  // the writer works from the struct alone
    const json written = write_scenario(s);
    EXPECT_EQ(written.at("consumers"), 3);
    const Scenario back = parse_scenario(written.dump(), "changed.json");
    EXPECT_EQ(back.flow().consumers, 3);
    EXPECT_EQ(back.flow().stream.quiet_ms, 4321);
    ASSERT_EQ(back.faults.size(), 1u);
    EXPECT_EQ(back.faults[0].trigger.at_ms, 250);
    EXPECT_EQ(back.faults[0].target, f.target);
    EXPECT_EQ(back.faults[0].action, FaultAction::kill);
    EXPECT_EQ(back.expect.every_trial.band("lost")->at_most, 0);
    s.faults[0].trigger.at_ms = 900;
    EXPECT_EQ(parse_scenario(write_scenario(s).dump(), "moved.json").faults.at(0).trigger.at_ms, 900);
}

}  // namespace
}  // namespace relab
