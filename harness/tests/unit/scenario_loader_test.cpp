#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "process/temp_dir.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"

namespace relab {
namespace scenario_loader_test {

using nlohmann::json;

const std::string k_scenarios = std::string(RELAB_SOURCE_DIR) + "/scenarios";

json workload_doc() {
    return json::parse(R"({
        "id": "t-1", "title": "T", "kind": "workload",
        "orders": [ { "id": 42 } ],
        "events": [ { "order": 42, "type": "created", "version": 1 },
                    { "order": 42, "type": "paid", "version": 2 } ],
        "expect": { "wrong": "none" }
    })");
}

json sessions_doc() {
    return json::parse(R"({
        "id": "s-1", "title": "S", "kind": "sessions",
        "cases": [ {
            "title": "case one",
            "sessions": [
                { "name": "A", "steps": [ { "sql": "BEGIN", "expect": "BEGIN" } ] },
                { "name": "B", "steps": [ { "sql": "SELECT 1" } ] }
            ]
        } ],
        "expect": { "wrong": "none" }
    })");
}

Scenario parse(const json& doc) { return parse_scenario(doc.dump(), "f.json"); }

// The error parse_scenario raises for `text`; fails the test when there is none.
std::optional<ScenarioError> error_of_text(const std::string& text) {
    try {
        parse_scenario(text, "f.json");
    } catch (const ScenarioError& e) {
        return e;
    }
    ADD_FAILURE() << "accepted: " << text;
    return std::nullopt;
}

std::optional<ScenarioError> error_of(const json& doc) { return error_of_text(doc.dump()); }

// Asserts the error's JSON path exactly and that its reason contains `reason_part`.
void expect_error(const json& doc, const std::string& path, const std::string& reason_part) {
    auto e = error_of(doc);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->file(), "f.json");
    EXPECT_EQ(e->json_path(), path) << e->what();
    EXPECT_NE(e->reason().find(reason_part), std::string::npos) << e->what();
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path);
    out << text;
}

// "consumers" as a program (docs/your-code.md): its fields read, the mistakes refused by path.
TEST(ScenarioLoaderTest, ConsumersAsAProgram) {
    json doc = workload_doc();
    doc["consumers"] = {{"count", 3}, {"exec", {"php", "w.php"}}, {"env", {{"WRITE", "cas"}}}, {"trace", false}};
    const Scenario s = parse(doc);
    EXPECT_EQ(s.flow().consumers, 3);
    ASSERT_NE(s.exec.of("consumer"), nullptr);
    EXPECT_EQ(s.exec.of("consumer")->argv, (std::vector<std::string>{"php", "w.php"}));
    EXPECT_EQ(s.exec.of("consumer")->env.at("WRITE"), "cas");
    EXPECT_FALSE(s.exec.of("consumer")->trace);
    EXPECT_EQ(s.exec.of("producer"), nullptr);
    EXPECT_FALSE(parse(workload_doc()).exec.any());
    doc["consumers"]["env"] = {{"RELAB_STREAM", "x"}};
    expect_error(doc, "/consumers/env/RELAB_STREAM", "relab's own");
    doc["consumers"] = {{"count", 2}};
    expect_error(doc, "/consumers/exec", "required field is missing");
    doc["consumers"] = {{"count", 2}, {"exec", json::array()}};
    expect_error(doc, "/consumers/exec", "");
    doc["consumers"] = {{"count", 1}, {"exec", {"php", "w.php"}}};
    doc["buffer"] = json::object();
    expect_error(doc, "/buffer", "a program");
    doc.erase("buffer");
    doc["write"] = {{"mode", "cas"}, {"isolation", "repeatable_read"}};
    expect_error(doc, "/write/isolation", "runs its own transactions");
    doc.erase("write");
    doc["producer"] = {{"env", {{"A", "1"}}}};
    expect_error(doc, "/producer/env", "add \"exec\"");
}

TEST(ScenarioLoaderTest, MinimalWorkloadGetsDocumentedDefaults) {
    const json doc = workload_doc();
    Scenario s = parse(doc);
    EXPECT_EQ(s.file, "f.json");
    EXPECT_EQ(s.id, "t-1");
    EXPECT_EQ(s.part, "t-1");
    EXPECT_EQ(s.output, "t-1");
    EXPECT_EQ(s.title_vi, "T");
    EXPECT_EQ(s.kind, LabKind::stream);
    EXPECT_EQ(s.runs, 10);
    EXPECT_EQ(s.seed, 1u);
    EXPECT_EQ(s.flow().consumers, 2);
    EXPECT_EQ(s.flow().stream.key, "orders");
    EXPECT_EQ(s.flow().stream.group, "order-processor");
    EXPECT_EQ(s.flow().stream.read_count, 1);
    EXPECT_EQ(s.flow().stream.block_ms, 2000);
    EXPECT_FALSE(s.flow().lock.enabled);
    EXPECT_EQ(s.flow().write.mode, WriteMode::plain);
    EXPECT_EQ(s.flow().write.version_source, VersionSource::event);
    ASSERT_EQ(s.flow().orders.size(), 1u);
    EXPECT_EQ(s.flow().orders[0].initial_status, "new");
    EXPECT_EQ(s.flow().orders[0].expected_final.status, "paid");
    ASSERT_EQ(s.flow().events.size(), 2u);
    EXPECT_EQ(s.flow().events[1].type, "paid");
    EXPECT_EQ(s.flow().events[1].version, 2);
    EXPECT_EQ(s.flow().events[1].at_ms, 0);
    EXPECT_TRUE(s.flow().job_cost_ms.empty());
    EXPECT_EQ(s.expect.wrong, Expectation::Count::none);
    EXPECT_TRUE(s.expect.every_trial.has.empty());
    EXPECT_FALSE(s.documented.wrong.has_value());
    EXPECT_EQ(s.source, doc);
}

// P3's reorder buffer: read with its defaults, and refused where it cannot mean what it says.
TEST(ScenarioLoaderTest, a_reorder_buffer_is_one_consumers_and_names_its_late_policy) {
    json doc = workload_doc();
    doc["consumers"] = 1;
    doc["buffer"] = json::object();
    const Scenario s = parse(doc);
    EXPECT_TRUE(s.flow().buffer.enabled);
    EXPECT_EQ(s.flow().buffer.gap_timeout_ms, 0);
    EXPECT_EQ(s.flow().buffer.late, BufferSpec::Late::drop);
    doc["buffer"] = {{"gap_timeout_ms", 400}, {"late", "apply"}};
    EXPECT_EQ(parse(doc).flow().buffer, (BufferSpec{true, 400, BufferSpec::Late::apply}));
    doc["buffer"]["late"] = "keep";
    expect_error(doc, "/buffer/late", "drop");
    doc["buffer"] = {{"gap_timeout_ms", -1}};
    expect_error(doc, "/buffer/gap_timeout_ms", "");
    doc["buffer"] = json::object();
    doc["consumers"] = 2;
    expect_error(doc, "/buffer", "\"consumers\": 1");
    EXPECT_FALSE(parse(workload_doc()).flow().buffer.enabled);
}

// "requires" names Redis features a lab needs; anything else is refused with the known ones.
TEST(ScenarioLoaderTest, requires_names_known_redis_features_only) {
    json doc = workload_doc();
    doc["requires"] = {"DELEX", "XADD IDMP"};
    EXPECT_EQ(parse(doc).needs_features, (std::vector<std::string>{"DELEX", "XADD IDMP"}));
    doc["requires"] = {"DELEX", "HSETEX"};
    expect_error(doc, "/requires/1", "\"XADD IDMP\"");
    doc["requires"] = "DELEX";
    expect_error(doc, "/requires", "");
    EXPECT_TRUE(parse(workload_doc()).needs_features.empty());
}

// The inbox dedupe wraps a plain or CAS UPDATE in its transaction; an upsert's INSERT would
// abort it on a conflict, so the two are refused together.
TEST(ScenarioLoaderTest, the_inbox_dedupe_is_refused_with_the_row_creating_write_modes) {
    json doc = workload_doc();
    doc["write"] = {{"mode", "cas"}, {"dedupe", "aggregate_version"}};
    EXPECT_EQ(parse(doc).flow().write.dedupe, WriteDedupe::aggregate_version);
    for (const char* mode : {"upsert", "insert_then_update"}) {
        doc["write"]["mode"] = mode;
        expect_error(doc, "/write/dedupe", "plain or CAS");
    }
}

