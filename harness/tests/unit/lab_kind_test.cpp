// A lab's kind (scenario/lab_kind.h, LabKind and its row) is decided once, by the loader from the
// rows' marks, and every layer asks its row: the shipped scenarios load as their kind, the JSON report stores it and reads it back (an
// older report without it is inferred from what it carries), and the simulator and the roles
// pick their work by it.
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "report/reporter.h"
#include "report_fixture.h"
#include "roles/roles.h"
#include "backend_sim/sim_backend.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"
#include "sim_fixture.h"

namespace relab {
namespace lab_kind_test {

using nlohmann::json;

using test::k_scenarios;
using test::scenario_json;

std::string error_of(const json& doc) {
    try {
        parse_scenario(doc.dump(), "lab.json");
    } catch (const ScenarioError& e) {
        return e.what();
    }
    return "";
}

TEST(LabKindTest, names_read_back_as_their_kind) {
    const std::vector<std::string> names = lab_kind_names();
    EXPECT_EQ(names, (std::vector<std::string>{"stream", "sessions", "idem_clients", "idem_benchmark", "idem_cluster"}));
    for (const auto& name : names) {
        ASSERT_TRUE(lab_kind_named(name).has_value()) << name;
        EXPECT_EQ(to_string(*lab_kind_named(name)), name);
    }
    EXPECT_FALSE(lab_kind_named("workload").has_value());  // the file's word, not a kind
    EXPECT_TRUE(is_idem(LabKind::idem_benchmark));
    EXPECT_FALSE(is_idem(LabKind::sessions));
}

TEST(LabKindTest, a_file_marks_its_kind_by_its_kind_field_and_the_deepest_path_it_holds) {
    auto holding = [](std::set<std::string_view> paths) {
        return [paths](std::string_view p) { return paths.count(p) > 0; };
    };
    EXPECT_EQ(kind_marked("workload", holding({})), LabKind::stream);
    EXPECT_EQ(kind_marked("sessions", holding({"idem"})), LabKind::sessions);  // a sessions file has no idem kind
    EXPECT_EQ(kind_marked("workload", holding({"idem"})), LabKind::idem_clients);
    EXPECT_EQ(kind_marked("workload", holding({"idem", "idem/benchmark"})), LabKind::idem_benchmark);
    EXPECT_EQ(kind_marked("workload", holding({"idem", "idem/cluster"})), LabKind::idem_cluster);
    // Both marks: the cluster's row comes later and wins; the loader then refuses the benchmark.
    EXPECT_EQ(kind_marked("workload", holding({"idem", "idem/benchmark", "idem/cluster"})), LabKind::idem_cluster);
    EXPECT_FALSE(kind_marked("job", holding({})).has_value());
}

// Every kind is exactly one of the three families of data (its row's spec): a stream, scripted
// sessions, or article 002's idempotency labs; and a kind that sends requests runs roles to send them.
TEST(LabKindTest, each_row_is_one_family_of_data) {
    for (const KindRow& row : k_kind_rows) {
        EXPECT_TRUE(!row.sends_requests || (row.runs_roles && is_idem(row.value))) << row.name;
        EXPECT_TRUE(!counts_cases(row.value) || !(row.repeats || row.runs_roles)) << row.name;
        EXPECT_EQ(first_kind_where([&](const KindRow& k) { return k.name == row.name; }), row.value);
        Scenario s;
        s.set_kind(row.value);
        EXPECT_EQ(s.spec.index(), static_cast<size_t>(row.spec)) << row.name;
    }
}

// Whether the lab holds the alternative its kind's row names, each accessor answering or failing as it should.
void expect_holds_its_family(const Scenario& s) {
    const SpecType spec = kind_row(s.kind).spec;
    EXPECT_EQ(s.spec.index(), static_cast<size_t>(spec)) << s.id;
    EXPECT_EQ(s.flow_if() != nullptr, spec == SpecType::stream) << s.id;
    // Each accessor answers for its own family and fails the check for every other.
    auto answers = [&s](auto&& ask) {
        try {
            ask();
            return true;
        } catch (const std::logic_error&) {
            return false;
        }
    };
    EXPECT_EQ(answers([&] { (void)s.flow(); }), spec == SpecType::stream) << s.id;
    EXPECT_EQ(answers([&] { (void)s.sessions(); }), spec == SpecType::sessions) << s.id;
    EXPECT_EQ(answers([&] { (void)s.idem(); }), spec == SpecType::idem) << s.id;
}

// A lab holds its own family's data and no other's: every shipped lab of every kind, and a sessions
// lab asked for its stream fails relab's check, naming its kind.
TEST(LabKindTest, a_lab_holds_its_familys_data_and_no_other) {
    std::set<LabKind> seen;
    for (const auto& s : load_scenario_dir(k_scenarios)) {
        expect_holds_its_family(s);
        seen.insert(s.kind);
    }
    EXPECT_EQ(seen.size(), k_lab_kind_count);
    Scenario sessions;
    sessions.set_kind(LabKind::sessions);
    try {
        (void)sessions.flow();
        ADD_FAILURE() << "a sessions lab gave a stream";
    } catch (const std::logic_error& e) {
        EXPECT_NE(std::string(e.what()).find("a lab of kind sessions asked for another family's data"), std::string::npos)
            << e.what();
    }
    EXPECT_EQ(sessions.flow_if(), nullptr);
    // A kind changed without its data is caught, not read as the other family's.
    Scenario changed;
    changed.kind = LabKind::sessions;
    EXPECT_THROW((void)changed.sessions(), std::logic_error);
    EXPECT_THROW((void)changed.flow(), std::logic_error);
    EXPECT_THROW((void)changed.flow_if(), std::logic_error);
    // set_kind keeps the data of a kind of the same family, and empties it for another family.
    Scenario idem;
    idem.set_kind(LabKind::idem_clients);
    idem.idem().layer4 = true;
    idem.set_kind(LabKind::idem_cluster);
    EXPECT_TRUE(idem.idem().layer4);
    idem.set_kind(LabKind::stream);
    idem.set_kind(LabKind::idem_clients);
    EXPECT_FALSE(idem.idem().layer4);
}

TEST(LabKindTest, the_loader_gives_every_shipped_scenario_its_kind) {
    std::map<LabKind, int> count;
    for (const auto& s : load_scenario_dir(k_scenarios)) {
        ++count[s.kind];
        const json& doc = s.source;
        LabKind want = LabKind::stream;
        if (doc.at("kind") == "sessions")
            want = LabKind::sessions;
        else if (doc.contains("idem"))
            want = doc.at("idem").contains("cluster")     ? LabKind::idem_cluster
                   : doc.at("idem").contains("benchmark") ? LabKind::idem_benchmark
                                                          : LabKind::idem_clients;
        EXPECT_EQ(s.kind, want) << s.id;
        for (const auto& m : s.mutants) EXPECT_EQ(apply_mutant(s, m).kind, want) << s.id << " mutant " << m.name;
    }
    EXPECT_EQ(load_scenario(k_scenarios + "08a-baseline.json").kind, LabKind::stream);
    EXPECT_EQ(load_scenario(k_scenarios + "08g-c-outbox-per-key.json").kind, LabKind::stream);  // the dispatcher is an option
    EXPECT_EQ(load_scenario(k_scenarios + "idem-z-bench.json").kind, LabKind::idem_benchmark);
    EXPECT_EQ(load_scenario(k_scenarios + "idem-y2-cluster.json").kind, LabKind::idem_cluster);
    EXPECT_EQ(load_scenario(k_scenarios + "idem-f-mw-double-click.json").kind, LabKind::idem_clients);
    for (LabKind k : {LabKind::stream, LabKind::sessions, LabKind::idem_clients, LabKind::idem_benchmark,
                      LabKind::idem_cluster})
        EXPECT_GE(count[k], 1) << to_string(k);
}

TEST(LabKindTest, an_idem_section_of_one_kind_refuses_the_fields_of_another) {
    json doc = scenario_json("idem-z-bench.json");
    doc["idem"]["clients"] = scenario_json("idem-f-mw-double-click.json")["idem"]["clients"];
    EXPECT_NE(error_of(doc).find("/idem/clients: does not apply to a benchmark"), std::string::npos) << error_of(doc);

    doc = scenario_json("idem-y2-cluster.json");
    doc["idem"]["benchmark"] = scenario_json("idem-z-bench.json")["idem"]["benchmark"];
    EXPECT_NE(error_of(doc).find("/idem/benchmark: a lab is a cluster lab"), std::string::npos) << error_of(doc);
}

RunReport one_of_each_kind() {
    RunReport run = test::sample_run();  // stream labs and a sessions lab (sources are fragments)
    const RunReport idem = test::sim_and_idem_run();
    run.labs.push_back(idem.labs[2]);  // idem_clients, from a full scenario
    LabResult bench;
    bench.scenario = load_scenario(k_scenarios + "idem-z-bench.json");
    TrialOutcome t;
    t.trial = 1;
    t.history = {HistoryRecord{1, 0, "relab", Op::observe, {{"text", "relab, 1 client: SET ... → 19253 ops/s"}}},
                 HistoryRecord{1, 1, "relab", Op::figure, {{"name", "fsync_ratio"}, {"value", 12.5}, {"unit", "x"}}}};
    bench.trials = {t};
    bench.measurements.push_back({"claim ops/s", "19253", "", "", "", ""});
    summarize(bench);
    run.labs.push_back(bench);
    return run;
}

TEST(LabKindTest, the_json_report_stores_the_kind_and_reads_it_back) {
    const RunReport run = one_of_each_kind();
    const json j = run_to_json(run);
    std::vector<std::string> kinds;
    for (const auto& lab : j.at("labs")) kinds.push_back(lab.at("lab_kind"));
    EXPECT_EQ(kinds, (std::vector<std::string>{"stream", "stream", "stream", "stream", "sessions", "stream",
                                               "idem_clients", "idem_benchmark"}));
    const RunReport back = run_from_json(j);
    ASSERT_EQ(back.labs.size(), run.labs.size());
    for (size_t i = 0; i < run.labs.size(); ++i) EXPECT_EQ(back.labs[i].scenario.kind, run.labs[i].scenario.kind) << i;
    EXPECT_EQ(run_to_json(back), j);

    // The stored kind is what ran: it wins over the scenario's.
    json edited = j;
    edited["labs"][7]["lab_kind"] = "idem_cluster";
    EXPECT_EQ(run_from_json(edited).labs[7].scenario.kind, LabKind::idem_cluster);

    edited["labs"][7]["lab_kind"] = "workload";
    try {
        run_from_json(edited);
        FAIL() << "an unknown lab_kind was read";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("/labs/7/lab_kind: expected one of stream, sessions, idem_clients"),
                  std::string::npos)
            << e.what();
    }
}

TEST(LabKindTest, a_report_written_before_the_kind_was_stored_has_it_inferred) {
    json j = run_to_json(one_of_each_kind());
    for (auto& lab : j["labs"]) {
        lab.erase("lab_kind");
        lab["scenario"] = json::object();  // and a source this relab cannot read: the report's fields decide
    }
    const RunReport back = run_from_json(j);
    std::vector<LabKind> kinds;
    for (const auto& lab : back.labs) kinds.push_back(lab.scenario.kind);
    EXPECT_EQ(kinds, (std::vector<LabKind>{LabKind::stream, LabKind::stream, LabKind::stream, LabKind::stream,
                                           LabKind::sessions, LabKind::stream, LabKind::idem_clients,
                                           LabKind::idem_benchmark}));

    // With a source that still parses, the loader decides, as for a new report.
    json with_source = run_to_json(one_of_each_kind());
    for (auto& lab : with_source["labs"]) lab.erase("lab_kind");
    EXPECT_EQ(run_from_json(with_source).labs[7].scenario.kind, LabKind::idem_benchmark);
}

TEST(LabKindTest, the_simulator_runs_the_kinds_it_models_and_names_why_not_the_others) {
    EXPECT_FALSE(sim_skip_reason(load_scenario(k_scenarios + "08a-baseline.json")).has_value());
    EXPECT_FALSE(sim_skip_reason(load_scenario(k_scenarios + "idem-f-mw-double-click.json")).has_value());
    const Scenario bench = load_scenario(k_scenarios + "idem-z-bench.json");
    ASSERT_TRUE(sim_skip_reason(bench).has_value());
    EXPECT_NE(sim_skip_reason(bench)->find("redis-benchmark and pgbench"), std::string::npos);
    const Scenario cluster = load_scenario(k_scenarios + "idem-y2-cluster.json");
    ASSERT_TRUE(sim_skip_reason(cluster).has_value());
    EXPECT_NE(sim_skip_reason(cluster)->find("no cluster model"), std::string::npos);
    EXPECT_TRUE(SimBackend().run(bench).skipped);
    EXPECT_THROW(SimBackend().run_trial(bench, 1, 7), std::logic_error);
}

TEST(LabKindTest, only_stream_and_client_labs_start_roles) {
    const auto stream = trial_roles(load_scenario(k_scenarios + "08a-baseline.json"));
    ASSERT_EQ(stream.size(), 3u);
    EXPECT_EQ(stream.back().role, "producer");
    const auto clients = trial_roles(load_scenario(k_scenarios + "idem-f-mw-double-click.json"));
    ASSERT_FALSE(clients.empty());
    for (const auto& r : clients) EXPECT_EQ(r.role, "idem_client");
    EXPECT_TRUE(trial_roles(load_scenario(k_scenarios + "idem-z-bench.json")).empty());
    EXPECT_TRUE(trial_roles(load_scenario(k_scenarios + "idem-y2-cluster.json")).empty());
}

}  // namespace lab_kind_test
}  // namespace relab
