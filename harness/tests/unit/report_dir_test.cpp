#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "report/compare/report_dir.h"
#include "report/reporter.h"
#include "report/comparison_table.h"
#include "report_fixture.h"

namespace relab {
namespace report_dir_test {

namespace fs = std::filesystem;

RunReport run_at(const std::string& started_at, std::vector<LabResult> labs) {
    RunReport run;
    run.started_at = started_at;
    run.relab_commit = "commit-" + started_at;
    run.labs = std::move(labs);
    return run;
}

LabResult lab(const std::string& id, int wrong) {
    LabResult l;
    l.scenario.id = id;
    l.wrong = wrong;
    return l;
}

std::vector<std::pair<std::string, int>> ids_and_wrong(const RunReport& run) {
    std::vector<std::pair<std::string, int>> out;
    for (const auto& l : run.labs) out.emplace_back(l.scenario.id, l.wrong);
    return out;
}

TEST(ReportDirTest, a_lab_run_twice_keeps_its_latest_result_at_its_first_place) {
    const RunReport merged = merge_runs({run_at("2026-01-02T00:00:00Z", {lab("a", 1), lab("b", 1)}),
                                         run_at("2026-01-01T00:00:00Z", {lab("b", 2), lab("c", 2)}),
                                         run_at("2026-01-03T00:00:00Z", {lab("c", 3)})});
    EXPECT_EQ(ids_and_wrong(merged), (std::vector<std::pair<std::string, int>>{{"a", 1}, {"b", 1}, {"c", 3}}));
    EXPECT_EQ(merged.relab_commit, "commit-2026-01-03T00:00:00Z");
    // Same start time: the later run wins.
    const RunReport tie = merge_runs({run_at("t", {lab("a", 1)}), run_at("t", {lab("a", 2)})});
    EXPECT_EQ(ids_and_wrong(tie), (std::vector<std::pair<std::string, int>>{{"a", 2}}));
    EXPECT_TRUE(merge_runs({}).labs.empty());
}

TEST(ReportDirTest, a_labs_real_and_simulated_results_are_both_kept) {
    LabResult real = lab("08c-s4a", 2), sim = lab("08c-s4a", 474), sim_again = lab("08c-s4a", 470);
    sim.backend = sim_again.backend = "sim";
    const RunReport merged = merge_runs({run_at("2026-01-01T00:00:00Z", {real}), run_at("2026-01-02T00:00:00Z", {sim}),
                                         run_at("2026-01-03T00:00:00Z", {sim_again})});
    ASSERT_EQ(merged.labs.size(), 2u);
    EXPECT_EQ(merged.labs[0].backend, "real");
    EXPECT_EQ(merged.labs[0].wrong, 2);
    EXPECT_EQ(merged.labs[1].backend, "sim");
    EXPECT_EQ(merged.labs[1].wrong, 470);  // the latest simulated run
}

class ReportDirFiles : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / fmt::format("relab-report-dir-test-{}", getpid());
        fs::create_directories(m_dir);
    }
    void TearDown() override { fs::remove_all(m_dir); }
    void write(const std::string& name, const std::string& text) { std::ofstream(m_dir / name) << text; }
    fs::path m_dir;
};

TEST_F(ReportDirFiles, reads_every_run_report_in_name_order_and_ignores_other_json) {
    RunReport lock;
    lock.labs = {test::lock_lab()};
    lock.started_at = "2026-11-29T20:52:59Z";
    RunReport baseline;
    baseline.labs = {test::baseline_lab()};
    baseline.started_at = "2026-11-29T20:50:00Z";
    write("08c-lock.json", run_to_json(lock).dump(2));
    write("08a-baseline.json", run_to_json(baseline).dump(2));
    write("package.json", R"({"name": "not a run"})");
    write("08a-baseline.txt", "text");
    // relab run's tables beside the labs: not runs, and not said to be ignored either.
    write("load-table.json", R"({"load_table": [], "relab_peak_rss_kb": 1})");
    write("soak-table.json", R"({"soak_table": [], "relab_peak_rss_kb": 1})");
    write("comparison-s4a-by-language.json", comparison_table_json(ComparisonTable{"s4a-by-language", {}}).dump());
    const SavedReports saved = read_report_dir(m_dir.string());
    ASSERT_EQ(saved.files.size(), 2u);
    EXPECT_EQ(fs::path(saved.files[0]).filename(), "08a-baseline.json");
    ASSERT_EQ(saved.ignored.size(), 1u);
    EXPECT_EQ(fs::path(saved.ignored[0]).filename(), "package.json");
    ASSERT_EQ(saved.run.labs.size(), 2u);
    EXPECT_EQ(saved.run.labs[0].scenario.id, "08a-baseline");
    EXPECT_EQ(saved.run.labs[1].scenario.id, "08c-s4a");
    EXPECT_EQ(saved.run.started_at, "2026-11-29T20:52:59Z");
}

