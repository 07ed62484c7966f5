// `relab report` recomputes each lab's verdict from the trials and the scenario saved in its JSON
// file, shows the recomputed one, and names a file whose stored verdict disagrees.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cli/commands.h"
#include "report/compare/report_dir.h"
#include "report/reporter.h"
#include "report/compare/verdict_recheck.h"
#include "report_fixture.h"
#include "scenario/loader/loader.h"
#include "xml_tree.h"

namespace relab {
namespace verdict_recheck_test {

namespace fs = std::filesystem;

// A two-consumer workload whose expectation is that every trial goes wrong; its source is what a
// run embeds in its JSON report, so `relab report` can judge the saved trials by it again.
Scenario every_trial_wrong_scenario() {
    return parse_scenario(R"json({
      "id": "08a-recheck", "output": "08a-recheck", "kind": "workload", "runs": 2,
      "title": "2 consumers, plain UPDATE",
      "orders": [ { "id": 42, "expected_final": "paid" } ],
      "events": [ { "order": 42, "type": "created", "version": 1 }, { "order": 42, "type": "paid", "version": 2 } ],
      "job_cost_ms": { "created": 800, "paid": 50 },
      "consumers": 2,
      "expect": { "wrong": "all" }
    })json",
                          "verdict_recheck_test");
}

// The fixture's baseline trials (both wrong: created overwrote paid) under that scenario.
LabResult baseline_under(const Scenario& s) {
    LabResult lab = test::baseline_lab();
    const std::string id = lab.scenario.id;
    lab.scenario = s;
    lab.scenario.id = id;
    lab.scenario.output = "08a-baseline";
    return lab;
}

TEST(VerdictRecheckTest, a_stored_verdict_that_its_trials_confirm_gets_no_note) {
    LabResult lab = baseline_under(every_trial_wrong_scenario());
    lab.held = true;
    EXPECT_EQ(recheck_verdict(lab), "");
    EXPECT_TRUE(lab.held);
    EXPECT_EQ(lab.wrong, 2);
    EXPECT_EQ(lab.total, 2);
}

TEST(VerdictRecheckTest, a_stored_hold_that_its_trials_contradict_becomes_broken_and_is_named) {
    LabResult lab = baseline_under(every_trial_wrong_scenario());
    for (auto& t : lab.trials) {  // the trials say paid won: not one went wrong
        t.wrong = false;
        t.wrong_orders.clear();
        t.final_rows = {OrderRow{42, "paid", 2}};
    }
    lab.held = true;  // what the file claims
    lab.wrong = 2;
    const std::string note = recheck_verdict(lab);
    EXPECT_FALSE(lab.held);
    EXPECT_EQ(lab.wrong, 0);
    EXPECT_EQ(note.rfind("the file says held, but its 2 trials say broken (", 0), 0u) << note;
    EXPECT_NE(note.find("); showing broken"), std::string::npos) << note;
    EXPECT_EQ(lab.verdict_note, note);
    EXPECT_FALSE(lab.failures.empty());
}

TEST(VerdictRecheckTest, a_scenario_that_no_longer_parses_keeps_the_stored_verdict_and_says_so) {
    LabResult lab = test::baseline_lab();  // its source is a fragment: {"id", "runs", "consumers"}
    lab.held = true;
    for (auto& t : lab.trials) t.wrong = false;  // would break "wrong = all" if it were recomputed
    const std::string note = recheck_verdict(lab);
    EXPECT_TRUE(lab.held);
    EXPECT_EQ(note.rfind("verdict not recomputed: its embedded scenario does not parse any more (", 0), 0u) << note;
    EXPECT_NE(note.find("; showing the verdict the file states (held); re-run the lab to get a checked verdict"),
              std::string::npos)
        << note;
}

TEST(VerdictRecheckTest, a_skipped_lab_stays_skipped_with_no_note) {
    LabResult lab = test::skipped_lab();
    lab.held = true;  // as older reports wrote it
    EXPECT_EQ(recheck_verdict(lab), "");
    EXPECT_TRUE(lab.skipped);
    EXPECT_FALSE(lab.held);
}

