#include <sstream>

#include <gtest/gtest.h>

#include "report/lab_summary.h"
#include "report/reporter.h"
#include "report/compare/verdict_recheck.h"
#include "report_fixture.h"
#include "scenario/loader/loader.h"

namespace relab {
namespace json_reader_test {

using nlohmann::json;

std::string text(const RunReport& run, Lang lang = Lang::en, TimelineSelection sel = TimelineSelection::first_and_wrong) {
    std::ostringstream out;
    make_text_reporter(TextOptions{lang, sel})->report(run, out);
    return out.str();
}

Scenario scenario_file(const std::string& name) { return load_scenario(std::string(RELAB_SOURCE_DIR) + "/scenarios/" + name); }

// The fixture's outcomes under the real scenario files, so each lab's source is a full scenario.
RunReport run_with_scenario_files() {
    RunReport run = test::sample_run();
    run.labs[0].scenario = scenario_file("08a-baseline.json");
    run.labs[1].scenario = scenario_file("08c-s4c-lock-ttl.json");
    run.labs[2].scenario = scenario_file("08f-p2-business-version.json");
    run.labs[3].scenario = scenario_file("08g-b-outbox-naive.json");
    run.labs[4].scenario = scenario_file("08d-c-cas-overlap.json");
    return run;
}

TEST(JsonReaderTest, a_report_read_back_writes_the_same_json) {
    RunReport run = run_with_scenario_files();
    run.labs[0].wrong_rate = 1.0;
    run.labs[0].wrong_rate_low = 0.34;
    run.labs[0].wrong_rate_high = 1.0;
    run.labs[0].failing_seeds = {1, 0xfedcba9876543210ULL};
    run.labs[1].replay_seed = 0x8000000000000001ULL;
    run.labs[2].trials[0].publish_delay_us = {{42, 1'000'400}};
    const json j = run_to_json(run);
    const RunReport back = run_from_json(j);
    EXPECT_EQ(run_to_json(back), j);
    EXPECT_EQ(back.labs[0].failing_seeds, run.labs[0].failing_seeds);  // 64-bit seeds survive
    EXPECT_EQ(back.labs[1].replay_seed, run.labs[1].replay_seed);
}

TEST(JsonReaderTest, a_report_read_back_prints_the_same_text_in_both_languages) {
    const RunReport run = run_with_scenario_files();
    const RunReport back = run_from_json(run_to_json(run));
    EXPECT_EQ(text(back), text(run));
    EXPECT_EQ(text(back, Lang::vi, TimelineSelection::all), text(run, Lang::vi, TimelineSelection::all));
    // The scenario itself came back, not only what the JSON spells out.
    EXPECT_EQ(back.labs[3].scenario.flow().dispatcher.enabled, run.labs[3].scenario.flow().dispatcher.enabled);
    EXPECT_EQ(back.labs[4].scenario.sessions().cases.size(), 3u);
    EXPECT_EQ(back.labs[4].scenario.kind, LabKind::sessions);
}

// What a lab does that the article does not say is printed as relab's, in every report, and
// survives a read-back (issue 12's fidelity fixes: the owner check's 409 is relab's).
TEST(JsonReaderTest, relabs_own_choices_are_printed_beside_the_articles_words_and_read_back) {
    RunReport run = run_with_scenario_files();
    run.labs[0].scenario.documented.relab_choice = "the 409 is relab's";
    run.labs[0].scenario.documented.relab_choice_vi = "mã 409 là của relab";
    run.labs[1].scenario.documented.relab_choice.clear();
    run.labs[1].scenario.documented.relab_choice_vi.clear();
    const RunReport back = run_from_json(run_to_json(run));
    EXPECT_EQ(back.labs[0].scenario.documented.relab_choice, "the 409 is relab's");
    EXPECT_EQ(back.labs[0].scenario.documented.relab_choice_vi, "mã 409 là của relab");
    EXPECT_NE(text(back).find("relab's choice, not the article's: the 409 is relab's"), std::string::npos);
    EXPECT_NE(text(back, Lang::vi).find("lựa chọn của relab, không phải của bài viết: mã 409 là của relab"), std::string::npos);
    EXPECT_NE(documented_text(back.labs[0].scenario.documented).find("[relab's choice, not the article's: the 409 is relab's]"),
              std::string::npos);
    // A lab without one prints nothing of the kind.
    EXPECT_EQ(documented_text(back.labs[1].scenario.documented).find("relab's choice"), std::string::npos);
}

// The article's words and where they stand survive a JSON report, also when the report's scenario
// is a fragment that does not parse: summary.md and index.html are rendered from that JSON.
TEST(JsonReaderTest, the_articles_words_and_their_sections_are_read_back) {
    RunReport run = test::sample_run();
    run.labs.push_back(test::s1_throughput_lab());
    const RunReport back = run_from_json(run_to_json(run));
    for (size_t i = 0; i < run.labs.size(); ++i) {
        const Documented& want = run.labs[i].scenario.documented;
        const Documented& got = back.labs[i].scenario.documented;
        EXPECT_EQ(got.article, want.article) << i;
        EXPECT_EQ(got.quote_vi, want.quote_vi) << i;
        EXPECT_EQ(got.section, want.section) << i;
        EXPECT_EQ(got.also, want.also) << i;
        EXPECT_EQ(got.throughput, want.throughput) << i;
    }
    EXPECT_EQ(back.labs[0].scenario.documented.quote_vi, "10/10 lần đơn #42 kết thúc ở created.");
    ASSERT_TRUE(back.labs.back().scenario.documented.throughput.has_value());
    EXPECT_EQ(back.labs.back().scenario.documented.throughput->per_s, 1.25);
}

TEST(JsonReaderTest, a_source_that_is_not_a_scenario_falls_back_on_the_fields_of_the_report) {
    const RunReport run = test::sample_run();  // its sources are fragments, not scenario files
    const json j = run_to_json(run);
    const RunReport back = run_from_json(j);
    EXPECT_EQ(run_to_json(back), j);
    ASSERT_EQ(back.labs.size(), 6u);
    EXPECT_EQ(back.labs[3].scenario.flow().orders.size(), 2u);  // from the final rows
    EXPECT_EQ(back.labs[1].scenario.expect.wrong, Expectation::Count::at_least);
    EXPECT_EQ(back.labs[1].scenario.expect.n, 1);
    EXPECT_EQ(back.labs[4].scenario.kind, LabKind::sessions);
    EXPECT_TRUE(back.labs[5].skipped);
    // Workload labs print exactly as before.
    for (size_t i : {0u, 1u, 2u, 3u, 5u}) {
        RunReport one, one_back;
        one.labs = {run.labs[i]};
        one_back.labs = {back.labs[i]};
        EXPECT_EQ(text(one_back, Lang::en, TimelineSelection::all), text(one, Lang::en, TimelineSelection::all)) << i;
    }
}

TEST(JsonReaderTest, simulated_and_idempotency_labs_read_back_with_their_rates_seeds_counts_and_figures) {
    const RunReport run = test::sim_and_idem_run();
    const json j = run_to_json(run);
    // As written: the backend, the rate and its interval, seeds as 0x text.
    const json& sim = j.at("labs").at(0).at("summary");
    EXPECT_EQ(sim.at("backend"), "sim");
    EXPECT_DOUBLE_EQ(sim.at("wrong_rate").get<double>(), 0.2);
    EXPECT_EQ(sim.at("ci95").size(), 2u);
    EXPECT_EQ(sim.at("failing_seeds").at(0), "0x5eed000000000005");
    EXPECT_TRUE(sim.at("replay_seed").is_null());
    EXPECT_EQ(j.at("labs").at(2).at("summary").at("idem").at("duplicates"), 1);

    const RunReport back = run_from_json(j);
    EXPECT_EQ(run_to_json(back), j);
    ASSERT_EQ(back.labs.size(), 4u);
    const LabResult& s = back.labs[0];
    EXPECT_EQ(s.backend, "sim");
    EXPECT_EQ(s.wrong, 30);
    EXPECT_EQ(s.total, 150);
    EXPECT_DOUBLE_EQ(s.wrong_rate, 0.2);
    EXPECT_DOUBLE_EQ(s.wrong_rate_low, run.labs[0].wrong_rate_low);
    EXPECT_DOUBLE_EQ(s.wrong_rate_high, run.labs[0].wrong_rate_high);
    EXPECT_EQ(s.failing_seeds, run.labs[0].failing_seeds);
    EXPECT_FALSE(s.replay_seed.has_value());
    EXPECT_EQ(s.trials[4].seed, 0x5eed000000000005ULL);
    EXPECT_TRUE(s.trials[4].wrong);
    EXPECT_TRUE(s.trials[5].history.empty());
    EXPECT_TRUE(back.labs[1].skipped);
    EXPECT_EQ(back.labs[1].backend, "sim");
    EXPECT_EQ(back.labs[1].skip_reason, run.labs[1].skip_reason);
    const LabResult& idem = back.labs[2];
    EXPECT_EQ(idem.trials[0].idem.counts.duplicates, 1);
    EXPECT_EQ(idem.trials[0].idem.counts.leaks, 1);
    EXPECT_EQ(idem.trials[1].idem.counts.unanswered, 1);
    EXPECT_EQ(idem.trials[0].idem.orders.size(), 2u);
    EXPECT_EQ(idem.trials[0].idem.leak_examples, run.labs[2].trials[0].idem.leak_examples);
    ASSERT_EQ(idem.measurements.size(), 2u);
    EXPECT_EQ(idem.measurements[0].documented, "72,232 (the article's flood)");
    EXPECT_TRUE(back.labs[3].cases[0].steps[1].redis);
    // Every summary format renders the same from the saved JSON as from the run.
    for (auto make : {&make_markdown_reporter, &make_junit_reporter}) {
        std::ostringstream a, b;
        make()->report(run, a);
        make()->report(back, b);
        EXPECT_EQ(b.str(), a.str());
    }
}

TEST(JsonReaderTest, each_trials_accounting_reads_back_even_without_its_history) {
    RunReport run = test::sample_run();
    TrialOutcome& t2 = run.labs[0].trials[1];
    t2.accounting.duplicated = 1;
    t2.accounting.duplicated_examples = {"1792591450391-0"};
    t2.accounting.lost = 2;
    t2.accounting.lost_examples = {"7-0", "7-1"};
    t2.accounting.redelivered = 1;
    t2.accounting.redelivered_examples = {"8-0"};
    t2.accounting.unexpected = 1;
    t2.accounting.unexpected_examples = {"9-0"};
    t2.history.clear();  // a long simulated run keeps few histories
    const json j = run_to_json(run);
    const RunReport back = run_from_json(j);
    EXPECT_EQ(run_to_json(back), j);
    EXPECT_EQ(back.labs[0].trials[1].accounting, t2.accounting);
    EXPECT_EQ(back.labs[0].trials[0].accounting, run.labs[0].trials[0].accounting);
    EXPECT_EQ(back.labs[0].trials[0].accounting.stale_examples,
              std::vector<std::string>{"created overwrote paid (#42)"});
    EXPECT_EQ(accounting_total(back.labs[0]).lost, 2);
    EXPECT_EQ(j.at("labs").at(0).at("summary").at("accounting").at("duplicated"), 1);
}

TEST(JsonReaderTest, side_effect_counts_read_back_and_a_lab_without_side_effects_carries_none) {
    RunReport run = test::sample_run();
    EXPECT_FALSE(run_to_json(run).at("labs").at(0).at("summary").at("accounting").contains("side_effects"));
    TrialOutcome& t2 = run.labs[0].trials[1];
    t2.accounting.side_effects = 2;
    t2.accounting.side_effects_out_of_order = 1;
    t2.accounting.side_effect_examples = {"#42: paid (v2) sent before created (v1)"};
    t2.history.clear();
    const json j = run_to_json(run);
    const RunReport back = run_from_json(j);
    EXPECT_EQ(run_to_json(back), j);
    EXPECT_EQ(back.labs[0].trials[1].accounting, t2.accounting);
    EXPECT_EQ(j.at("labs").at(0).at("summary").at("accounting").at("side_effects_out_of_order"), 1);
}

TEST(JsonReaderTest, a_report_written_before_the_accounting_gets_one_from_its_kept_history) {
    json j = run_to_json(test::sample_run());
    for (auto& t : j["labs"][0]["trials"]) t.erase("accounting");
    j["labs"][0]["trials"][1]["history"] = json::array();
    j["labs"][0]["summary"].erase("accounting");
    const RunReport back = run_from_json(j);
    const Accounting& a = back.labs[0].trials[0].accounting;
    EXPECT_EQ(a.published, 2);
    EXPECT_EQ(a.processed_once, 2);
    EXPECT_EQ(a.stale_overwrites, 1);
    EXPECT_EQ(back.labs[0].trials[1].accounting, Accounting{});  // neither kept: nothing to count
}

TEST(JsonReaderTest, an_accounting_field_of_the_wrong_type_names_its_path) {
    json j = run_to_json(test::sample_run());
    j["labs"][0]["trials"][0]["accounting"]["lost"] = "none";
    try {
        run_from_json(j);
        FAIL() << "accepted";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "JSON report: at /labs/0/trials/0/accounting/lost: expected a number, got a string");
    }
    j = run_to_json(test::sample_run());
    j["labs"][0]["trials"][0]["accounting"]["examples"]["lost"] = {1};
    try {
        run_from_json(j);
        FAIL() << "accepted";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()),
                  "JSON report: at /labs/0/trials/0/accounting/examples/lost/0: expected a string, got a number");
    }
}

