// `relab run`'s exit status and what it says about skipped labs, end to end on the simulator (no
// server): a lab the backend cannot run is skipped, does not fail the run, and is said on stderr,
// in the text report, in the JSON and, through `relab report`, in junit.xml and summary.md.
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "ports/seed_text.h"
#include "report/reporter.h"
#include "xml_tree.h"

namespace relab {
namespace run_exit_status_test {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

struct Captured {
    int code = -1;
    std::string out;
    std::string err;
};

class RunExitStatus : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / fmt::format("relab-run-exit-test-{}", getpid());
        fs::remove_all(m_dir);
        fs::create_directories(m_dir / "no-scenarios");
        fs::create_directories(m_dir / "out");
    }
    void TearDown() override {
        fs::remove_all(m_dir);
        // run_run installs relab's SIGINT/SIGTERM handlers; the test binary gets its own back.
        std::signal(SIGINT, SIG_DFL);
        std::signal(SIGTERM, SIG_DFL);
    }

    static fs::path scenario(const std::string& name) { return fs::path(RELAB_SOURCE_DIR) / "scenarios" / name; }

    // `relab run FILES --backend sim --trials 40 --out-dir out`, with stdout and stderr captured.
    Captured run(const std::vector<std::string>& files, const std::function<void(RunOptions&)>& tweak = {}) {
        RunOptions o;
        o.labs = files;
        o.scenarios_dir = (m_dir / "no-scenarios").string();  // only the files given
        o.backend = "sim";
        o.trials = 40;
        o.seed = 11;
        o.out_dir = (m_dir / "out").string();
        if (tweak) tweak(o);
        std::ostringstream out, err;
        auto* old_out = std::cout.rdbuf(out.rdbuf());
        auto* old_err = std::cerr.rdbuf(err.rdbuf());
        Captured c;
        c.code = run_run(o);
        std::cout.rdbuf(old_out);
        std::cerr.rdbuf(old_err);
        c.out = out.str();
        c.err = err.str();
        return c;
    }

    int report() {
        ReportOptions o;
        o.dir = (m_dir / "out").string();
        std::ostringstream err;
        auto* old_err = std::cerr.rdbuf(err.rdbuf());
        const int code = run_report(o);
        std::cerr.rdbuf(old_err);
        return code;
    }

    fs::path m_dir;
};