// `relab report` on a folder whose one JSON file claims a hold that its trials contradict.
class ReportRecheck : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / fmt::format("relab-recheck-test-{}", getpid());
        fs::remove_all(m_dir);
        fs::create_directories(m_dir);
    }
    void TearDown() override { fs::remove_all(m_dir); }

    static std::string slurp(const fs::path& p) {
        std::ifstream in(p, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }

    int report(std::string& err) {
        ReportOptions o;
        o.dir = m_dir.string();
        std::ostringstream captured;
        auto* old_err = std::cerr.rdbuf(captured.rdbuf());
        const int code = run_report(o);
        std::cerr.rdbuf(old_err);
        err = captured.str();
        return code;
    }

    fs::path m_dir;
};

TEST_F(ReportRecheck, a_file_whose_stored_hold_its_trials_contradict_is_rendered_broken_with_the_disagreement_named) {
    // The file: expectation "wrong = all", summary held: true, but both trials ended paid (right).
    LabResult lab = baseline_under(every_trial_wrong_scenario());
    for (auto& t : lab.trials) {
        t.wrong = false;
        t.wrong_orders.clear();
        t.final_rows = {OrderRow{42, "paid", 2}};
    }
    lab.held = true;
    lab.wrong = 2;
    RunReport run;
    run.started_at = "2026-11-30T10:00:00Z";
    run.labs = {lab};
    const nlohmann::json j = run_to_json(run);
    ASSERT_EQ(j.at("labs").at(0).at("summary").at("held"), true);  // the lie is in the file
    const fs::path file = m_dir / "08a-baseline.json";
    std::ofstream(file) << j.dump(2);

    std::string err;
    EXPECT_EQ(report(err), 1) << err;  // a broken lab is shown: relab report fails
    EXPECT_NE(err.find("relab report: " + file.string() +
                       ": lab 08a-baseline (real): the file says held, but its 2 trials say broken ("),
              std::string::npos)
        << err;
    EXPECT_NE(err.find("relab report: 1 lab(s) from 1 file(s): 0 held, 1 broken, 0 skipped"), std::string::npos) << err;

    const std::string md = slurp(m_dir / "summary.md");
    EXPECT_EQ(md.rfind("## relab: 1 lab — 0 held, 1 broken, 0 skipped\n", 0), 0u) << md;
    EXPECT_NE(md.find("| 0/2 | wrong = all | ❌ **BROKEN** ⚠️ see note |\n"), std::string::npos) << md;
    EXPECT_NE(md.find("\n### Verdict notes\n\n- ⚠️ `08a-baseline` (real): the file says held, but its 2 trials say broken ("),
              std::string::npos)
        << md;
    EXPECT_NE(md.find("\n### Broken expectations\n\n- `08a-baseline`: "), std::string::npos) << md;

    const std::string html = slurp(m_dir / "index.html");
    EXPECT_NE(html.find("<section class=\"lab broken\" id=\"lab-08a-baseline\">"), std::string::npos);
    EXPECT_NE(html.find("<p class=\"verdict-note\">⚠ the file says held, but its 2 trials say broken ("), std::string::npos);

    const test::XmlElement root = test::parse_xml(slurp(m_dir / "junit.xml"));
    const auto cases = root.all("testcase");
    ASSERT_EQ(cases.size(), 1u);
    ASSERT_EQ(cases[0]->all("failure").size(), 1u);
    EXPECT_EQ(root.all("testsuite")[0]->attr("failures"), "1");
}

TEST_F(ReportRecheck, a_confirmed_file_renders_without_a_note_and_exits_0) {
    LabResult lab = baseline_under(every_trial_wrong_scenario());
    lab.held = true;
    RunReport run;
    run.labs = {lab};
    std::ofstream(m_dir / "08a-baseline.json") << run_to_json(run).dump(2);
    std::string err;
    EXPECT_EQ(report(err), 0) << err;
    EXPECT_EQ(err.find("the file says"), std::string::npos) << err;
    const std::string md = slurp(m_dir / "summary.md");
    EXPECT_NE(md.find("| 2/2 | wrong = all | ✅ held |\n"), std::string::npos) << md;
    EXPECT_EQ(md.find("Verdict notes"), std::string::npos) << md;
    EXPECT_EQ(slurp(m_dir / "index.html").find("<p class=\"verdict-note\">"), std::string::npos);
}

}  // namespace verdict_recheck_test
}  // namespace relab
