// The example labs whose roles are PHP and Python programs (scenarios/examples, docs/your-code.md),
// one trial each: the lab holds, its mutant breaks, and what relab observed from outside is in the
// history. Where the interpreter or its clients are not installed relab skips the lab and so does
// the test (`./run_labs.sh examples` installs them).
#include <unistd.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "relab_cli.h"

namespace relab::exec_examples_test {

namespace fs = std::filesystem;
using nlohmann::json;
using relab::test::CiReport;
using relab::test::lab_of;
using relab::test::RelabRun;
using relab::test::run_relab;

class ExecExamplesTest : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / fmt::format("relab-exec-examples-test-{}", getpid());
        fs::create_directories(m_dir / "tmp");
    }
    void TearDown() override { fs::remove_all(m_dir); }

    // `relab run ID ARGS --runs 1`; the lab's JSON, or a skip of the test when relab skipped the lab.
    json run(const std::string& id, const std::string& args, CiReport ci) {
        const std::string scenarios = std::string(RELAB_SOURCE_DIR) + "/scenarios";
        const RelabRun r = run_relab(m_dir, fmt::format("{} --scenarios {} --runs 1 --quiet {}", id, scenarios, args), ci);
        EXPECT_LE(r.exit_code, 1) << r.out << r.err;
        if (r.report.is_null()) {
            ADD_FAILURE() << "no report: " << r.err;
            return json();
        }
        return lab_of(r, id);
    }
    static std::vector<json> ops(const json& lab, const std::string& op) {
        std::vector<json> out;
        for (const auto& r : lab.at("trials").at(0).at("history"))
            if (r.at("op") == op) out.push_back(r);
        return out;
    }
    fs::path m_dir;
};

#define SKIP_IF_SKIPPED(lab) \
    if ((lab).is_null()) return; \
    if ((lab).at("skipped").get<bool>()) GTEST_SKIP() << (lab).at("skip_reason").get<std::string>()

TEST_F(ExecExamplesTest, php_s5_holds_by_the_trigger_and_its_plain_write_mutant_breaks) {
    const json lab = run("php-s5", "", CiReport::save);
    SKIP_IF_SKIPPED(lab);
    EXPECT_EQ(lab.at("summary").at("verdict"), "held");
    // Both consumers' writes, seen by the trigger on tmp_orders; the late created changed no row.
    int refused = 0, applied = 0;
    for (const auto& w : ops(lab, "write")) {
        EXPECT_EQ(w.value("seen_by", ""), "trigger") << w.dump();
        (w.value("affected", -1) == 0 ? refused : applied) += 1;
    }
    EXPECT_EQ(refused, 1);
    EXPECT_EQ(applied, 1);
    const json mutant = run("php-s5", "--mutant plain-write", CiReport::skip);
    EXPECT_EQ(mutant.at("summary").at("verdict"), "broken");
    EXPECT_EQ(mutant.at("summary").at("wrong"), 1);
}

TEST_F(ExecExamplesTest, phpredis_with_the_null_check_replays_every_request) {
    const json right = run("php-idem-phpredis", "", CiReport::save);
    SKIP_IF_SKIPPED(right);
    EXPECT_EQ(right.at("summary").at("verdict"), "held");
    for (const auto& a : ops(right, "answer")) EXPECT_EQ(a.value("branch", ""), "first") << a.dump();
    const json wrong = run("php-idem-phpredis", "--mutant check-null", CiReport::skip);
    EXPECT_EQ(wrong.at("summary").at("verdict"), "broken");
    const auto answers = ops(wrong, "answer");
    EXPECT_EQ(answers.size(), 3u);
    for (const auto& a : answers) EXPECT_EQ(a.value("branch", ""), "replay") << a.dump();
}

TEST_F(ExecExamplesTest, a_python_consumer_without_a_trace_is_judged_from_the_servers) {
    const json lab = run("py-08a", "", CiReport::save);
    SKIP_IF_SKIPPED(lab);
    EXPECT_EQ(lab.at("summary").at("verdict"), "held");
    EXPECT_EQ(lab.at("summary").at("wrong"), 1);
    const auto receives = ops(lab, "receive");
    ASSERT_EQ(receives.size(), 2u);
    for (const auto& r : receives) EXPECT_EQ(r.value("seen_by", ""), "pel") << r.dump();
}

}  // namespace relab::exec_examples_test