// write.isolation: a level by its name, its retries only beside it, and nothing that runs a
// transaction of its own or a statement after the COMMIT.
TEST(ScenarioLoaderTest, the_write_isolation_takes_a_level_and_refuses_what_its_transaction_cannot_hold) {
    json doc = workload_doc();
    EXPECT_EQ(parse(doc).flow().write.isolation, WriteIsolation::none);
    EXPECT_EQ(parse(doc).flow().write.serialization_retries, 3);
    doc["write"] = {{"mode", "cas"}, {"isolation", "serializable"}, {"serialization_retries", 5}};
    EXPECT_EQ(parse(doc).flow().write.isolation, WriteIsolation::serializable);
    EXPECT_EQ(parse(doc).flow().write.serialization_retries, 5);
    doc["write"]["isolation"] = "REPEATABLE READ";
    expect_error(doc, "/write/isolation", "\"repeatable_read\"");
    doc["write"]["isolation"] = "repeatable_read";
    doc["write"]["serialization_retries"] = -1;
    expect_error(doc, "/write/serialization_retries", "");
    json without = workload_doc();
    without["write"] = {{"mode", "cas"}, {"serialization_retries", 2}};
    expect_error(without, "/write/serialization_retries", "it needs \"isolation\"");
    json upsert = workload_doc();
    upsert["write"] = {{"mode", "upsert"}, {"isolation", "repeatable_read"}};
    expect_error(upsert, "/write/isolation", "got mode \"upsert\"");
    for (const auto& [key, value] : {std::pair<const char*, json>{"dedupe", "aggregate_version"},
                                     {"commit", "batch"}, {"side_effect", true}}) {
        json other = workload_doc();
        other["write"] = {{"mode", "cas"}, {"isolation", "repeatable_read"}, {key, value}};
        expect_error(other, "/write/isolation", "leave \"isolation\" out");
    }
}

// "may_appear" names accounting anomalies with a reason each; it is no band, so the expectation's text
// lists it apart, and a class the expectation bounds already, a class that is no anomaly, or a missing
// reason is refused at its key.
TEST(ScenarioLoaderTest, may_appear_names_anomalies_with_a_reason_and_refuses_what_a_band_already_judges) {
    json doc = workload_doc();
    doc["expect"]["lost"] = 0;
    doc["expect"]["may_appear"] = {{"redelivered", "in flight when the replica stopped"}, {"duplicated", "the same"}};
    const Scenario s = parse(doc);
    EXPECT_EQ(s.expect.may_appear.at("redelivered"), "in flight when the replica stopped");
    EXPECT_EQ(s.expect.describe(),
              "wrong = none; every trial: lost = 0; may appear in any number: duplicated, redelivered");
    doc["expect"]["may_appear"] = {{"lost", "why"}};
    expect_error(doc, "/expect/may_appear/lost", "already bounds it");
    doc["expect"]["may_appear"] = {{"processed_once", "why"}};
    expect_error(doc, "/expect/may_appear/processed_once", "not an accounting anomaly; name one of duplicated, lost");
    doc["expect"]["may_appear"] = {{"pending", ""}};
    expect_error(doc, "/expect/may_appear/pending", "the reason");
    doc["expect"]["may_appear"] = json::object();
    expect_error(doc, "/expect/may_appear", "an object naming accounting classes");
}

TEST(ScenarioLoaderTest, LoadsBaselineExample) {
    Scenario s = load_scenario(k_scenarios + "/08a-baseline.json");
    EXPECT_EQ(s.file, k_scenarios + "/08a-baseline.json");
    EXPECT_EQ(s.id, "08a-baseline");
    EXPECT_EQ(s.part, "baseline");
    EXPECT_EQ(s.output, "08a-baseline");
    EXPECT_EQ(s.kind, LabKind::stream);
    EXPECT_EQ(s.runs, 10);
    EXPECT_EQ(s.seed, 8001u);
    EXPECT_EQ(s.flow().stream.read_count, 1);
    EXPECT_EQ(s.flow().stream.block_ms, 2000);
    ASSERT_EQ(s.flow().orders.size(), 1u);
    EXPECT_EQ(s.flow().orders[0].id, 42);
    EXPECT_EQ(s.flow().orders[0].expected_final.status, "paid");
    ASSERT_EQ(s.flow().events.size(), 2u);
    EXPECT_EQ(s.flow().events[0].type, "created");
    EXPECT_EQ(s.flow().events[0].version, 1);
    EXPECT_EQ(s.flow().events[1].type, "paid");
    EXPECT_EQ(s.flow().events[1].version, 2);
    EXPECT_EQ(s.flow().job_cost_ms, (std::map<std::string, int64_t>{{"created", 800}, {"paid", 50}}));
    EXPECT_EQ(s.flow().consumers, 2);
    EXPECT_EQ(s.flow().write.mode, WriteMode::plain);
    EXPECT_FALSE(s.flow().lock.enabled);
    EXPECT_EQ(s.expect.wrong, Expectation::Count::all);
    EXPECT_EQ(s.documented.wrong, 10);
    EXPECT_EQ(s.documented.of, 10);
    // The article's words, verbatim, with where they stand; relab's summary is apart from them.
    EXPECT_EQ(s.documented.article, Article::ordering);
    EXPECT_EQ(s.documented.section, "§2");
    EXPECT_EQ(s.documented.quote_vi.rfind("10/10 lần đơn #42 kết thúc ở created.", 0), 0u);
    EXPECT_EQ(s.documented.text_vi.rfind("sai 10/10", 0), 0u);
    EXPECT_EQ(s.title_vi.rfind("BUG: 1 stream, 1 group, 2 consumer song song", 0), 0u);
    EXPECT_EQ(s.source.at("seed"), 8001);
}

TEST(ScenarioLoaderTest, LoadsLockExample) {
    Scenario s = load_scenario(k_scenarios + "/08c-s4a-lock.json");
    EXPECT_EQ(s.id, "08c-s4a");
    EXPECT_EQ(s.part, "lock");
    EXPECT_EQ(s.output, "08c-lock");
    EXPECT_EQ(s.runs, 60);
    EXPECT_EQ(s.seed, 8031u);
    EXPECT_EQ(s.flow().orders[0].initial_status, "new");
    EXPECT_EQ(s.flow().events[1].at_ms, 0);
    EXPECT_TRUE(s.flow().lock.enabled);
    EXPECT_EQ(s.flow().lock.key, "lock:order:{order}");
    EXPECT_EQ(s.flow().lock.ttl_ms, 5000);
    EXPECT_EQ(s.flow().lock.retry_ms, 20);
    EXPECT_EQ(s.flow().lock.skew_ms.min, 0);
    EXPECT_EQ(s.flow().lock.skew_ms.max, 0);
    // A band that tells "a lock that does not order" from "no lock" (which wrongs every trial),
    // and the sequential rule: more trials until one went wrong.
    EXPECT_EQ(s.expect.wrong, Expectation::Count::between);
    EXPECT_EQ(s.expect.n, 1);
    EXPECT_EQ(s.expect.n_max, 54);
    EXPECT_EQ(s.expect.until_wrong_max_runs, 600);
    ASSERT_EQ(s.expect.every_wrong_trial.sequence.size(), 2u);
    EXPECT_EQ(s.expect.every_wrong_trial.sequence[0].match.fields, json({{"event", {{"type", "paid"}}}}));
    ASSERT_EQ(s.expect.every_wrong_trial.stale_overwrites.size(), 1u);
    EXPECT_EQ(s.expect.every_wrong_trial.stale_overwrites[0].describe(), "created overwrote paid (#42)");
    ASSERT_EQ(s.mutants.size(), 1u);
    EXPECT_EQ(s.mutants[0].name, "no-lock");
    EXPECT_FALSE(apply_mutant(s, s.mutants[0]).flow().lock.enabled);
    // The article's three runs (4/20, 8/20, 3/20) are to be read as "not zero", not as a rate:
    // no documented count stands beside the measured one.
    EXPECT_FALSE(s.documented.wrong.has_value());
    EXPECT_FALSE(s.documented.of.has_value());
    EXPECT_NE(s.documented.text_vi.find("khác 0"), std::string::npos);
    EXPECT_NE(s.documented.quote_vi.find("(S4a: 4/20, 8/20, 3/20; S4b: 10/20, 11/20, 11/20 — file output giữ lần chạy cuối)"),
              std::string::npos);
    EXPECT_NE(s.documented.quote_vi.find("Chỉ nên đọc là \"khác 0\""), std::string::npos);
    EXPECT_FALSE(s.documented.relab_choice.empty());
}