TEST_F(RunExitStatus, a_skipped_lab_does_not_fail_the_run_and_is_said_everywhere) {
    const Captured c = run({scenario("08c-s4a-lock.json").string(), scenario("08d-b-cas-by-hand.json").string()});
    EXPECT_EQ(c.code, 0) << c.err;
    EXPECT_NE(c.err.find("relab: 2 lab(s), 1 held, 0 broken, 1 skipped\n"), std::string::npos) << c.err;
    EXPECT_NE(c.err.find("  SKIPPED 08d-cas-by-hand: scripted sessions run on the real backend only"), std::string::npos)
        << c.err;
    EXPECT_EQ(c.err.find("BROKEN"), std::string::npos) << c.err;
    EXPECT_NE(c.out.find("skipped: scripted sessions run on the real backend only"), std::string::npos) << c.out;

    // A simulated run's files carry .sim: a real run's in the same folder are not replaced.
    const fs::path out = m_dir / "out";
    for (const char* name : {"08c-lock.sim.json", "08c-lock.sim.txt", "08d-cas.sim.json", "08d-cas.sim.txt"})
        EXPECT_TRUE(fs::is_regular_file(out / name)) << name;
    EXPECT_FALSE(fs::exists(out / "08c-lock.json"));

    // The JSON says skipped, with the reason, and is not a broken lab.
    const nlohmann::json skipped = nlohmann::json::parse(slurp(out / "08d-cas.sim.json"));
    EXPECT_EQ(skipped.at("summary").at("skipped"), 1);
    EXPECT_EQ(skipped.at("summary").at("broken"), 0);
    EXPECT_TRUE(skipped.at("labs").at(0).at("skipped").get<bool>());
    EXPECT_TRUE(skipped.at("labs").at(0).at("summary").at("skipped").get<bool>());
    EXPECT_FALSE(skipped.at("labs").at(0).at("summary").at("held").get<bool>());
    EXPECT_EQ(skipped.at("labs").at(0).at("summary").at("verdict"), "skipped");
    EXPECT_EQ(skipped.at("summary").at("held"), 0);
    EXPECT_EQ(skipped.at("labs").at(0).at("backend"), "sim");

    // The simulated lab's JSON reads back with its rate, interval and failing seeds.
    const RunReport lock = run_from_json(nlohmann::json::parse(slurp(out / "08c-lock.sim.json")));
    ASSERT_EQ(lock.labs.size(), 1u);
    const LabResult& lab = lock.labs[0];
    EXPECT_EQ(lab.backend, "sim");
    EXPECT_EQ(lab.total, 40);
    ASSERT_EQ(lab.trials.size(), 40u);
    EXPECT_DOUBLE_EQ(lab.wrong_rate, lab.wrong / 40.0);
    EXPECT_LE(lab.wrong_rate_low, lab.wrong_rate);
    EXPECT_GE(lab.wrong_rate_high, lab.wrong_rate);
    std::vector<uint64_t> first_wrong;
    for (const auto& t : lab.trials)
        if (t.wrong && first_wrong.size() < 5) first_wrong.push_back(t.seed);
    EXPECT_EQ(lab.failing_seeds, first_wrong);
    EXPECT_EQ(slurp(out / "08c-lock.sim.txt").find("wrong rate ") != std::string::npos, true);

    // relab report: the skip is a <skipped> with its reason, the counts match, nothing failed.
    ASSERT_EQ(report(), 0);
    const test::XmlElement root = test::parse_xml(slurp(out / "junit.xml"));
    const test::XmlElement& suite = *root.all("testsuite")[0];
    EXPECT_EQ(suite.attr("tests"), "2");
    EXPECT_EQ(suite.attr("failures"), "0");
    EXPECT_EQ(suite.attr("skipped"), "1");
    const auto cases = suite.all("testcase");
    ASSERT_EQ(cases.size(), 2u);
    EXPECT_EQ(cases[1]->attr("name"), "08d-cas-by-hand");
    EXPECT_EQ(cases[1]->attr("classname"), "sim.08d-cas");
    ASSERT_EQ(cases[1]->all("skipped").size(), 1u);
    EXPECT_EQ(cases[1]->all("skipped")[0]->attr("message"),
              "scripted sessions run on the real backend only (the simulator runs workload labs)");
    EXPECT_TRUE(cases[0]->all("skipped").empty());
    EXPECT_TRUE(cases[0]->all("failure").empty());
    const std::string md = slurp(out / "summary.md");
    EXPECT_EQ(md.rfind("## relab: 2 labs — 1 held, 0 broken, 1 skipped\n", 0), 0u) << md;
    EXPECT_NE(md.find(fmt::format("`relab run 08c-s4a --backend sim --replay {}`",
                                  lab.failing_seeds.empty() ? std::string("?") : seed_text(lab.failing_seeds[0]))),
              std::string::npos)
        << md;
}

TEST_F(RunExitStatus, a_broken_lab_fails_the_run_beside_a_skipped_one) {
    // 08a-baseline's two consumers always overwrite paid: expecting no wrong trial breaks.
    nlohmann::json s = nlohmann::json::parse(slurp(scenario("08a-baseline.json")), nullptr, true, true);
    s["id"] = "08a-expect-none";
    s["expect"] = {{"wrong", "none"}};
    const fs::path broken = m_dir / "08a-expect-none.json";
    std::ofstream(broken) << s.dump(2);

    const Captured c = run({broken.string(), scenario("08d-b-cas-by-hand.json").string()});
    EXPECT_EQ(c.code, 1) << c.err;
    EXPECT_NE(c.err.find("relab: 2 lab(s), 0 held, 1 broken, 1 skipped\n"), std::string::npos) << c.err;
    EXPECT_NE(c.err.find("  BROKEN 08a-expect-none: "), std::string::npos) << c.err;
    EXPECT_NE(c.err.find("  SKIPPED 08d-cas-by-hand: "), std::string::npos) << c.err;
}