TEST(JsonReaderTest, a_recheck_of_a_saved_report_judges_the_accounting_by_the_kept_history) {
    // 08a's file expects lost 0 and duplicated 0. Trial 1's history shows created's job run twice,
    // though the saved accounting (as a tampered or older file might) says nothing of it.
    RunReport run = run_with_scenario_files();
    LabResult& lab = run.labs[0];
    lab.trials[0].history.push_back(
        test::plain_write(1, 900.0, "C2", test::event(42, "created", 1), 1));
    lab.held = true;
    RunReport back = run_from_json(run_to_json(run));
    EXPECT_EQ(back.labs[0].trials[0].accounting.duplicated, 0);  // as saved
    const std::string note = recheck_verdict(back.labs[0]);
    EXPECT_FALSE(back.labs[0].held);
    EXPECT_EQ(back.labs[0].trials[0].accounting.duplicated, 1);
    EXPECT_NE(note.find("trial 1: duplicated = 0 (measured 1)"), std::string::npos) << note;
}

TEST(JsonReaderTest, a_replayed_seed_reads_back) {
    LabResult lab = test::sim_lab();
    lab.trials = {lab.trials[4]};
    lab.wrong = lab.total = 1;
    lab.replay_seed = 0xfedcba9876543210ULL;
    RunReport run;
    run.labs = {lab};
    const json j = run_to_json(run);
    EXPECT_EQ(j.at("labs").at(0).at("summary").at("replay_seed"), "0xfedcba9876543210");
    EXPECT_EQ(run_from_json(j).labs[0].replay_seed, lab.replay_seed);
}

