// relab diff: the comparison rules on digests made by hand, the digest's round trip through its
// file, and the command end to end on the committed reference and on simulated runs (no server).
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "check/wrong_rate.h"
#include "cli/commands.h"
#include "report/compare/lab_diff.h"
#include "report/compare/lab_digest.h"

namespace relab {
namespace diff_test {

namespace fs = std::filesystem;

LabDigest lab(const std::string& id, const std::string& verdict, int wrong, int trials, bool deterministic = true) {
    LabDigest l;
    l.id = id;
    l.output = id;
    l.kind = "stream";
    l.verdict = verdict;
    l.wrong = wrong;
    l.trials = trials;
    const RateInterval ci = wilson_interval(wrong, trials);
    l.wrong_rate = ci.rate;
    l.ci_low = ci.low;
    l.ci_high = ci.high;
    l.deterministic = deterministic;
    l.expectation = deterministic ? "wrong = all" : "wrong >= 1";
    l.accounting = {{"published", 20}, {"processed_once", 20}, {"lost", 0}, {"duplicated", 0}, {"redelivered", 0},
                    {"unexpected", 0}};
    return l;
}

RunDigest run_of(std::vector<LabDigest> labs) {
    RunDigest d;
    d.relab_commit = "abc";
    d.labs = std::move(labs);
    return d;
}

TEST(DiffTest, the_same_run_twice_is_no_change) {
    const RunDigest r = run_of({lab("08a-baseline", "held", 10, 10), lab("08b-s1", "held", 0, 10)});
    const DigestDiff d = diff_digests(r, r);
    EXPECT_TRUE(d.no_change());
    EXPECT_EQ(d.compared, 2);
    EXPECT_EQ(d.regressions, 0);
    EXPECT_EQ(diff_text(d), "no change: 2 lab(s) compared\n");
}

TEST(DiffTest, held_to_broken_is_a_regression_naming_the_lab_and_the_interval) {
    LabDigest now = lab("08a-baseline", "broken", 0, 10);
    now.failure = "expected wrong = all, got 0/10";
    const DigestDiff d = diff_digests(run_of({lab("08a-baseline", "held", 10, 10)}), run_of({now}));
    ASSERT_EQ(d.changes.size(), 1u);
    EXPECT_TRUE(d.changes[0].regression);
    EXPECT_EQ(d.regressions, 1);
    EXPECT_EQ(diff_text(d),
              "regression  08a-baseline (real): held → broken (expected wrong = all, got 0/10); wrong 10/10 → 0/10 "
              "(a deterministic lab: any change counts)\n"
              "1 of 1 lab(s) compared changed, 0 missing from NEW, 0 new; 1 regression(s)\n");
}

TEST(DiffTest, an_edited_expectation_that_breaks_is_a_regression_even_with_the_same_count) {
    LabDigest now = lab("08a-baseline", "broken", 10, 10);
    now.expectation = "wrong = none";
    const DigestDiff d = diff_digests(run_of({lab("08a-baseline", "held", 10, 10)}), run_of({now}));
    ASSERT_EQ(d.changes.size(), 1u);
    EXPECT_TRUE(d.changes[0].regression);
    EXPECT_EQ(d.changes[0].what,
              (std::vector<std::string>{"held → broken", "expectation \"wrong = all\" → \"wrong = none\""}));
}

TEST(DiffTest, a_racy_lab_inside_the_old_interval_is_no_change_and_outside_it_is_changed) {
    // 3/10: Wilson 95% interval 10.8–60.3%.
    const RunDigest old_run = run_of({lab("08c-s4a", "held", 3, 10, false)});
    EXPECT_TRUE(diff_digests(old_run, run_of({lab("08c-s4a", "held", 5, 10, false)})).no_change());
    EXPECT_TRUE(diff_digests(old_run, run_of({lab("08c-s4a", "held", 2, 10, false)})).no_change());

    // 8/10 is outside; the lab still holds: changed, not a regression.
    const DigestDiff up = diff_digests(old_run, run_of({lab("08c-s4a", "held", 8, 10, false)}));
    ASSERT_EQ(up.changes.size(), 1u);
    EXPECT_FALSE(up.changes[0].regression);
    EXPECT_EQ(diff_text(up), "changed     08c-s4a (real): wrong 3/10 → 8/10 (outside 10.8–60.3%)\n"
                             "1 of 1 lab(s) compared changed, 0 missing from NEW, 0 new; 0 regression(s)\n");

    // Outside, and no longer held: a regression.
    const DigestDiff down = diff_digests(old_run, run_of({lab("08c-s4a", "broken", 0, 10, false)}));
    ASSERT_EQ(down.changes.size(), 1u);
    EXPECT_TRUE(down.changes[0].regression);
}

TEST(DiffTest, a_deterministic_lab_changes_with_any_count_but_not_with_the_same_rate_over_more_trials) {
    const RunDigest old_run = run_of({lab("08b-s1", "held", 0, 10)});
    // 1/10 lies inside 0/10's interval (0–27.8%), but the lab says none: changed.
    const DigestDiff d = diff_digests(old_run, run_of({lab("08b-s1", "held", 1, 10)}));
    ASSERT_EQ(d.changes.size(), 1u);
    EXPECT_EQ(d.changes[0].what, (std::vector<std::string>{"wrong 0/10 → 1/10 (a deterministic lab: any change counts)"}));
    EXPECT_FALSE(d.changes[0].regression);
    EXPECT_TRUE(diff_digests(old_run, run_of({lab("08b-s1", "held", 0, 20)})).no_change());
    EXPECT_TRUE(diff_digests(run_of({lab("a", "held", 10, 10)}), run_of({lab("a", "held", 20, 20)})).no_change());
}

TEST(DiffTest, a_new_accounting_anomaly_is_a_regression_and_a_grown_one_is_not) {
    LabDigest old_lab = lab("08h-claim", "held", 0, 10);
    old_lab.accounting["redelivered"] = 2;
    LabDigest new_lab = old_lab;
    new_lab.accounting["redelivered"] = 5;
    new_lab.accounting["lost"] = 1;
    const DigestDiff d = diff_digests(run_of({old_lab}), run_of({new_lab}));
    ASSERT_EQ(d.changes.size(), 1u);
    EXPECT_TRUE(d.changes[0].regression);
    EXPECT_EQ(d.changes[0].what, (std::vector<std::string>{"new accounting anomaly: lost 0 → 1"}));

    // A lab without accounting (idempotency, sessions) has nothing to compare.
    LabDigest idem = lab("idem-race", "held", 0, 1);
    idem.accounting.clear();
    LabDigest idem_now = idem;
    idem_now.accounting = {{"lost", 3}};
    EXPECT_TRUE(diff_digests(run_of({idem}), run_of({idem_now})).no_change());
}

TEST(DiffTest, a_new_anomaly_the_lab_bounds_is_listed_but_its_verdict_judges_it) {
    // A shard failover may redeliver an entry whose XACK died with the master: the lab bounds
    // "duplicated", so one run with 0 and the next with 1 is a change, not a regression.
    LabDigest old_lab = lab("s2-shard-failover", "held", 0, 2);
    old_lab.bounded = {"duplicated"};
    LabDigest new_lab = old_lab;
    new_lab.accounting["duplicated"] = 1;
    new_lab.accounting["lost"] = 1;
    const DigestDiff d = diff_digests(run_of({old_lab}), run_of({new_lab}));
    ASSERT_EQ(d.changes.size(), 1u);
    EXPECT_EQ(d.changes[0].what, (std::vector<std::string>{"new accounting anomaly: duplicated 0 → 1 (within the lab's own bound)",
                                                           "new accounting anomaly: lost 0 → 1"}));
    EXPECT_TRUE(d.changes[0].regression);  // lost is not bounded

    new_lab.accounting["lost"] = 0;
    const DigestDiff bounded_only = diff_digests(run_of({old_lab}), run_of({new_lab}));
    ASSERT_EQ(bounded_only.changes.size(), 1u);
    EXPECT_FALSE(bounded_only.changes[0].regression);
    EXPECT_EQ(bounded_only.regressions, 0);

    // The bound is the new run's: a lab that has dropped it is judged by the rule again.
    new_lab.bounded.clear();
    EXPECT_EQ(diff_digests(run_of({old_lab}), run_of({new_lab})).regressions, 1);
    // And it survives the digest file.
    EXPECT_EQ(digest_from_json(digest_to_json(run_of({old_lab}))).labs.at(0).bounded, old_lab.bounded);
}

TEST(DiffTest, a_new_anomaly_the_lab_says_may_appear_is_listed_and_no_regression) {
    // A failover at load redelivers the few entries in flight when the replica stopped, often none:
    // the lab says so ("may_appear") rather than bound a count its mechanism does not fix.
    LabDigest old_lab = lab("load-failover-s3-s5", "held", 1, 1);
    LabDigest new_lab = old_lab;
    new_lab.accounting["redelivered"] = 3;
    EXPECT_EQ(diff_digests(run_of({old_lab}), run_of({new_lab})).regressions, 1);
    new_lab.may_appear = {"redelivered"};
    const DigestDiff d = diff_digests(run_of({old_lab}), run_of({new_lab}));
    ASSERT_EQ(d.changes.size(), 1u);
    EXPECT_EQ(d.changes[0].what,
              (std::vector<std::string>{"new accounting anomaly: redelivered 0 → 3 (the lab says it may appear)"}));
    EXPECT_EQ(d.regressions, 0);
    EXPECT_EQ(digest_from_json(digest_to_json(run_of({new_lab}))).labs.at(0).may_appear, new_lab.may_appear);
}

TEST(DiffTest, broken_to_held_and_skipped_and_ran_are_listed_not_regressions) {
    LabDigest skipped = lab("08c-delex", "skipped", 0, 0);
    skipped.skip_reason = "needs Redis 8.4 (DELEX)";
    const DigestDiff d = diff_digests(run_of({lab("a", "broken", 0, 10), lab("b", "held", 1, 10), skipped}),
                                      run_of({lab("a", "held", 10, 10), [&] {
                                                  LabDigest s = skipped;
                                                  s.id = "b";
                                                  return s;
                                              }(),
                                              lab("08c-delex", "held", 0, 10)}));
    ASSERT_EQ(d.changes.size(), 3u);
    EXPECT_EQ(d.changes[0].what[0], "broken → held");
    EXPECT_EQ(d.changes[1].what, (std::vector<std::string>{"held → skipped (needs Redis 8.4 (DELEX))"}));
    EXPECT_EQ(d.changes[2].what, (std::vector<std::string>{"skipped → held"}));
    EXPECT_EQ(d.regressions, 0);
}

TEST(DiffTest, missing_and_new_labs_are_listed_and_missing_is_a_regression_only_when_strict) {
    const RunDigest old_run = run_of({lab("a", "held", 10, 10), lab("gone", "held", 0, 10)});
    const RunDigest new_run = run_of({lab("a", "held", 10, 10), lab("fresh", "held", 0, 10)});
    const DigestDiff d = diff_digests(old_run, new_run);
    EXPECT_EQ(diff_text(d), "new         fresh (real): not in OLD; held (0/10 wrong)\n"
                            "missing     gone (real): in OLD (held), not in NEW\n"
                            "0 of 1 lab(s) compared changed, 1 missing from NEW, 1 new; 0 regression(s)\n");
    const DigestDiff strict = diff_digests(old_run, new_run, true);
    EXPECT_EQ(strict.regressions, 1);
}

TEST(DiffTest, labs_are_keyed_by_id_mutant_and_backend) {
    LabDigest sim = lab("08a-baseline", "held", 500, 1000);
    sim.backend = "sim";
    LabDigest mutant = lab("08a-baseline", "broken", 0, 10);
    mutant.mutant = "no-race";
    const RunDigest old_run = run_of({lab("08a-baseline", "held", 10, 10), sim, mutant});
    EXPECT_TRUE(diff_digests(old_run, old_run).no_change());
    LabDigest sim_now = sim;
    sim_now.verdict = "broken";
    const DigestDiff d = diff_digests(old_run, run_of({lab("08a-baseline", "held", 10, 10), sim_now, mutant}));
    ASSERT_EQ(d.changes.size(), 1u);
    EXPECT_EQ(d.changes[0].lab, "08a-baseline (sim)");
    EXPECT_EQ(mutant.name(), "08a-baseline [no-race] (real)");
}

TEST(DiffTest, the_digest_reads_back_as_written) {
    LabDigest a = lab("08a-baseline", "held", 10, 10);
    a.failure = "";
    LabDigest s = lab("08d-cas-by-hand", "skipped", 0, 0);
    s.accounting.clear();
    s.skip_reason = "scripted sessions run on the real backend only";
    s.backend = "sim";
    s.mutant = "m";
    RunDigest d = run_of({a, s});
    d.seed = 42;
    d.redis_version = "7.0.15";
    const std::string text = digest_text(d);
    const nlohmann::json j = nlohmann::json::parse(text);  // valid JSON, one lab a line
    EXPECT_EQ(j.at("format"), k_digest_format);
    size_t lab_lines = 0;
    for (size_t at = text.find("\n  {\""); at != std::string::npos; at = text.find("\n  {\"", at + 1)) ++lab_lines;
    EXPECT_EQ(lab_lines, 2u) << text;
    EXPECT_EQ(digest_to_json(digest_from_json(j)), digest_to_json(d));
    EXPECT_TRUE(diff_digests(d, digest_from_json(j)).no_change());
}

TEST(DiffTest, a_digest_with_a_missing_field_says_where) {
    nlohmann::json j = digest_to_json(run_of({lab("a", "held", 1, 2)}));
    j["lab_digests"][0].erase("verdict");
    try {
        digest_from_json(j);
        FAIL();
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("/lab_digests/0: \"verdict\" is missing"), std::string::npos) << e.what();
    }
}

struct Captured {
    int code = -1;
    std::string out;
    std::string err;
};

// The command in process, stdout and stderr captured.
template <class F>
Captured captured(F&& f) {
    std::ostringstream out, err;
    auto* old_out = std::cout.rdbuf(out.rdbuf());
    auto* old_err = std::cerr.rdbuf(err.rdbuf());
    Captured c;
    c.code = f();
    std::cout.rdbuf(old_out);
    std::cerr.rdbuf(old_err);
    c.out = out.str();
    c.err = err.str();
    return c;
}

Captured diff(const std::vector<std::string>& paths, const std::string& save = {}) {
    DiffOptions o;
    o.paths = paths;
    o.save_reference = save;
    return captured([&] { return run_diff(o); });
}

class DiffCommand : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / fmt::format("relab-diff-test-{}", getpid());
        fs::remove_all(m_dir);
        fs::create_directories(m_dir);
    }
    void TearDown() override {
        fs::remove_all(m_dir);
        std::signal(SIGINT, SIG_DFL);  // run_run installs relab's handlers
        std::signal(SIGTERM, SIG_DFL);
    }
    static fs::path reference() { return fs::path(RELAB_SOURCE_DIR) / "reports" / "reference"; }

    // `relab run FILE --backend sim --trials 40 --seed 11 --out-dir DIR`
    Captured run_sim(const fs::path& file, const fs::path& out_dir) {
        RunOptions o;
        o.labs = {file.string()};
        fs::create_directories(m_dir / "no-scenarios");
        o.scenarios_dir = (m_dir / "no-scenarios").string();
        o.backend = "sim";
        o.trials = 40;
        o.seed = 11;
        o.out_dir = out_dir.string();
        return captured([&] { return run_run(o); });
    }

    fs::path m_dir;
};