TEST(ScenarioLoaderTest, LoadsSessionsExample) {
    Scenario s = load_scenario(k_scenarios + "/08d-c-cas-overlap.json");
    EXPECT_EQ(s.id, "08d-cas-overlap");
    EXPECT_EQ(s.kind, LabKind::sessions);
    EXPECT_EQ(s.part, "cas");
    EXPECT_EQ(s.output, "08d-cas");
    ASSERT_GE(s.sessions().cases.size(), 3u);
    const SessionCase& c = s.sessions().cases[0];
    EXPECT_EQ(c.setup_sql.size(), 3u);
    EXPECT_EQ(c.setup_sql[1], "DELETE FROM tmp_orders");
    ASSERT_EQ(c.sessions.size(), 2u);
    EXPECT_EQ(c.sessions[0].name, "A");
    ASSERT_EQ(c.sessions[0].steps.size(), 3u);
    EXPECT_EQ(c.sessions[0].steps[0].at_ms, 0);
    EXPECT_EQ(c.sessions[0].steps[0].expect, "BEGIN");
    EXPECT_EQ(c.sessions[0].steps[1].at_ms, -1);
    EXPECT_EQ(c.sessions[0].steps[1].expect, "UPDATE 1");
    EXPECT_EQ(c.sessions[0].steps[2].at_ms, 1000);
    const SessionStep& b = c.sessions[1].steps.at(0);
    EXPECT_EQ(b.at_ms, 300);
    EXPECT_EQ(b.expect, "UPDATE 0");
    EXPECT_FALSE(b.expect_sqlstate.has_value());
    EXPECT_EQ(b.expect_wait_min_ms, 500);
    EXPECT_TRUE(b.expect_wait_max_ms.has_value());
    EXPECT_EQ(c.expect_rows, (std::vector<std::vector<std::string>>{{"42", "paid", "2"}}));
    EXPECT_TRUE(c.transcript_sessions.empty());
    // The third case's B fails with a serialization failure and carries no command tag.
    const SessionStep& rr = s.sessions().cases[2].sessions.at(1).steps.at(1);
    EXPECT_EQ(rr.expect_sqlstate, "40001");
    EXPECT_FALSE(rr.expect.has_value());
    EXPECT_EQ(s.sessions().cases[1].final_sql, "SELECT id, status, version FROM tmp_orders ORDER BY id");  // default
    EXPECT_EQ(s.expect.wrong, Expectation::Count::none);
    EXPECT_FALSE(s.documented.wrong.has_value());
    EXPECT_FALSE(s.documented.text.empty());
}

TEST(ScenarioLoaderTest, RepoScenarioDirLoadsSortedByFileName) {
    std::vector<Scenario> all = load_scenario_dir(k_scenarios);
    ASSERT_GE(all.size(), 3u);
    for (size_t i = 1; i < all.size(); ++i) EXPECT_LT(all[i - 1].file, all[i].file);
    std::vector<std::string> ids;
    for (const auto& s : all) ids.push_back(s.id);
    for (const char* id : {"08a-baseline", "08c-s4a", "08d-cas-overlap"})
        EXPECT_NE(std::find(ids.begin(), ids.end(), id), ids.end()) << id;
}

TEST(ScenarioLoaderTest, DirectoryLoadIgnoresOtherFilesAndSortsByName) {
    TempDir dir("relab-loader-test-");
    json second = workload_doc();
    second["id"] = "second";
    json first = workload_doc();
    first["id"] = "first";
    write_file(dir.path() + "/b.json", second.dump());
    write_file(dir.path() + "/a.json", first.dump());
    write_file(dir.path() + "/notes.txt", "not a scenario");
    std::vector<Scenario> all = load_scenario_dir(dir.path());
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[0].id, "first");
    EXPECT_EQ(all[1].id, "second");
}

TEST(ScenarioLoaderTest, DuplicateIdsInDirectoryNameBothFiles) {
    TempDir dir("relab-loader-test-");
    write_file(dir.path() + "/a.json", workload_doc().dump());
    write_file(dir.path() + "/b.json", workload_doc().dump());
    try {
        load_scenario_dir(dir.path());
        FAIL() << "duplicate ids accepted";
    } catch (const ScenarioError& e) {
        EXPECT_EQ(e.file(), dir.path() + "/b.json");
        EXPECT_EQ(e.json_path(), "/id");
        EXPECT_NE(e.reason().find(dir.path() + "/a.json"), std::string::npos) << e.what();
        EXPECT_NE(e.reason().find("t-1"), std::string::npos) << e.what();
    }
}

TEST(ScenarioLoaderTest, BadFileInDirectoryIsReported) {
    TempDir dir("relab-loader-test-");
    json bad = workload_doc();
    bad["runs"] = 0;
    write_file(dir.path() + "/bad.json", bad.dump());
    try {
        load_scenario_dir(dir.path());
        FAIL() << "bad scenario accepted";
    } catch (const ScenarioError& e) {
        EXPECT_EQ(e.file(), dir.path() + "/bad.json");
        EXPECT_EQ(e.json_path(), "/runs");
    }
}

TEST(ScenarioLoaderTest, MissingFileAndDirectoryAreErrors) {
    EXPECT_THROW(load_scenario("/nonexistent/relab/x.json"), ScenarioError);
    EXPECT_THROW(load_scenario_dir("/nonexistent/relab"), ScenarioError);
}

TEST(ScenarioLoaderTest, CommentsAreAccepted) {
    const std::string text = R"(// line comment
    {
      /* block
         comment */
      "id": "c-1", "title": "C", "kind": "workload", // trailing
      "orders": [ { "id": 7 } ],
      "events": [ { "order": 7, "type": "paid", "version": 1 } ],
      "expect": { "wrong": "none" }
    })";
    Scenario s = parse_scenario(text, "c.json");
    EXPECT_EQ(s.id, "c-1");
    EXPECT_EQ(s.flow().orders[0].id, 7);
}

TEST(ScenarioLoaderTest, SyntaxErrorNamesLineAndColumn) {
    auto e = error_of_text("{\n  \"id\": \"x\",\n  \"title\": oops\n}");
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->json_path(), "line 3, column 12");
    EXPECT_NE(e->reason().find("syntax error"), std::string::npos) << e->what();
    EXPECT_EQ(std::string(e->what()).rfind("f.json: at line 3, column 12: syntax error", 0), 0u) << e->what();
}

TEST(ScenarioLoaderTest, SyntaxErrorAtEndOfInput) {
    auto e = error_of_text("{\n\"id\": 1,\n");
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->json_path(), "line 3, column 1");
    EXPECT_NE(e->reason().find("end of input"), std::string::npos) << e->what();
}

TEST(ScenarioLoaderTest, WhatReadsFileAtPathReason) {
    json doc = workload_doc();
    doc["events"][1]["version"] = "two";
    auto e = error_of(doc);
    ASSERT_TRUE(e.has_value());
    EXPECT_STREQ(e->what(), "f.json: at /events/1/version: expected a non-negative integer, got \"two\"");
    EXPECT_EQ(e->reason(), "expected a non-negative integer, got \"two\"");
}

TEST(ScenarioLoaderTest, TopLevelMustBeAnObject) {
    auto e = error_of_text("[1, 2]");
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->json_path(), "");
    EXPECT_STREQ(e->what(), "f.json: expected a JSON object at the top level, got [1,2]");
}

TEST(ScenarioLoaderTest, UnknownFieldsAreRejectedWithTheirPath) {
    json doc = workload_doc();
    doc["lokc"] = json::object();
    expect_error(doc, "/lokc", "unknown field; known fields are: id, part");
    expect_error(doc, "/lokc", "lock");

    doc = workload_doc();
    doc["events"][1]["verison"] = 3;
    expect_error(doc, "/events/1/verison", "unknown field; known fields are: order, type, version, at_ms");

    doc = workload_doc();
    doc["expect"]["wrnog"] = "all";
    expect_error(doc, "/expect/wrnog", "unknown field");

    doc = workload_doc();
    doc["a/b~c"] = 1;  // JSON Pointer escaping
    expect_error(doc, "/a~1b~0c", "unknown field");
}

