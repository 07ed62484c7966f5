#include <algorithm>
#include <numeric>

#include <gtest/gtest.h>

#include "cli/argv_secrets.h"
#include "cli/run_jobs.h"

namespace relab {
namespace run_jobs_test {

int64_t group_sum(const std::vector<size_t>& g, const std::vector<int64_t>& est) {
    int64_t s = 0;
    for (size_t i : g) s += est[i];
    return s;
}

TEST(RunJobsTest, parse_jobs_takes_a_count_or_auto_and_refuses_the_rest) {
    EXPECT_EQ(parse_jobs("1"), 1);
    EXPECT_EQ(parse_jobs("4"), 4);
    EXPECT_GE(parse_jobs("0"), 1);
    EXPECT_EQ(parse_jobs("0"), parse_jobs("auto"));
    for (const char* bad : {"", "-1", "two", "2x", "1025"}) EXPECT_THROW(parse_jobs(bad), std::invalid_argument) << bad;
}

TEST(RunJobsTest, labs_go_longest_first_onto_the_least_loaded_group_and_keep_their_order_inside_it) {
    const std::vector<int64_t> est = {10, 70, 20, 30, 40};
    const auto groups = split_labs(est, 2);
    ASSERT_EQ(groups.size(), 2u);
    // 70 → g0; 40 → g1; 30 → g1 (70); 20 → g0 (90 vs 90: the lower); 10 → g1.
    EXPECT_EQ(groups[0], (std::vector<size_t>{1, 2}));
    EXPECT_EQ(groups[1], (std::vector<size_t>{0, 3, 4}));
    EXPECT_EQ(group_sum(groups[0], est), 90);
    EXPECT_EQ(group_sum(groups[1], est), 80);
}

TEST(RunJobsTest, every_lab_lands_in_exactly_one_group_and_no_group_is_empty) {
    const std::vector<int64_t> est = {5, 5, 5};
    for (int jobs : {1, 2, 3, 8}) {
        const auto groups = split_labs(est, jobs);
        EXPECT_EQ(groups.size(), static_cast<size_t>(std::min(jobs, 3)));
        std::vector<size_t> all;
        for (const auto& g : groups) {
            EXPECT_FALSE(g.empty());
            EXPECT_TRUE(std::is_sorted(g.begin(), g.end()));
            all.insert(all.end(), g.begin(), g.end());
        }
        std::sort(all.begin(), all.end());
        EXPECT_EQ(all, (std::vector<size_t>{0, 1, 2}));
    }
    EXPECT_TRUE(split_labs({}, 4).empty());
    // Equal estimates spread round-robin, the same on every call.
    EXPECT_EQ(split_labs({1, 1, 1, 1}, 2), (std::vector<std::vector<size_t>>{{0, 2}, {1, 3}}));
}

TEST(RunJobsTest, a_labs_estimate_grows_with_its_runs_its_last_event_and_its_job_costs) {
    Scenario s;
    s.runs = 10;
    s.flow().events = {EventSpec{42, "created", 1, 0}, EventSpec{42, "paid", 2, 0}};
    const int64_t bare = estimated_lab_us(s, std::nullopt);
    EXPECT_EQ(estimated_lab_us(s, 20), 2 * bare);
    s.flow().job_cost_ms = {{"created", 800}, {"paid", 50}};
    EXPECT_EQ(estimated_lab_us(s, std::nullopt), bare + 10 * 850'000);
    s.flow().events[1].at_ms = 300;
    s.flow().events[1].cost_us = 1'000;  // a generated cost replaces the type's
    EXPECT_EQ(estimated_lab_us(s, std::nullopt), bare + 10 * (300'000 + 800'000 + 1'000));
    Scenario sessions;
    sessions.set_kind(LabKind::sessions);
    SessionCase c;
    SessionSpec a;
    a.steps = {SessionStep{}, SessionStep{}};
    a.steps[1].at_ms = 700;
    c.sessions = {a};
    sessions.sessions().cases = {c};
    const int64_t one = estimated_lab_us(sessions, std::nullopt);
    sessions.sessions().cases = {c, c};
    EXPECT_EQ(estimated_lab_us(sessions, std::nullopt), 2 * one);
    EXPECT_GT(one, 700'000);
}

TEST(RunJobsTest, a_child_gets_the_options_that_change_what_runs_and_its_labs_as_files) {
    RunOptions o;
    o.seed = 7;
    o.runs = 3;
    o.orders = 500;
    o.mutant = "no-lock";
    o.pg_url = "postgresql://x/y";
    o.lang = "vi";
    o.out_dir = "reports/out";
    JobGroup g;
    g.labs = {0, 2};
    g.files = {"scenarios/08c-a.json", "-odd.json"};
    const auto args = child_run_args(o, g, "/tmp/p/child-1.json");
    const std::vector<std::string> want = {"run",   "--quiet",  "--json",  "/tmp/p/child-1.json", "--backend",
                                           "real",  "--seed",   "7",       "--runs",              "3",
                                           "--mutant", "no-lock", "--",
                                           "scenarios/08c-a.json", "-odd.json"};
    EXPECT_EQ(args, want);  // --orders only where a generated workload takes it; no --out-dir, --lang
    g.orders_apply = true;
    const auto with_orders = child_run_args(o, g, "j");
    EXPECT_NE(std::find(with_orders.begin(), with_orders.end(), "--orders"), with_orders.end());
    // The URL (it may hold a password) goes in the child's environment, never its argv.
    const std::map<std::string, std::string> env = {{"DATABASE_URL", "postgresql://x/y"}};
    EXPECT_EQ(child_run_env(o), env);
}

TEST(RunJobsTest, passwords_in_url_arguments_are_hidden_in_place) {
    std::string a0 = "relab", a1 = "--redis-url", a2 = "redis://:s3cr@t@127.0.0.1:6379/0",
                a3 = "--pg-url=postgresql://ci:pw@h:5432/db?x=1", a4 = "postgresql://user@h/db", a5 = "plain:a@b";
    char* argv[] = {a0.data(), a1.data(), a2.data(), a3.data(), a4.data(), a5.data()};
    EXPECT_EQ(hide_url_passwords(6, argv), 2);
    EXPECT_STREQ(argv[2], "redis://:******@127.0.0.1:6379/0");
    EXPECT_STREQ(argv[3], "--pg-url=postgresql://ci:**@h:5432/db?x=1");
    EXPECT_STREQ(argv[4], "postgresql://user@h/db");
    EXPECT_STREQ(argv[5], "plain:a@b");
}

LabResult ran(const std::string& id) {
    LabResult l;
    l.scenario.id = id;
    l.wrong = static_cast<int>(id.size());
    return l;
}

Scenario lab(const std::string& id, const std::string& part = "") {
    Scenario s;
    s.id = id;
    s.part = part;
    return s;
}

TEST(RunJobsTest, the_childrens_labs_merge_back_into_the_order_of_one_run_with_the_parents_scenarios) {
    // Base labs a, b, c; b has two mutants (--mutant all), so the expanded run is a, b, b, c.
    const std::vector<Scenario> expanded = {lab("a", "pa"), lab("b", "pb"), lab("b", "pb"), lab("c", "pc")};
    const std::vector<size_t> base_of = {0, 1, 1, 2};
    std::vector<JobGroup> groups(2);
    groups[0].labs = {1};
    groups[1].labs = {0, 2};
    std::vector<RunReport> reports(2);
    reports[0].labs = {ran("b"), ran("b")};
    reports[1].labs = {ran("a"), ran("c")};
    const auto merged = merge_child_labs(expanded, base_of, groups, reports);
    ASSERT_EQ(merged.size(), 4u);
    std::vector<std::string> ids, parts;
    std::vector<int> seq;
    for (const auto& l : merged) {
        ids.push_back(l.scenario.id);
        parts.push_back(l.scenario.part);
        seq.push_back(l.sequence);
    }
    EXPECT_EQ(ids, (std::vector<std::string>{"a", "b", "b", "c"}));
    EXPECT_EQ(parts, (std::vector<std::string>{"pa", "pb", "pb", "pc"}));
    EXPECT_EQ(seq, (std::vector<int>{1, 2, 3, 4}));

    auto short_report = reports;
    short_report[0].labs.pop_back();
    EXPECT_THROW(merge_child_labs(expanded, base_of, groups, short_report), HarnessError);
    auto wrong_lab = reports;
    wrong_lab[1].labs[1] = ran("d");
    EXPECT_THROW(merge_child_labs(expanded, base_of, groups, wrong_lab), HarnessError);
}

}  // namespace run_jobs_test
}  // namespace relab