TEST_F(RunExitStatus, a_json_path_in_a_missing_folder_fails_before_any_lab_runs) {
    const std::string path = (m_dir / "no-such-folder" / "run.json").string();
    const Captured c = run({scenario("08c-s4a-lock.json").string()}, [&](RunOptions& o) {
        o.out_dir.clear();
        o.json_path = path;
    });
    EXPECT_EQ(c.code, 2) << c.err;
    EXPECT_EQ(c.err, fmt::format("relab: --json {}: the folder {} does not exist; create it or give another path\n", path,
                                 (m_dir / "no-such-folder").string()));
    EXPECT_EQ(c.out, "");  // no lab ran
}

TEST_F(RunExitStatus, a_json_file_that_cannot_be_written_whole_fails_the_run) {
    // /dev/full takes the open and refuses every byte with ENOSPC, as a full disk does.
    const Captured c = run({scenario("08c-s4a-lock.json").string()}, [](RunOptions& o) {
        o.out_dir.clear();
        o.json_path = "/dev/full";
    });
    EXPECT_EQ(c.code, 2) << c.err;
    EXPECT_NE(c.err.find("relab: 1 lab(s), 1 held, 0 broken, 0 skipped\n"), std::string::npos) << c.err;
    EXPECT_NE(c.err.find("relab: --json: could not write all of /dev/full: No space left on device; free space or give "
                         "another path\n"),
              std::string::npos)
        << c.err;
}

TEST_F(RunExitStatus, an_out_dir_that_cannot_be_created_fails_the_run) {
    const Captured c = run({scenario("08c-s4a-lock.json").string()},
                           [](RunOptions& o) { o.out_dir = "/proc/relab-no-such-dir"; });
    EXPECT_EQ(c.code, 2) << c.err;
    EXPECT_EQ(c.err.rfind("relab: --out-dir /proc/relab-no-such-dir: cannot create it: ", 0), 0u) << c.err;
    EXPECT_NE(c.err.find("; give a folder you can write\n"), std::string::npos) << c.err;
}

// A strategy that strands an entry (a consumer killed mid-job, no claim, no pending-first read) is a
// result: the trial ends once nothing moves, the lab breaks on `lost: 0` and `pending: 0` (exit 1,
// not a harness failure's 2), and the report names the stranded entry.
TEST_F(RunExitStatus, an_entry_stranded_in_the_pel_breaks_the_lab_and_is_named) {
    const Captured c = run({scenario("08h-claim-plain.json").string()}, [](RunOptions& o) {
        o.mutant = "no-claim";
        o.trials = 2;
    });
    EXPECT_EQ(c.code, 1) << c.err;
    EXPECT_EQ(c.err.find("harness failure"), std::string::npos) << c.err;
    EXPECT_NE(c.err.find("BROKEN 08h-claim-plain: trial 1: lost = 0 (measured 1)"), std::string::npos) << c.err;
    EXPECT_NE(c.err.find("BROKEN 08h-claim-plain: trial 1: pending = 0 (measured 1)"), std::string::npos) << c.err;

    const RunReport report = run_from_json(nlohmann::json::parse(slurp(m_dir / "out" / "08h-faults.sim.json")));
    ASSERT_EQ(report.labs.size(), 1u);
    const TrialOutcome& t = report.labs[0].trials.at(0);
    // The entry left pending is the one the killed consumer received: created's, delivered once.
    std::string created_entry;
    for (const HistoryRecord& r : t.history)
        if (r.op == Op::receive && record_event(r) && record_event(r)->type == "created")
            created_entry = std::string(record_entry(r));
    ASSERT_FALSE(created_entry.empty());
    EXPECT_EQ(t.accounting.pending_examples, std::vector<std::string>{created_entry});
    EXPECT_EQ(t.accounting.never_delivered, 0);
    const std::string text = slurp(m_dir / "out" / "08h-faults.sim.txt");
    EXPECT_NE(text.find("trial 1: lost 1: " + created_entry + "; pending (received, never acknowledged) 1: " +
                        created_entry),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("nothing moved for 10000 ms (stream.quiet_ms)"), std::string::npos) << text;
}

}  // namespace run_exit_status_test
}  // namespace relab