// "$schema" points an editor at scenarios/schema.json: accepted at the top level only, as a
// string, and left out of the known fields an unknown one lists (those messages stay as they were).
TEST(ScenarioLoaderTest, TopLevelSchemaKeyIsAcceptedAndIgnored) {
    json doc = workload_doc();
    doc["$schema"] = "./schema.json";
    const Scenario s = parse(doc);
    EXPECT_EQ(s.id, "t-1");
    EXPECT_EQ(s.source.at("$schema"), "./schema.json");  // the report embeds the file as it was

    json sessions = sessions_doc();
    sessions["$schema"] = "../schema.json";
    EXPECT_EQ(parse(sessions).kind, LabKind::sessions);

    doc["$schema"] = 1;
    expect_error(doc, "/$schema", "expected a non-empty string, got 1");

    doc = workload_doc();
    doc["$schema"] = "./schema.json";
    doc["lokc"] = json::object();
    auto e = error_of(doc);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->json_path(), "/lokc");
    EXPECT_EQ(e->reason().find("$schema"), std::string::npos) << e->what();

    doc = workload_doc();
    doc["write"] = {{"$schema", "x"}};  // only the top level takes it
    expect_error(doc, "/write/$schema", "unknown field");
}

TEST(ScenarioLoaderTest, DirectoryLoadLeavesOutTheSchema) {
    TempDir dir("relab-loader-test-");
    write_file(dir.path() + "/a.json", workload_doc().dump());
    write_file(dir.path() + "/schema.json", R"({"$schema": "https://json-schema.org/draft/2020-12/schema"})");
    std::vector<Scenario> all = load_scenario_dir(dir.path());
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all[0].id, "t-1");
}

TEST(ScenarioLoaderTest, RequiredFieldsAreNamed) {
    for (const char* key : {"id", "title", "kind", "expect", "orders", "events"}) {
        json doc = workload_doc();
        doc.erase(key);
        expect_error(doc, std::string("/") + key, "required field is missing");
    }
    json doc = workload_doc();
    doc["events"][0].erase("type");
    expect_error(doc, "/events/0/type", "required field is missing");
    doc = workload_doc();
    doc["expect"].erase("wrong");
    expect_error(doc, "/expect/wrong", "required field is missing");
}

TEST(ScenarioLoaderTest, IdAndNamesMustBeSlugs) {
    json doc = workload_doc();
    doc["id"] = "Bad_ID";
    expect_error(doc, "/id", "got \"Bad_ID\"");
    doc = workload_doc();
    doc["id"] = "-x";
    expect_error(doc, "/id", "[a-z0-9][a-z0-9-]*");
    doc = workload_doc();
    doc["output"] = "out/../x";
    expect_error(doc, "/output", "expected lower-case");
    doc = workload_doc();
    doc["title"] = "";
    expect_error(doc, "/title", "expected a non-empty string, got \"\"");
}

TEST(ScenarioLoaderTest, ScalarRangesAreChecked) {
    json doc = workload_doc();
    doc["kind"] = "batch";
    expect_error(doc, "/kind", "expected \"workload\" or \"sessions\", got \"batch\"");
    doc = workload_doc();
    doc["runs"] = 0;
    expect_error(doc, "/runs", "expected an integer in 1..100000, got 0");
    doc["runs"] = 100001;
    expect_error(doc, "/runs", "got 100001");
    doc["runs"] = 2.5;
    expect_error(doc, "/runs", "got 2.5");
    doc = workload_doc();
    doc["seed"] = -1;
    expect_error(doc, "/seed", "expected a non-negative integer, got -1");
    doc = workload_doc();
    doc["consumers"] = 65;
    expect_error(doc, "/consumers", "expected an integer in 1..64, got 65");
    doc = workload_doc();
    doc["stream"] = {{"read_count", 0}};
    expect_error(doc, "/stream/read_count", "expected a positive integer, got 0");
    doc["stream"] = {{"read_count", 3000000000LL}};
    expect_error(doc, "/stream/read_count", "expected a positive integer no larger than 2147483647, got 3000000000");
    doc["stream"] = {{"block_ms", 0}};
    expect_error(doc, "/stream/block_ms", "expected a positive integer, got 0");
    doc = workload_doc();
    doc["events"][0]["at_ms"] = -5;
    expect_error(doc, "/events/0/at_ms", "expected a non-negative integer, got -5");
    doc = workload_doc();
    doc["orders"][0]["initial_version"] = "0";
    expect_error(doc, "/orders/0/initial_version", "got \"0\"");
}

TEST(ScenarioLoaderTest, LargeSeedIsKept) {
    json doc = workload_doc();
    doc["seed"] = std::numeric_limits<uint64_t>::max();
    EXPECT_EQ(parse(doc).seed, std::numeric_limits<uint64_t>::max());
}

TEST(ScenarioLoaderTest, OrdersAndEventsAreCrossChecked) {
    json doc = workload_doc();
    doc["events"][1]["order"] = 43;
    expect_error(doc, "/events/1/order", "expected one of the orders' ids (42), got 43");
    doc = workload_doc();
    doc["orders"].push_back({{"id", 42}});
    expect_error(doc, "/orders/1/id", "duplicate order id 42 (first at /orders/0/id)");
    doc = workload_doc();
    doc["orders"] = json::array();
    expect_error(doc, "/orders", "expected a non-empty array, got []");
    doc = workload_doc();
    doc["events"] = json::array();
    expect_error(doc, "/events", "expected a non-empty array");
    doc = workload_doc();
    doc["events"][0]["type"] = "";
    expect_error(doc, "/events/0/type", "expected a non-empty string");
}

TEST(ScenarioLoaderTest, JobCostKeysMustBeEventTypes) {
    json doc = workload_doc();
    doc["job_cost_ms"] = {{"craeted", 800}};
    expect_error(doc, "/job_cost_ms/craeted", "no event has this type; event types are: \"created\", \"paid\"");
    doc["job_cost_ms"] = {{"paid", -1}};
    expect_error(doc, "/job_cost_ms/paid", "expected a non-negative integer, got -1");
    doc["job_cost_ms"] = {{"created", 800}, {"paid", 50}};
    EXPECT_EQ(parse(doc).flow().job_cost_ms.at("created"), 800);
}

TEST(ScenarioLoaderTest, WriteModeAndVersionSource) {
    json doc = workload_doc();
    doc["write"] = {{"mode", "merge"}};
    std::vector<std::string> quoted;  // every mode of the table, in its order
    for (const auto& name : write_mode_names()) quoted.push_back("\"" + name + "\"");
    expect_error(doc, "/write/mode", fmt::format("expected one of {}, got \"merge\"", fmt::join(quoted, ", ")));
    doc["write"] = {{"version_source", "entry_id"}};
    expect_error(doc, "/write/version_source", "requires \"mode\": \"cas\"");
    doc["write"] = {{"mode", "plain"}, {"version_source", "entry_id"}};
    expect_error(doc, "/write/version_source", "got mode \"plain\"");
    doc["write"] = {{"mode", "cas"}, {"version_source", "entry_id"}};
    Scenario s = parse(doc);
    EXPECT_EQ(s.flow().write.mode, WriteMode::cas);
    EXPECT_EQ(s.flow().write.version_source, VersionSource::entry_id);
}

TEST(ScenarioLoaderTest, LockObjectNullAndSkew) {
    json doc = workload_doc();
    doc["lock"] = nullptr;
    EXPECT_FALSE(parse(doc).flow().lock.enabled);
    doc["lock"] = json::object();
    Scenario s = parse(doc);
    EXPECT_TRUE(s.flow().lock.enabled);
    EXPECT_EQ(s.flow().lock.ttl_ms, 5000);
    EXPECT_EQ(s.flow().lock.retry_ms, 20);
    doc["lock"] = {{"skew_ms", {10, 30}}, {"ttl_ms", 100}};
    s = parse(doc);
    EXPECT_EQ(s.flow().lock.skew_ms.min, 10);
    EXPECT_EQ(s.flow().lock.skew_ms.max, 30);
    EXPECT_EQ(s.flow().lock.ttl_ms, 100);

    doc["lock"] = {{"skew_ms", {30, 10}}};
    expect_error(doc, "/lock/skew_ms", "expected [min, max] with min <= max, got [30,10]");
    doc["lock"] = {{"skew_ms", {5}}};
    expect_error(doc, "/lock/skew_ms", "expected [min, max] in milliseconds, got [5]");
    doc["lock"] = {{"skew_ms", {-1, 5}}};
    expect_error(doc, "/lock/skew_ms/0", "expected a non-negative integer, got -1");
    doc["lock"] = {{"ttl_ms", 0}};
    expect_error(doc, "/lock/ttl_ms", "expected a positive integer, got 0");
    doc["lock"] = {{"retry_ms", 0}};
    expect_error(doc, "/lock/retry_ms", "expected a positive integer");
    doc["lock"] = true;
    expect_error(doc, "/lock", "expected an object, got true");
}