TEST_F(ReportDirFiles, the_newest_result_of_a_lab_wins_by_its_microseconds_and_sequence_not_by_file_name) {
    // Both runs started within the same second; the one whose file sorts first finished later.
    auto saved_run = [](const std::string& title, int64_t finished_at_us, int sequence) {
        LabResult l = test::baseline_lab();
        l.scenario.title = title;
        l.finished_at_us = finished_at_us;
        l.sequence = sequence;
        RunReport run;
        run.started_at = "2026-11-30T10:00:00Z";
        run.started_at_us = 1'796'032'800'000'000;
        run.labs = {l};
        return run_to_json(run).dump();
    };
    write("a-run.json", saved_run("newer", 1'796'032'800'900'001, 1));
    write("b-run.json", saved_run("older", 1'796'032'800'400'000, 1));
    SavedReports saved = read_report_dir(m_dir.string());
    ASSERT_EQ(saved.run.labs.size(), 1u);
    EXPECT_EQ(saved.run.labs[0].scenario.title, "newer");

    // The same microsecond: the greater sequence number wins, again against the name order.
    write("a-run.json", saved_run("second in its run", 1'796'032'800'900'001, 2));
    write("b-run.json", saved_run("first in its run", 1'796'032'800'900'001, 1));
    saved = read_report_dir(m_dir.string());
    ASSERT_EQ(saved.run.labs.size(), 1u);
    EXPECT_EQ(saved.run.labs[0].scenario.title, "second in its run");
}

TEST_F(ReportDirFiles, a_result_without_microseconds_counts_as_finished_when_its_run_started) {
    // An older report (started_at to the second only) against a newer one that has microseconds.
    RunReport old_run;
    old_run.started_at = "2026-11-30T10:00:05Z";
    old_run.labs = {test::baseline_lab()};
    old_run.labs[0].scenario.title = "old format, 10:00:05";
    RunReport new_run;
    new_run.started_at = "2026-11-30T10:00:00Z";
    new_run.started_at_us = 1'796'032'800'000'000;  // 10:00:00.000000
    new_run.labs = {test::baseline_lab()};
    new_run.labs[0].scenario.title = "new format, 10:00:01.5";
    new_run.labs[0].finished_at_us = 1'796'032'801'500'000;
    write("a.json", run_to_json(old_run).dump());
    write("b.json", run_to_json(new_run).dump());
    const SavedReports saved = read_report_dir(m_dir.string());
    ASSERT_EQ(saved.run.labs.size(), 1u);
    EXPECT_EQ(saved.run.labs[0].scenario.title, "old format, 10:00:05");
    EXPECT_EQ(saved.run.started_at, "2026-11-30T10:00:05Z");  // the header of the run that started last
}

TEST_F(ReportDirFiles, a_broken_json_file_is_an_error_naming_it) {
    write("08a-baseline.json", "{\"labs\": [");
    try {
        read_report_dir(m_dir.string());
        FAIL() << "no error";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("08a-baseline.json: not JSON"), std::string::npos) << e.what();
    }
    write("08a-baseline.json", R"({"labs": [{"id": 7}]})");
    try {
        read_report_dir(m_dir.string());
        FAIL() << "no error";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("08a-baseline.json: JSON report: at /labs/0/id"), std::string::npos)
            << e.what();
    }
    EXPECT_THROW(read_report_dir((m_dir / "missing").string()), std::runtime_error);
}

}  // namespace report_dir_test
}  // namespace relab
