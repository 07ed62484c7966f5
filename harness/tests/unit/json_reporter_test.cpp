#include <sstream>

#include <gtest/gtest.h>

#include "report/reporter.h"
#include "report_fixture.h"

namespace relab {
namespace json_reporter_test {

using nlohmann::json;

std::string render(const RunReport& run) {
    std::ostringstream out;
    make_json_reporter()->report(run, out);
    return out.str();
}

TEST(JsonReporterTest, OutputIsPrettyJsonThatRoundTripsToRunToJson) {
    const RunReport run = test::sample_run();
    const std::string text = render(run);
    ASSERT_GE(text.size(), 5u);
    EXPECT_EQ(text.substr(0, 5), "{\n  \"");  // two-space indent
    EXPECT_NE(text.find("\n    \"delex\": false"), std::string::npos);  // nested: four
    EXPECT_EQ(text.back(), '\n');
    const json parsed = json::parse(text);
    EXPECT_EQ(parsed, run_to_json(run));
    EXPECT_EQ(json::parse(parsed.dump(2)), parsed);
}

TEST(JsonReporterTest, RunHeaderServersAndSummary) {
    const json j = run_to_json(test::sample_run());
    EXPECT_EQ(j.at("relab_commit"), "631b39ae6c30");
    EXPECT_EQ(j.at("seed"), 20261021u);
    EXPECT_EQ(j.at("started_at"), "2026-11-29T20:52:59Z");
    const json& sv = j.at("servers");
    EXPECT_EQ(sv.at("redis_version"), "7.0.15");
    EXPECT_EQ(sv.at("pg_version"), "15.8");
    EXPECT_EQ(sv.at("redis_external"), false);
    EXPECT_EQ(sv.at("pg_external"), true);
    EXPECT_EQ(sv.at("delex"), false);
    EXPECT_EQ(sv.at("xadd_idmp"), false);
    // baseline, lock, cas and two-orders held; the session lab broke; IDMP was skipped.
    EXPECT_EQ(j.at("summary"), (json{{"labs", 6}, {"held", 4}, {"broken", 1}, {"skipped", 1}}));
    ASSERT_EQ(j.at("labs").size(), 6u);
}

TEST(JsonReporterTest, WorkloadLabCarriesScenarioTrialsAndHistory) {
    const RunReport run = test::sample_run();
    const json lab = run_to_json(run).at("labs").at(0);
    EXPECT_EQ(lab.at("id"), "08a-baseline");
    EXPECT_EQ(lab.at("title"), "BUG: 2 parallel consumers; plain UPDATE");
    EXPECT_EQ(lab.at("output"), "08a-baseline");
    EXPECT_EQ(lab.at("backend"), "real");
    EXPECT_EQ(lab.at("skipped"), false);
    EXPECT_EQ(lab.at("skip_reason"), "");
    EXPECT_EQ(lab.at("scenario"), (json{{"id", "08a-baseline"}, {"runs", 2}, {"consumers", 2}}));
    EXPECT_EQ(lab.at("seed"), 8001u);
    EXPECT_TRUE(lab.at("cases").empty());

    ASSERT_EQ(lab.at("trials").size(), 2u);
    const json& t = lab.at("trials").at(0);
    EXPECT_EQ(t.at("trial"), 1);
    EXPECT_EQ(t.at("seed"), 1001u);
    EXPECT_EQ(t.at("wrong"), true);
    EXPECT_EQ(t.at("wrong_orders"), (json{"#42=created (expected paid)"}));
    EXPECT_EQ(t.at("unmet"), json::array());
    // Both entries were processed once; created's late write overwrote paid.
    EXPECT_EQ(t.at("accounting"), (json{{"published", 2},
                                        {"processed_once", 2},
                                        {"duplicated", 0},
                                        {"lost", 0},
                                        {"redelivered", 0},
                                        {"unexpected", 0},
                                        {"stale_overwrites", 1},
                                        {"unapplied", 0},
                                        {"republished", 0},
                                        {"reapplied", 0},
                                        {"skipped", 0},
                                        {"pending", 0},
                                        {"never_delivered", 0}, {"dead_lettered", 0}, {"trimmed_undelivered", 0}, {"trimmed_pending", 0},
                                        {"serialization_failures", 0},
                                        {"examples",
                                         {{"duplicated", json::array()},
                                          {"lost", json::array()},
                                          {"redelivered", json::array()},
                                          {"unexpected", json::array()},
                                          {"stale_overwrites", {"created overwrote paid (#42)"}},
                                          {"unapplied", json::array()},
                                          {"republished", json::array()},
                                          {"reapplied", json::array()},
                                          {"pending", json::array()},
                                          {"never_delivered", json::array()}, {"dead_lettered", json::array()}, {"trimmed_undelivered", json::array()}, {"trimmed_pending", json::array()},
                                          {"serialization_failures", json::array()}}}}));
    EXPECT_FALSE(t.contains("lost_events"));
    EXPECT_EQ(t.at("final_rows"), (json{{{"id", 42}, {"status", "created"}, {"version", 0}, {"amount", 0}}}));
    EXPECT_EQ(t.at("stream").at(1),
              (json{{"id", "1792591449272-1"}, {"fields", {{"order", "42"}, {"type", "paid"}, {"v", "2"}}}}));

    const auto& history = run.labs[0].trials[0].history;
    ASSERT_EQ(t.at("history").size(), history.size());
    for (size_t i = 0; i < history.size(); ++i) EXPECT_EQ(t.at("history").at(i), to_json(history[i]));
    const json& write = t.at("history").at(5);
    EXPECT_EQ(write.at("actor"), "C2");
    EXPECT_EQ(write.at("op"), "write");
    EXPECT_EQ(write.at("affected"), 1);
    EXPECT_EQ(write.at("t_us"), 111900);
    // The records read back as what was recorded.
    const HistoryRecord back = history_record_from_json(write);
    EXPECT_EQ(back.t_ns, history[5].t_ns);
    EXPECT_EQ(back.data, history[5].data);
}

TEST(JsonReporterTest, LabSummaryHasCountsDocumentedExpectationAndLatency) {
    const json labs = run_to_json(test::sample_run()).at("labs");
    const json& baseline = labs.at(0).at("summary");
    EXPECT_EQ(baseline.at("id"), "08a-baseline");
    EXPECT_EQ(baseline.at("trials"), 2);
    EXPECT_EQ(baseline.at("wrong"), 2);
    EXPECT_EQ(baseline.at("documented").at("wrong"), 10);
    EXPECT_EQ(baseline.at("documented").at("of"), 10);
    EXPECT_EQ(baseline.at("documented").at("text"), "wrong 10/10; created overwrites at 816 ms");
    EXPECT_EQ(baseline.at("expectation"), "wrong = all");
    EXPECT_EQ(baseline.at("held"), true);
    EXPECT_EQ(baseline.at("failures"), json::array());
    EXPECT_EQ(baseline.at("delivery_latency_us"), (json{{"samples", 4}, {"p50", 210}, {"max", 480}}));
    EXPECT_EQ(baseline.at("lock_release_method"), "");
    EXPECT_DOUBLE_EQ(baseline.at("elapsed_s").get<double>(), 2.5);
    // The lab's accounting: both trials summed, without examples.
    EXPECT_EQ(baseline.at("accounting"), (json{{"published", 4},
                                               {"processed_once", 4},
                                               {"duplicated", 0},
                                               {"lost", 0},
                                               {"redelivered", 0},
                                               {"unexpected", 0},
                                               {"stale_overwrites", 2},
                                               {"unapplied", 0},
                                               {"republished", 0},
                                               {"reapplied", 0},
                                               {"skipped", 0},
                                               {"pending", 0},
                                               {"never_delivered", 0}, {"dead_lettered", 0}, {"trimmed_undelivered", 0}, {"trimmed_pending", 0}, {"serialization_failures", 0}}));

    const json& lock = labs.at(1).at("summary");
    EXPECT_TRUE(lock.at("documented").at("wrong").is_null());  // the article gave no count
    EXPECT_TRUE(lock.at("documented").at("of").is_null());
    EXPECT_EQ(lock.at("expectation"), "wrong >= 1");
    EXPECT_EQ(lock.at("lock_release_method"), "compare-and-delete Lua script");
    EXPECT_EQ(labs.at(1).at("trials").at(1).at("history").at(7).at("result"), 0);

    const json& sessions = labs.at(4).at("summary");
    EXPECT_FALSE(sessions.contains("accounting"));  // a scripted lab has no stream to account for
    EXPECT_EQ(sessions.at("held"), false);
    EXPECT_EQ(sessions.at("failures"), (json{"1 of 2 cases ended with wrong rows (expected none)"}));
}

TEST(JsonReporterTest, SessionLabCarriesCasesAndSteps) {
    const json lab = run_to_json(test::sample_run()).at("labs").at(4);
    EXPECT_TRUE(lab.at("trials").empty());
    ASSERT_EQ(lab.at("cases").size(), 2u);
    const json& c1 = lab.at("cases").at(0);
    EXPECT_EQ(c1.at("title"), "A = paid v=2, B = created v=1 in REPEATABLE READ");
    EXPECT_EQ(c1.at("wrong"), false);
    EXPECT_EQ(c1.at("final_rows"), (json{{"42", "paid", "2"}}));
    ASSERT_EQ(c1.at("steps").size(), 6u);
    const json& err = c1.at("steps").at(3);
    EXPECT_EQ(err.at("session"), "B");
    EXPECT_EQ(err.at("sql"), test::k_cas_created);
    EXPECT_EQ(err.at("start_us"), 300400);
    EXPECT_EQ(err.at("duration_us"), 703011);
    EXPECT_EQ(err.at("tag"), "");
    EXPECT_EQ(err.at("sqlstate"), "40001");
    EXPECT_EQ(err.at("error"), "could not serialize access due to concurrent update");
    EXPECT_EQ(err.at("ok"), true);
    EXPECT_EQ(err.at("failure"), "");

    const json& c2 = lab.at("cases").at(1);
    EXPECT_EQ(c2.at("wrong"), true);
    EXPECT_EQ(c2.at("failures").size(), 2u);
    EXPECT_EQ(c2.at("steps").at(1).at("ok"), false);
    EXPECT_EQ(c2.at("steps").at(1).at("failure"), "expected UPDATE 0, got UPDATE 1");
    EXPECT_EQ(c2.at("steps").at(2).at("rows"), (json{{"42", "created", "1"}}));
}

TEST(JsonReporterTest, SkippedLabKeepsItsReason) {
    const json lab = run_to_json(test::sample_run()).at("labs").at(5);
    EXPECT_EQ(lab.at("id"), "08h-idmp");
    EXPECT_EQ(lab.at("skipped"), true);
    EXPECT_EQ(lab.at("skip_reason"), "XADD IDMP needs Redis 8.6; this server is 7.0.15");
    EXPECT_TRUE(lab.at("trials").empty());
}

TEST(JsonReporterTest, InvalidUtf8FromAServerDoesNotLoseTheReport) {
    RunReport run = test::sample_run();
    run.labs[4].cases[0].steps[3].error = "bad byte \xff here";
    const std::string text = render(run);
    const json parsed = json::parse(text);
    EXPECT_EQ(parsed.at("labs").at(4).at("cases").at(0).at("steps").at(3).at("error"), "bad byte \xEF\xBF\xBD here");
}

}  // namespace json_reporter_test
}  // namespace relab