TEST(ScenarioLoaderTest, ExpectCounts) {
    json doc = workload_doc();
    doc["expect"]["wrong"] = {{"at_most", 2}};
    Scenario s = parse(doc);
    EXPECT_EQ(s.expect.wrong, Expectation::Count::at_most);
    EXPECT_EQ(s.expect.n, 2);
    doc["expect"]["wrong"] = {{"exactly", 3}};
    EXPECT_EQ(parse(doc).expect.wrong, Expectation::Count::exactly);

    doc["expect"]["wrong"] = "some";
    expect_error(doc, "/expect/wrong", "got \"some\"");
    doc["expect"]["wrong"] = {{"at_least", -1}};
    expect_error(doc, "/expect/wrong/at_least", "expected a non-negative integer, got -1");
    doc["expect"]["wrong"] = {{"atleast", 1}};
    expect_error(doc, "/expect/wrong/atleast", "unknown field; known fields are: at_least, at_most, exactly");
    doc["expect"]["wrong"] = {{"exactly", 1}, {"at_most", 2}};
    expect_error(doc, "/expect/wrong", "\"exactly\" alone");
    doc["expect"]["wrong"] = {{"at_least", 3}, {"at_most", 2}};
    expect_error(doc, "/expect/wrong/at_most", "expected at least at_least (3), got 2");
    // Bands that hold whatever the lab does are refused, and named.
    doc["expect"]["wrong"] = {{"at_least", 0}};
    expect_error(doc, "/expect/wrong", "always holds (>= 0)");
    doc["expect"]["wrong"] = {{"at_most", 10}};  // runs defaults to 10
    expect_error(doc, "/expect/wrong", "always holds (<= 10)");
    doc["expect"]["wrong"] = {{"at_least", 0}, {"at_most", 12}};
    expect_error(doc, "/expect/wrong", "always holds (in 0..12)");
    doc["expect"]["wrong"] = {{"at_least", 1}, {"at_most", 9}};
    EXPECT_EQ(parse(doc).expect.wrong, Expectation::Count::between);
    doc["expect"]["wrong"] = {{"at_least", 11}};  // runs defaults to 10
    expect_error(doc, "/expect/wrong/at_least", "the lab has 10 runs");
}

TEST(ScenarioLoaderTest, AccountingTermsTakeABandOrABareCount) {
    json doc = workload_doc();
    doc["expect"]["lost"] = 0;
    doc["expect"]["duplicated"] = {{"exactly", 0}};
    doc["expect"]["redelivered"] = {{"at_most", 1}};
    doc["expect"]["unexpected"] = 0;
    doc["expect"]["processed_once"] = 2;
    doc["expect"]["reordered"] = 0;
    Scenario s = parse(doc);
    const TrialTerms& t = s.expect.every_trial;
    for (const char* term : {"lost", "duplicated", "redelivered", "unexpected", "processed_once", "reordered"})
        ASSERT_TRUE(t.band(term)) << term;
    EXPECT_EQ(t.band("lost")->at_least, 0);
    EXPECT_EQ(t.band("lost")->at_most, 0);
    EXPECT_EQ(t.band("processed_once")->at_least, 2);
    EXPECT_EQ(t.band("processed_once")->at_most, 2);
    EXPECT_FALSE(t.band("redelivered")->at_least.has_value());
    EXPECT_EQ(t.band("redelivered")->at_most, 1);
    EXPECT_EQ(t.describe(),
              "lost = 0, duplicated = 0, redelivered <= 1, unexpected = 0, processed once = 2, reordered = 0");

    // The same in every wrong trial.
    doc = workload_doc();
    doc["expect"]["wrong"] = "all";
    doc["expect"]["every_wrong_trial"] = {{"duplicated", {{"at_least", 1}}}, {"lost", 0}};
    s = parse(doc);
    ASSERT_TRUE(s.expect.every_wrong_trial.band("duplicated") && s.expect.every_wrong_trial.band("lost"));
    EXPECT_EQ(s.expect.every_wrong_trial.band("duplicated")->at_least, 1);
    EXPECT_EQ(s.expect.every_wrong_trial.band("lost")->at_most, 0);
    EXPECT_FALSE(s.expect.every_trial.band("lost").has_value());
}

TEST(ScenarioLoaderTest, AccountingTermErrorsNameTheirPath) {
    json doc = workload_doc();
    doc["expect"]["lost"] = -1;
    expect_error(doc, "/expect/lost", "expected a non-negative integer, got -1");
    doc["expect"]["lost"] = "0";
    expect_error(doc, "/expect/lost", "expected a count such as 0, or {\"at_least\": N, \"at_most\": M} or {\"exactly\": N}, got \"0\"");
    doc["expect"]["lost"] = 0.5;
    expect_error(doc, "/expect/lost", "expected a count such as 0");
    doc["expect"]["lost"] = {{"atmost", 1}};
    expect_error(doc, "/expect/lost/atmost", "unknown field; known fields are: at_least, at_most, exactly");
    doc["expect"].erase("lost");
    // A band every value lies in is refused, and named.
    doc["expect"]["redelivered"] = {{"at_least", 0}};
    expect_error(doc, "/expect/redelivered", "this band of entries redelivered after ack always holds (>= 0)");
    doc["expect"].erase("redelivered");
    doc["expect"]["processed_once"] = {{"at_least", 0}};
    expect_error(doc, "/expect/processed_once", "this band of entries processed once always holds");
    doc["expect"].erase("processed_once");
    doc["expect"]["redelivred"] = 0;
    expect_error(doc, "/expect/redelivred", "unknown field");
    doc["expect"].erase("redelivred");
    doc["expect"]["wrong"] = "all";
    doc["expect"]["every_wrong_trial"] = {{"unexpected", "none"}};
    expect_error(doc, "/expect/every_wrong_trial/unexpected", "expected a count such as 0");
    // Sessions have no trial history to account.
    json ses = sessions_doc();
    ses["expect"]["lost"] = 0;
    expect_error(ses, "/expect/lost", "applies only to kind \"workload\"");
}

TEST(ScenarioLoaderTest, EveryTrialHasMatches) {
    json doc = workload_doc();
    doc["expect"]["every_trial_has"] = json::parse(R"([{"op":"lock_release","fields":{"result":0}},{"op":"ack"}])");
    Scenario s = parse(doc);
    ASSERT_EQ(s.expect.every_trial.has.size(), 2u);
    EXPECT_EQ(s.expect.every_trial.has[0].op, Op::lock_release);
    EXPECT_EQ(s.expect.every_trial.has[0].fields, json({{"result", 0}}));
    EXPECT_TRUE(s.expect.every_trial.has[1].fields.empty());

    doc["expect"]["every_trial_has"] = json::parse(R"([{"fields":{}}])");
    expect_error(doc, "/expect/every_trial_has/0/op", "required field is missing");
    doc["expect"]["every_trial_has"] = json::parse(R"([{"op":"ack","fields":[1]}])");
    expect_error(doc, "/expect/every_trial_has/0/fields", "expected an object, got [1]");
}

TEST(ScenarioLoaderTest, FieldsOfTheOtherKindAreRejected) {
    json doc = workload_doc();
    doc["cases"] = json::array();
    expect_error(doc, "/cases", "applies only to kind \"sessions\"");
    doc = sessions_doc();
    doc["events"] = json::array();
    expect_error(doc, "/events", "applies only to kind \"workload\"");
    doc = sessions_doc();
    doc["expect"]["every_trial_has"] = json::array();
    expect_error(doc, "/expect/every_trial_has", "applies only to kind \"workload\"");
}