TEST(JsonReaderTest, history_records_keep_their_nanoseconds_and_fields) {
    const RunReport run = test::sample_run();
    const RunReport back = run_from_json(run_to_json(run));
    const auto& a = run.labs[0].trials[0].history;
    const auto& b = back.labs[0].trials[0].history;
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(b[i].t_ns, a[i].t_ns);
        EXPECT_EQ(b[i].actor, a[i].actor);
        EXPECT_EQ(b[i].op, a[i].op);
        EXPECT_EQ(b[i].data, a[i].data);
    }
}

TEST(JsonReaderTest, absent_fields_take_their_defaults) {
    const RunReport back = run_from_json(json::parse(R"({"labs": [{"id": "x", "trials": [{"trial": 1}]}]})"));
    ASSERT_EQ(back.labs.size(), 1u);
    EXPECT_EQ(back.labs[0].scenario.id, "x");
    EXPECT_FALSE(back.labs[0].skipped);
    EXPECT_FALSE(back.labs[0].held);
    ASSERT_EQ(back.labs[0].trials.size(), 1u);
    EXPECT_EQ(back.labs[0].trials[0].trial, 1);
    EXPECT_TRUE(run_from_json(json::object()).labs.empty());
}

TEST(JsonReaderTest, a_skipped_lab_an_older_relab_wrote_as_held_reads_back_as_skipped_only) {
    const RunReport back = run_from_json(json::parse(
        R"({"labs": [{"id": "08h-idmp", "skipped": true, "skip_reason": "needs Redis 8.6", "summary": {"held": true}},
                     {"id": "08a-baseline", "summary": {"held": true}}]})"));
    ASSERT_EQ(back.labs.size(), 2u);
    EXPECT_TRUE(back.labs[0].skipped);
    EXPECT_FALSE(back.labs[0].held);
    const LabCounts n = count_labs(back);
    EXPECT_EQ(n.labs, 2);
    EXPECT_EQ(n.held, 1);
    EXPECT_EQ(n.broken, 0);
    EXPECT_EQ(n.skipped, 1);
}