TEST_F(DiffCommand, the_committed_reference_against_itself_is_no_change) {
    ASSERT_TRUE(fs::is_regular_file(reference() / "reference.json")) << "regenerate reports/reference (docs/reports.md)";
    const Captured c = diff({reference().string(), reference().string()});
    EXPECT_EQ(c.code, 0) << c.err;
    EXPECT_EQ(c.out.rfind("no change: ", 0), 0u) << c.out;
    // It is small: a digest, not the histories.
    EXPECT_LT(fs::file_size(reference() / "reference.json"), 100'000u);
}

TEST_F(DiffCommand, a_copy_with_one_lab_edited_to_broken_exits_1_naming_it) {
    std::ifstream in(reference() / "reference.json");
    nlohmann::json j = nlohmann::json::parse(in);
    auto& labs = j.at("lab_digests");
    size_t i = 0;
    while (i < labs.size() && labs[i].at("verdict") != "held") ++i;
    ASSERT_LT(i, labs.size());
    labs[i]["verdict"] = "broken";
    const std::string id = labs[i].at("id");
    fs::create_directories(m_dir / "edited");
    std::ofstream(m_dir / "edited" / "reference.json") << j.dump(1);
    const Captured c = diff({reference().string(), (m_dir / "edited").string()});
    EXPECT_EQ(c.code, 1) << c.err;
    EXPECT_NE(c.out.find("regression  " + id + " ("), std::string::npos) << c.out;
    EXPECT_NE(c.out.find("held → broken"), std::string::npos) << c.out;
    EXPECT_NE(c.out.find("1 regression(s)"), std::string::npos) << c.out;
}

TEST_F(DiffCommand, bad_input_exits_2_saying_what_to_do) {
    Captured c = diff({(m_dir / "nowhere").string(), reference().string()});
    EXPECT_EQ(c.code, 2);
    EXPECT_NE(c.err.find("does not exist"), std::string::npos) << c.err;
    std::ofstream(m_dir / "bad.json") << "{not json";
    c = diff({(m_dir / "bad.json").string(), reference().string()});
    EXPECT_EQ(c.code, 2);
    EXPECT_NE(c.err.find("not JSON"), std::string::npos) << c.err;
    fs::create_directories(m_dir / "empty");
    c = diff({(m_dir / "empty").string(), reference().string()});
    EXPECT_EQ(c.code, 2);
    EXPECT_NE(c.err.find("run the labs first"), std::string::npos) << c.err;
    c = diff({reference().string()});
    EXPECT_EQ(c.code, 2);
    EXPECT_NE(c.err.find("give OLD and NEW"), std::string::npos) << c.err;
}

// The done-when on the simulator: a run saved as the reference, the same run again is no
// change; the lab run again with an edited expectation is named, exit 1.
TEST_F(DiffCommand, a_run_folder_is_no_change_against_its_saved_reference_and_an_edited_expectation_is_named) {
    const fs::path scenario = fs::path(RELAB_SOURCE_DIR) / "scenarios" / "08a-baseline.json";
    ASSERT_EQ(run_sim(scenario, m_dir / "out").code, 0);
    // A lab test's run beside it is left out.
    fs::copy_file(m_dir / "out" / "08a-baseline.sim.json", m_dir / "out" / "test-something-1.json");

    Captured c = diff({(m_dir / "out").string()}, (m_dir / "reference").string());
    ASSERT_EQ(c.code, 0) << c.err;
    EXPECT_NE(c.err.find("1 lab(s), 1 held, 0 broken, 0 skipped"), std::string::npos) << c.err;
    const nlohmann::json saved = nlohmann::json::parse(std::ifstream(m_dir / "reference" / "reference.json"));
    ASSERT_EQ(saved.at("lab_digests").size(), 1u);
    EXPECT_EQ(saved.at("lab_digests")[0].at("backend"), "sim");
    EXPECT_TRUE(saved.at("lab_digests")[0].contains("accounting"));

    c = diff({(m_dir / "reference").string(), (m_dir / "out").string()});
    EXPECT_EQ(c.code, 0) << c.out << c.err;
    EXPECT_EQ(c.out, "no change: 1 lab(s) compared\n");
    EXPECT_NE(c.err.find("left out 1 test-*.json"), std::string::npos) << c.err;

    // The expectation edited: 08a's two consumers go wrong in every trial, the file now says none.
    nlohmann::json edited = nlohmann::json::parse(std::ifstream(scenario), nullptr, true, /*ignore_comments=*/true);
    edited["expect"]["wrong"] = "none";
    std::ofstream(m_dir / "08a-baseline.json") << edited.dump(2);
    ASSERT_EQ(run_sim(m_dir / "08a-baseline.json", m_dir / "out").code, 1);
    c = diff({(m_dir / "reference").string(), (m_dir / "out").string()});
    EXPECT_EQ(c.code, 1) << c.out << c.err;
    EXPECT_NE(c.out.find("regression  08a-baseline (sim): held → broken"), std::string::npos) << c.out;
}

}  // namespace diff_test
}  // namespace relab