TEST(ScenarioLoaderTest, SessionsDefaults) {
    Scenario s = parse(sessions_doc());
    ASSERT_EQ(s.sessions().cases.size(), 1u);
    const SessionCase& c = s.sessions().cases[0];
    EXPECT_EQ(c.title_vi, "case one");
    EXPECT_TRUE(c.setup_sql.empty());
    EXPECT_EQ(c.final_sql, "SELECT id, status, version FROM tmp_orders ORDER BY id");
    EXPECT_EQ(c.sessions[1].steps[0].at_ms, -1);
    EXPECT_FALSE(c.sessions[1].steps[0].expect.has_value());
    EXPECT_FALSE(c.sessions[1].steps[0].expect_wait_min_ms.has_value());
}

TEST(ScenarioLoaderTest, SessionsRowsSqlstateAndTranscript) {
    json doc = sessions_doc();
    json& c = doc["cases"][0];
    c["expect_rows"] = json::parse(R"([[42, "paid", 2], ["x"]])");
    c["transcript_sessions"] = {"B"};
    c["sessions"][1]["steps"][0]["expect_sqlstate"] = "40001";
    c["sessions"][1]["steps"][0]["expect_wait_ms"] = {{"max", 100}};
    Scenario s = parse(doc);
    EXPECT_EQ(s.sessions().cases[0].expect_rows, (std::vector<std::vector<std::string>>{{"42", "paid", "2"}, {"x"}}));
    EXPECT_EQ(s.sessions().cases[0].transcript_sessions, std::vector<std::string>{"B"});
    const SessionStep& step = s.sessions().cases[0].sessions[1].steps[0];
    EXPECT_EQ(step.expect_sqlstate, "40001");
    EXPECT_FALSE(step.expect_wait_min_ms.has_value());
    EXPECT_EQ(step.expect_wait_max_ms, 100);
}

TEST(ScenarioLoaderTest, SessionsErrorsNameTheirPath) {
    json doc = sessions_doc();
    doc["cases"] = json::array();
    expect_error(doc, "/cases", "expected a non-empty array");

    doc = sessions_doc();
    doc["cases"][0]["sessions"] = json::array();
    expect_error(doc, "/cases/0/sessions", "expected a non-empty array");

    doc = sessions_doc();
    doc["cases"][0]["sessions"][1]["name"] = "A";
    expect_error(doc, "/cases/0/sessions/1/name", "duplicate session name \"A\" (first at /cases/0/sessions/0/name)");

    doc = sessions_doc();
    doc["cases"][0]["sessions"][0]["steps"][0]["sql"] = "";
    expect_error(doc, "/cases/0/sessions/0/steps/0/sql", "expected a non-empty string");

    doc = sessions_doc();
    doc["cases"][0]["sessions"][0]["steps"][0]["at_ms"] = -1;
    expect_error(doc, "/cases/0/sessions/0/steps/0/at_ms", "expected a non-negative integer, got -1");

    doc = sessions_doc();
    doc["cases"][0]["sessions"][1]["steps"][0]["expect_sqlstate"] = "4001";
    expect_error(doc, "/cases/0/sessions/1/steps/0/expect_sqlstate", "5-character SQLSTATE");

    doc = sessions_doc();
    doc["cases"][0]["sessions"][0]["steps"][0]["expect_sqlstate"] = "40001";
    expect_error(doc, "/cases/0/sessions/0/steps/0/expect_sqlstate", "cannot both");

    doc = sessions_doc();
    doc["cases"][0]["sessions"][0]["steps"][0]["expect_wait_ms"] = {{"min", 900}, {"max", 500}};
    expect_error(doc, "/cases/0/sessions/0/steps/0/expect_wait_ms/max", "expected max >= min (900), got 500");

    doc = sessions_doc();
    doc["cases"][0]["sessions"][0]["steps"][0]["expect_wait_ms"] = {{"mn", 1}};
    expect_error(doc, "/cases/0/sessions/0/steps/0/expect_wait_ms/mn", "unknown field");

    doc = sessions_doc();
    doc["cases"][0]["transcript_sessions"] = {"A", "C"};
    expect_error(doc, "/cases/0/transcript_sessions/1", "expected one of the sessions (\"A\", \"B\"), got \"C\"");

    doc = sessions_doc();
    doc["cases"][0]["expect_rows"] = json::parse(R"([["42", "paid", true]])");
    expect_error(doc, "/cases/0/expect_rows/0/2", "expected a string or a number, got true");

    doc = sessions_doc();
    doc["cases"][0]["setup_sql"] = json::parse(R"j(["CREATE TABLE t (id int)", 5])j");
    expect_error(doc, "/cases/0/setup_sql/1", "expected a string, got 5");

    doc = sessions_doc();
    doc["cases"][0].erase("title");
    expect_error(doc, "/cases/0/title", "required field is missing");

    doc = sessions_doc();
    doc["expect"]["wrong"] = {{"exactly", 2}};  // only one case
    expect_error(doc, "/expect/wrong/exactly", "the lab has 1 cases");
}

TEST(ScenarioLoaderTest, DocumentedIsChecked) {
    json doc = workload_doc();
    doc["documented"] = {{"wrong", 3}, {"of", 2}};
    expect_error(doc, "/documented/wrong", "expected at most \"of\" (2), got 3");
    doc["documented"] = {{"txt", "x"}};
    expect_error(doc, "/documented/txt", "unknown field; known fields are: text, text_vi, wrong, of");
    doc["documented"] = {{"text", "t"}, {"wrong", 0}, {"of", 5}};
    Scenario s = parse(doc);
    EXPECT_EQ(s.documented.text, "t");
    EXPECT_EQ(s.documented.wrong, 0);
    EXPECT_EQ(s.documented.of, 5);
    EXPECT_TRUE(s.documented.quote_vi.empty());
}

// A quote goes with its article and section, and a citation with a quote: words without a source,
// or a source without words, would let relab's words pass for the article's.
TEST(ScenarioLoaderTest, AQuoteNamesItsArticleAndSection) {
    json doc = workload_doc();
    doc["documented"] = {{"quote_vi", "10/10 lần"}, {"section", "§2"}};
    expect_error(doc, "/documented/article", "required with quote_vi");
    doc["documented"] = {{"quote_vi", "10/10 lần"}, {"article", "ordering"}};
    expect_error(doc, "/documented/section", "required with quote_vi");
    doc["documented"] = {{"text", "t"}, {"section", "§2"}};
    expect_error(doc, "/documented/section", "needs quote_vi");
    doc["documented"] = {{"quote_vi", "q"}, {"section", "§2"}, {"article", "stream"}};
    expect_error(doc, "/documented/article", "expected one of \"ordering\", \"idempotency\", got \"stream\"");
    doc["documented"] = {{"also", json::array({{{"quote_vi", "q"}, {"section", "§5"}}})}};
    expect_error(doc, "/documented/article", "required with throughput or also");
    doc["documented"] = {{"quote_vi", "q"}, {"section", "§2"}, {"article", "ordering"},
                         {"also", json::array({{{"quote_vi", "q2"}}})}};
    expect_error(doc, "/documented/also/0/section", "required field is missing");
    doc["documented"] = {{"quote_vi", "q"}, {"section", "§2"}, {"article", "ordering"},
                         {"throughput", {{"per_s", 0}, {"quote_vi", "~1,25 event/giây"}, {"section", "§2"}}}};
    expect_error(doc, "/documented/throughput/per_s", "expected a number above 0, got 0");

    doc["documented"] = {{"quote_vi", "q"}, {"section", "§7, Case 1"}, {"article", "idempotency"},
                         {"throughput", {{"per_s", 1.25}, {"quote_vi", "~1,25 event/giây"}, {"section", "§2"}, {"text", "n"}}},
                         {"also", json::array({{{"quote_vi", "q2"}, {"section", "§5"}, {"text_vi", "ghi chú"}}})}};
    const Scenario s = parse(doc);
    EXPECT_EQ(s.documented.article, Article::idempotency);
    EXPECT_EQ(article_title(s.documented.article), "Lưu idempotency key ở Redis");
    EXPECT_EQ(s.documented.section, "§7, Case 1");
    ASSERT_TRUE(s.documented.throughput.has_value());
    EXPECT_EQ(s.documented.throughput->per_s, 1.25);
    EXPECT_EQ(s.documented.throughput->passage, (ArticlePassage{"~1,25 event/giây", "§2", "n", ""}));
    EXPECT_EQ(s.documented.also, (std::vector<ArticlePassage>{{"q2", "§5", "", "ghi chú"}}));
}

