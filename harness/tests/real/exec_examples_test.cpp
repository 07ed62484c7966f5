// The example labs whose roles are PHP and Python programs (scenarios/examples, docs/your-code.md),
// one trial each: the lab holds, its mutant breaks, and what relab observed from outside is in the
// history. Where the interpreter or its clients are not installed relab skips the lab and so does
// the test (`./run_labs.sh examples` installs them).
#include <unistd.h>

#include <filesystem>
#include <fstream>
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

class ExecExamplesTest : public relab::test::RelabDirTest {
protected:
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
    // php-claim under another fault schedule, saved as a lab of its own: `relab run FILE`.
    json run_php_claim_with(const std::string& id, const json& faults) {
        const std::string source = std::string(RELAB_SOURCE_DIR) + "/scenarios/examples/php-claim.json";
        json doc = json::parse(test::slurp(source), nullptr, true, true);
        doc["id"] = doc["part"] = doc["output"] = id;
        doc["$schema"] = std::string(RELAB_SOURCE_DIR) + "/scenarios/schema.json";
        doc["consumers"]["dir"] = std::string(RELAB_SOURCE_DIR);
        doc["faults"] = faults;
        doc["expect"] = {{"wrong", "none"}, {"final", {{"42", "paid"}}}};
        const fs::path file = m_dir / (id + ".json");
        std::ofstream(file) << doc.dump(2);
        const RelabRun r = run_relab(m_dir, fmt::format("{} --runs 1 --quiet", file.string()), CiReport::save);
        EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
        return r.report.is_null() ? json() : lab_of(r, id);
    }
    static bool has_fault(const json& lab, const std::string& action, const std::string& phase) {
        for (const auto& f : ops(lab, "fault"))
            if (f.value("action", "") == action && f.value("phase", "") == phase) return true;
        return false;
    }
    static std::vector<json> ops(const json& lab, const std::string& op) {
        std::vector<json> out;
        for (const auto& r : lab.at("trials").at(0).at("history"))
            if (r.at("op") == op) out.push_back(r);
        return out;
    }
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

TEST_F(ExecExamplesTest, a_paused_php_program_resumes_and_its_late_write_is_refused) {
    const json faults = json::parse(R"([
      {"action": "pause", "target": "matched", "delay_ms": 100,
       "after": {"op": "receive", "fields": {"event": {"type": "created"}}}},
      {"action": "resume", "target_of": 1, "delay_ms": 2500,
       "after": {"op": "fault", "actor": "nemesis", "fields": {"fault": 1, "phase": "ok"}}}])");
    const json lab = run_php_claim_with("php-pause-claim", faults);
    SKIP_IF_SKIPPED(lab);
    EXPECT_EQ(lab.at("summary").at("verdict"), "held");
    EXPECT_TRUE(has_fault(lab, "pause", "ok"));
    EXPECT_TRUE(has_fault(lab, "resume", "ok"));
    // Both copies of created are written after paid: the claimed one, then the paused program's on
    // its resume; the CAS refuses both.
    int created_writes = 0;
    for (const auto& w : ops(lab, "write"))
        if (w.at("event").at("type") == "created") {
            ++created_writes;
            EXPECT_EQ(w.value("affected", -1), 0) << w.dump();
        }
    EXPECT_EQ(created_writes, 2);
}

TEST_F(ExecExamplesTest, a_restarted_php_program_comes_back_under_its_name_and_created_is_claimed) {
    const json faults = json::parse(R"([
      {"action": "restart", "target": "matched", "delay_ms": 100,
       "after": {"op": "receive", "fields": {"event": {"type": "created"}}}}])");
    const json lab = run_php_claim_with("php-restart-claim", faults);
    SKIP_IF_SKIPPED(lab);
    EXPECT_EQ(lab.at("summary").at("verdict"), "held");
    bool killed = false;
    for (const auto& f : ops(lab, "fault"))
        if (f.value("action", "") == "restart" && f.value("phase", "") == "ok") killed = f.value("killed", false);
    EXPECT_TRUE(killed) << "the restart found the program running and killed it";
    bool claimed = false;
    for (const auto& r : ops(lab, "receive"))
        claimed = claimed || (r.value("via", "") == "claim" && r.at("event").at("type") == "created");
    EXPECT_TRUE(claimed) << "the killed program's created was claimed";
}

}  // namespace relab::exec_examples_test