TEST(JsonReaderTest, a_field_of_the_wrong_type_names_its_path) {
    auto message = [](const char* text) {
        try {
            run_from_json(json::parse(text));
        } catch (const std::runtime_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message(R"({"labs": [{"id": "x", "trials": [{"trial": "one"}]}]})"),
              "JSON report: at /labs/0/trials/0/trial: expected a number, got a string");
    EXPECT_EQ(message(R"({"labs": [{"id": "x", "summary": {"held": 1}}]})"),
              "JSON report: at /labs/0/summary/held: expected a boolean, got a number");
    EXPECT_EQ(message(R"({"labs": {}})"), "JSON report: at /labs: expected an array, got an object");
    EXPECT_EQ(message(R"({"labs": [{"id": "x", "trials": [{"history": [{"op": 3}]}]}]})"),
              "JSON report: at /labs/0/trials/0/history/0/op: expected a string, got a number");
    EXPECT_EQ(message("[]"), "JSON report: at /: expected an object, got an array");
}

}  // namespace json_reader_test
}  // namespace relab

namespace relab {
namespace json_reader_test {

TEST(JsonReaderTest, the_runs_wall_and_inherent_time_and_jobs_read_back_and_default_to_0_when_absent) {
    RunReport run = test::sample_run();
    run.wall_s = 12.5;
    run.inherent_s = 10.25;
    run.jobs = 2;
    run.labs[0].throughput = ThroughputStats{2, 2, 816.5, 2.4, 2.3, 2.5};
    const RunReport back = run_from_json(run_to_json(run));
    EXPECT_DOUBLE_EQ(back.wall_s, 12.5);
    EXPECT_DOUBLE_EQ(back.inherent_s, 10.25);
    EXPECT_EQ(back.jobs, 2);
    EXPECT_EQ(back.labs[0].throughput.jobs, 2);
    EXPECT_DOUBLE_EQ(back.labs[0].throughput.span_ms, 816.5);
    EXPECT_DOUBLE_EQ(back.labs[0].throughput.per_s_max, 2.5);
    const RunReport old = run_from_json(nlohmann::json::parse(R"({"labs": []})"));
    EXPECT_EQ(old.wall_s, 0);
    EXPECT_EQ(old.inherent_s, 0);
    EXPECT_EQ(old.jobs, 0);
}

}  // namespace json_reader_test
}  // namespace relab