TEST(ScenarioLoaderTest, DescribeTexts) {
    RecordMatch release{Op::lock_release, {{"result", 0}}};
    EXPECT_EQ(release.describe(), "lock_release with result=0");
    EXPECT_EQ(RecordMatch{Op::ack}.describe(), "ack");
    RecordMatch two{Op::lock_release, {{"method", "DELEX IFEQ"}, {"result", 1}}};
    EXPECT_EQ(two.describe(), "lock_release with method=DELEX IFEQ, result=1");

    Expectation e;
    e.wrong = Expectation::Count::all;
    EXPECT_EQ(e.describe(), "wrong = all");
    e.wrong = Expectation::Count::none;
    EXPECT_EQ(e.describe(), "wrong = none");
    e.wrong = Expectation::Count::at_least;
    e.n = 1;
    EXPECT_EQ(e.describe(), "wrong >= 1");
    e.wrong = Expectation::Count::at_most;
    e.n = 2;
    EXPECT_EQ(e.describe(), "wrong <= 2");
    e.wrong = Expectation::Count::exactly;
    e.n = 3;
    EXPECT_EQ(e.describe(), "wrong = 3");
    e.every_trial.has = {release};
    EXPECT_EQ(e.describe(), "wrong = 3; every trial: has lock_release with result=0");
    e.wrong = Expectation::Count::between;
    e.n = 1;
    e.n_max = 54;
    e.until_wrong_max_runs = 600;
    e.every_trial = {};
    EXPECT_EQ(e.describe(), "wrong in 1..54 (more trials until one is wrong, up to 600)");

    EXPECT_EQ(to_string(WriteMode::plain), "plain");
    EXPECT_EQ(to_string(WriteMode::cas), "cas");
    EXPECT_EQ(to_string(VersionSource::event), "event");
    EXPECT_EQ(to_string(VersionSource::entry_id), "entry_id");
}

TEST(ScenarioLoaderTest, ExpectationHolds) {
    Expectation e;
    e.wrong = Expectation::Count::all;
    EXPECT_TRUE(e.holds(10, 10));
    EXPECT_FALSE(e.holds(7, 10));
    EXPECT_FALSE(e.holds(0, 0));
    e.wrong = Expectation::Count::none;
    EXPECT_TRUE(e.holds(0, 10));
    EXPECT_FALSE(e.holds(1, 10));
    e.wrong = Expectation::Count::at_least;
    e.n = 1;
    EXPECT_TRUE(e.holds(1, 20));
    EXPECT_FALSE(e.holds(0, 20));
    e.wrong = Expectation::Count::at_most;
    e.n = 2;
    EXPECT_TRUE(e.holds(2, 20));
    EXPECT_FALSE(e.holds(3, 20));
    e.wrong = Expectation::Count::exactly;
    e.n = 3;
    EXPECT_TRUE(e.holds(3, 20));
    EXPECT_FALSE(e.holds(2, 20));
    EXPECT_FALSE(e.holds(4, 20));
    e.wrong = Expectation::Count::between;
    e.n = 1;
    e.n_max = 54;
    EXPECT_TRUE(e.holds(1, 60));
    EXPECT_TRUE(e.holds(54, 60));
    EXPECT_FALSE(e.holds(0, 60));
    EXPECT_FALSE(e.holds(55, 60));  // a lock that orders nothing: no better than no lock
}

}  // namespace scenario_loader_test
}  // namespace relab

namespace relab {
namespace scenario_loader_test {

json fault_doc(json faults, json recovery = json::object()) {
    json d = json::parse(R"({
        "id": "f-1", "title": "F", "kind": "workload", "consumers": 2,
        "orders": [ { "id": 42 } ],
        "events": [ { "order": 42, "type": "created", "version": 1 },
                    { "order": 42, "type": "paid", "version": 2 } ],
        "expect": { "wrong": "none" }
    })");
    d["faults"] = std::move(faults);
    if (!recovery.empty()) d["recovery"] = std::move(recovery);
    return d;
}

TEST(FaultScheduleLoaderTest, reads_every_trigger_and_target_form) {
    const Scenario s = parse(fault_doc(
        json::parse(R"([
            {"action": "kill", "target": "matched", "after": {"op": "receive", "fields": {"event": {"type": "created"}}}, "delay_ms": 100},
            {"action": "restart", "target_of": 1, "after": {"op": "fault", "actor": "nemesis", "fields": {"fault": 1}}, "delay_ms": 500},
            {"action": "pause", "target": "reaper", "at_ms": 50, "every_ms": 200, "count": 3, "note": "GC"}
        ])"),
        json::parse(R"({"pending_first": true, "autoclaim": {"min_idle_ms": 700, "every_ms": 20, "count": 5}})")));
    ASSERT_EQ(s.faults.size(), 3u);
    EXPECT_EQ(s.faults[0].action, FaultAction::kill);
    EXPECT_TRUE(s.faults[0].matched);
    ASSERT_TRUE(s.faults[0].trigger.after.has_value());
    EXPECT_EQ(s.faults[0].trigger.after->op, Op::receive);
    EXPECT_EQ(s.faults[0].trigger.after->fields, json::parse(R"({"event": {"type": "created"}})"));
    EXPECT_EQ(s.faults[0].trigger.delay_ms, 100);
    EXPECT_FALSE(s.faults[0].trigger.at_ms.has_value());
    EXPECT_EQ(s.faults[1].action, FaultAction::restart);
    EXPECT_EQ(s.faults[1].target_of, 1);
    EXPECT_EQ(s.faults[1].trigger.after->actor, "nemesis");
    EXPECT_EQ(s.faults[2].action, FaultAction::pause);
    EXPECT_EQ(*s.faults[2].trigger.at_ms, 50);
    EXPECT_EQ(s.faults[2].trigger.every_ms, 200);
    EXPECT_EQ(s.faults[2].trigger.count, 3);
    EXPECT_EQ(s.faults[2].note, "GC");
    EXPECT_TRUE(s.flow().recovery.pending_first);
    EXPECT_TRUE(s.flow().recovery.autoclaim.enabled);
    EXPECT_TRUE(s.flow().recovery.autoclaim.in_reaper());
    EXPECT_EQ(s.flow().recovery.autoclaim.min_idle_ms, 700);
    EXPECT_EQ(s.flow().recovery.autoclaim.every_ms, 20);
    EXPECT_EQ(s.flow().recovery.autoclaim.count, 5);
}

TEST(FaultScheduleLoaderTest, bad_faults_are_refused_with_their_path_and_what_to_write) {
    expect_error(fault_doc(json::parse(R"([{"action": "explode", "target": "C1", "at_ms": 1}])")), "/faults/0/action",
                 "one of \"kill\", \"pause\", \"resume\", \"restart\"");
    expect_error(fault_doc(json::parse(R"([{"action": "kill", "target": "C1"}])")), "/faults/0", "a fault needs a trigger");
    expect_error(fault_doc(json::parse(
                     R"([{"action": "kill", "target": "C1", "at_ms": 1, "after": {"op": "receive"}, "every_ms": 5, "count": 2}])")),
                 "/faults/0/every_ms", "one trigger");
    expect_error(fault_doc(json::parse(R"([{"action": "flood", "target": "C1", "at_ms": 1, "bytes": 10}])")),
                 "/faults/0/target", "flood acts on \"redis\"");
    expect_error(fault_doc(json::parse(R"([{"action": "kill", "target": "C1", "at_ms": 1, "bytes": 10}])")),
                 "/faults/0/bytes", "applies to a flood only");
    expect_error(fault_doc(json::parse(R"([{"action": "kill", "target": "C9", "at_ms": 1}])")), "/faults/0/target",
                 "a role of this lab (\"C1\", \"C2\", \"producer\")");
    expect_error(fault_doc(json::parse(R"([{"action": "kill", "target": "matched", "at_ms": 1}])")), "/faults/0/target",
                 "needs an \"after\" trigger");
    expect_error(fault_doc(json::parse(R"([{"action": "kill", "target_of": 1, "at_ms": 1}])")), "/faults/0/target_of",
                 "names an earlier fault");
    expect_error(fault_doc(json::parse(R"([{"action": "kill", "target": "C1", "at_ms": 1},
                                           {"action": "resume", "target_of": 2, "at_ms": 2}])")),
                 "/faults/1/target_of", "an integer in 1..1");
    expect_error(fault_doc(json::parse(R"([{"action": "kill", "target": "C1", "at_ms": 1, "count": 3}])")),
                 "/faults/0/count", "needs \"every_ms\"");
    expect_error(fault_doc(json::parse(R"([{"action": "kill", "target": "C1", "at_ms": 1, "delay_ms": 5}])")),
                 "/faults/0/delay_ms", "counts from an \"after\" trigger");
    // The reaper is a target only where the lab has one.
    expect_error(fault_doc(json::parse(R"([{"action": "kill", "target": "reaper", "at_ms": 1}])")), "/faults/0/target",
                 "a role of this lab");
    expect_error(fault_doc(json::array(), json::parse(R"({"autoclaim": {"in": "everywhere"}})")), "/recovery/autoclaim/in",
                 "one of \"reaper\", \"consumers\"");
}

