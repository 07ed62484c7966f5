// Every expectation is seen to fail: each shipped scenario's mutants (a copy with its mechanism's
// key knob turned, the JSON Patch in the file's "mutants") run, and every verdict must be broken.
// Mutants run on the simulator where the lab runs there, on real servers otherwise. None of these
// runs joins the CI report: they break labs on purpose.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "relab_cli.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"

namespace relab {
namespace mutants_test {

namespace fs = std::filesystem;
using nlohmann::json;
using relab::test::CiReport;
using relab::test::RelabRun;
using relab::test::run_relab;

class MutantsTest : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / fmt::format("relab-mutants-test-{}", getpid());
        fs::create_directories(m_dir / "sim" / "tmp");
        fs::create_directories(m_dir / "real" / "tmp");
    }
    void TearDown() override { fs::remove_all(m_dir); }
    fs::path m_dir;
};

std::string scenarios_dir() { return std::string(RELAB_SOURCE_DIR) + "/scenarios"; }

// Records every lab of a run as "id/mutant" and checks that it broke on its expectation: not
// held, not skipped, with the reasons named. Skipped labs' ids are returned.
std::set<std::string> check_broken(const RelabRun& r, std::set<std::string>& killed) {
    std::set<std::string> skipped;
    for (const auto& lab : r.report.at("labs")) {
        const std::string id = lab.at("id");
        const json& summary = lab.at("summary");
        if (lab.at("skipped").get<bool>()) {
            skipped.insert(id);
            continue;
        }
        EXPECT_TRUE(lab.at("mutant").is_string()) << id;
        const std::string name = id + "/" + lab.value("mutant", json("?")).get<std::string>();
        EXPECT_FALSE(summary.at("held").get<bool>()) << name << " survived: its expectation held on the mutant";
        EXPECT_EQ(summary.at("verdict"), "broken") << name;
        EXPECT_FALSE(summary.at("failures").empty()) << name;
        killed.insert(name);
    }
    return skipped;
}

TEST_F(MutantsTest, every_mutant_of_every_shipped_lab_breaks_its_verdict) {
    std::set<std::string> expected;
    for (const auto& s : load_scenario_dir(scenarios_dir())) {
        EXPECT_FALSE(s.mutants.empty()) << s.id;
        for (const auto& m : s.mutants) expected.insert(s.id + "/" + m.name);
    }
    std::set<std::string> killed;

    const RelabRun sim = run_relab(m_dir / "sim", "--backend sim --mutant all --quiet", CiReport::skip);
    // 1: at least one lab broke; 2 would be an error of the harness, never a verdict.
    ASSERT_EQ(sim.exit_code, 1) << sim.err;
    const std::set<std::string> real_only = check_broken(sim, killed);
    ASSERT_FALSE(real_only.empty());

    std::string ids;
    for (const auto& id : real_only) ids += " " + id;
    const RelabRun real = run_relab(m_dir / "real", "--mutant all --quiet" + ids, CiReport::skip);
    ASSERT_EQ(real.exit_code, 1) << real.err;
    EXPECT_TRUE(check_broken(real, killed).empty()) << "the real backend skipped a mutant";

    EXPECT_EQ(killed, expected);
    EXPECT_TRUE(fs::is_empty(m_dir / "sim" / "tmp"));
    EXPECT_TRUE(fs::is_empty(m_dir / "real" / "tmp"));
}

TEST_F(MutantsTest, an_unknown_mutant_is_a_usage_error_that_names_the_labs_mutants) {
    const RelabRun r = run_relab(m_dir / "sim", "08a-baseline --backend sim --mutant nope", CiReport::skip);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("lab 08a-baseline has no mutant 'nope'; its mutants: cas-write, one-consumer"),
              std::string::npos)
        << r.err;
}

}  // namespace mutants_test
}  // namespace relab