// "until": "published" ends a repeated fault's repeats with the workload: every_ms alone is then a
// schedule (no count needed), a count still caps it; it needs every_ms, names only "published",
// and an idempotency lab (whose clients publish nothing) refuses it.
TEST(FaultScheduleLoaderTest, until_published_bounds_a_repeated_fault_by_the_workload) {
    const Scenario s = parse(fault_doc(json::parse(R"([
        {"action": "restart", "target": "C1", "at_ms": 100, "every_ms": 300, "until": "published"},
        {"action": "restart", "target": "C2", "at_ms": 100, "every_ms": 300, "count": 4, "until": "published"},
        {"action": "pause", "target": "C2", "at_ms": 50, "every_ms": 200, "count": 3}
    ])")));
    ASSERT_EQ(s.faults.size(), 3u);
    EXPECT_TRUE(s.faults[0].trigger.until_published);
    EXPECT_EQ(s.faults[0].trigger.every_ms, 300);
    EXPECT_EQ(s.faults[0].trigger.count, k_fault_count_until_published);
    EXPECT_TRUE(s.faults[1].trigger.until_published);
    EXPECT_EQ(s.faults[1].trigger.count, 4);
    EXPECT_FALSE(s.faults[2].trigger.until_published);
    expect_error(fault_doc(json::parse(R"([{"action": "kill", "target": "C1", "at_ms": 1, "until": "published"}])")),
                 "/faults/0/until", "give \"every_ms\" as well");
    expect_error(fault_doc(json::parse(R"([{"action": "kill", "target": "C1", "at_ms": 1, "every_ms": 5, "until": "drained"}])")),
                 "/faults/0/until", "\"published\"");
    expect_error(fault_doc(json::parse(R"([{"action": "kill", "target": "C1", "at_ms": 1, "every_ms": 5}])")),
                 "/faults/0/every_ms", "or \"until\": \"published\"");
    json idem = json::parse(R"({
        "id": "i-1", "title": "I", "kind": "workload",
        "idem": { "clients": [ { "name": "A", "requests": [ { "client_key": "k", "at_ms": 0 } ] } ] },
        "faults": [ { "action": "kill", "target": "A", "at_ms": 1, "every_ms": 10, "until": "published" } ],
        "expect": { "wrong": "none" }
    })");
    expect_error(idem, "/faults/0/until", "give \"count\"");
}

// Which action may act on which target is one table (fault/faults.cpp): the loader refuses a
// pairing it does not list, naming what the action acts on, and an action that needs another
// target (failover: the replica) says how to give the lab one.
TEST(FaultScheduleLoaderTest, the_target_table_decides_what_each_action_may_act_on) {
    auto with_servers = [](json faults, json servers) {
        json d = fault_doc(std::move(faults));
        d["servers"] = std::move(servers);
        return d;
    };
    // drop_link: the roles' connections, one role's, or the replica's link.
    const Scenario s = parse(fault_doc(json::parse(R"([{"action": "drop_link", "target": "clients", "at_ms": 1},
                                                      {"action": "drop_link", "target": "C1", "at_ms": 2}])")));
    EXPECT_EQ(fault_target_of(s.faults, 0), FaultTarget::clients);
    EXPECT_EQ(fault_target_of(s.faults, 1), FaultTarget::role);
    EXPECT_TRUE(faults_cause(s.faults, FaultOutage::redis));  // the roles ride out the closed connections
    EXPECT_FALSE(faults_cause(s.faults, FaultOutage::postgres));
    expect_error(fault_doc(json::parse(R"([{"action": "kill", "target": "clients", "at_ms": 1}])")), "/faults/0/target",
                 "kill acts on a role, \"redis\" or \"postgres\", not on \"clients\"");
    expect_error(with_servers(json::parse(R"([{"action": "kill", "target": "redis-replica", "at_ms": 1}])"),
                              json::parse(R"({"replica": true})")),
                 "/faults/0/target", "not on \"redis-replica\"");
    expect_error(with_servers(json::parse(R"([{"action": "restart", "target": "redis-replica", "at_ms": 1}])"),
                              json::parse(R"({"replica": true})")),
                 "/faults/0/action", "schedule a failover before it");
    // target_of takes the kind of the fault it names.
    expect_error(fault_doc(json::parse(R"([{"action": "drop_link", "target": "clients", "at_ms": 1},
                                           {"action": "pause", "target_of": 1, "at_ms": 2}])")),
                 "/faults/1/target_of", "pause acts on a role");
    expect_error(with_servers(json::parse(R"([{"action": "failover", "target": "redis", "at_ms": 1}])"), json::object()),
                 "/faults/0/action", "failover needs \"redis-replica\" in the lab: give the lab \"servers\": {\"replica\": true}");
    expect_error(fault_doc(json::parse(R"([{"action": "failover", "target": "C1", "at_ms": 1}])")), "/faults/0/target",
                 "failover acts on \"redis\", not on a role");
    // A server is a target only where the lab has it.
    expect_error(fault_doc(json::parse(R"([{"action": "kill", "target": "postgres", "at_ms": 1}])")), "/faults/0/target",
                 "needs the lab's own PostgreSQL (the run's is never faulted): give the lab \"servers\": {\"postgres\"");
    expect_error(fault_doc(json::parse(R"([{"action": "kill", "target": "nobody", "at_ms": 1}])")), "/faults/0/target",
                 "a server of it or its roles' connections (\"clients\")");
}

// "recovery" is read by its description (fault/fault_spec.h): the known keys, their types and
// bounds come from its lines, so a new mode is a member and a line.
TEST(FaultScheduleLoaderTest, recovery_is_read_by_its_description) {
    EXPECT_EQ(desc::keys<RecoverySpec>(), (std::vector<std::string>{"pending_first", "recreate_group", "autoclaim",
                                                                     "consumer_name", "max_deliveries"}));
    expect_error(fault_doc(json::array(), json::parse(R"({"pending_frist": true})")), "/recovery/pending_frist",
                 "known fields are: pending_first, recreate_group, autoclaim");
    expect_error(fault_doc(json::array(), json::parse(R"({"recreate_group": 1})")), "/recovery/recreate_group",
                 "true or false");
    expect_error(fault_doc(json::array(), json::parse(R"({"autoclaim": {"count": 0}})")), "/recovery/autoclaim/count",
                 "1..10000");
    expect_error(fault_doc(json::array(), json::parse(R"({"autoclaim": {"every": 5}})")), "/recovery/autoclaim/every",
                 "known fields are: min_idle_ms, every_ms, count, in");
    const Scenario s = parse(fault_doc(json::array(), json::parse(R"({"recreate_group": true, "autoclaim": {"in": "consumers"}})")));
    EXPECT_TRUE(s.flow().recovery.recreate_group);
    EXPECT_FALSE(s.flow().recovery.pending_first);
    EXPECT_TRUE(s.flow().recovery.autoclaim.enabled);
    EXPECT_FALSE(s.flow().recovery.autoclaim.in_reaper());
    EXPECT_EQ(s.flow().recovery.autoclaim.min_idle_ms, RecoverySpec{}.autoclaim.min_idle_ms);  // the struct's default
    EXPECT_FALSE(parse(fault_doc(json::array(), json::parse(R"({"autoclaim": null})"))).flow().recovery.autoclaim.enabled);
}

}  // namespace scenario_loader_test
}  // namespace relab
