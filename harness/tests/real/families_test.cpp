// One engine for every lab family (harness/src/engine/): a racy lab's expect.until_wrong runs more
// trials in every family whose trials repeat, and is refused with the reason where they do not;
// every family runs under --jobs 2 with the verdict it has alone. Mutants and the endings are proven
// for every family by mutants_test.cpp and endings_test.cpp.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "relab_cli.h"

namespace families_test {

namespace fs = std::filesystem;
using relab::test::CiReport;
using relab::test::lab_of;
using relab::test::run_relab;
using relab::test::RelabRun;
using relab::test::slurp;

class FamiliesTest : public relab::test::RelabDirTest {
protected:
    // A shipped lab that never goes wrong, expected to go wrong at least once in up to 3 trials: the
    // loop must run all 3 and the verdict break (0 wrong).
    fs::path until_wrong_variant(const std::string& file) {
        nlohmann::json s = nlohmann::json::parse(slurp(fs::path(RELAB_SOURCE_DIR) / "scenarios" / file), nullptr, true,
                                                 /*ignore_comments=*/true);
        s["id"] = s.at("id").get<std::string>() + "-until-wrong";
        s["runs"] = 1;
        s["expect"]["wrong"] = {{"at_least", 1}};
        s["expect"]["until_wrong"] = {{"max_runs", 3}};
        s.erase("mutants");
        const fs::path out = m_dir / ("until-wrong-" + file);
        std::ofstream(out) << s.dump(2);
        return out;
    }

    // The variant beside the shipped lab, two at once: the lab holds in one trial, the variant ran
    // three and broke.
    void expect_until_wrong_under_jobs(const std::string& file, const std::string& id) {
        const fs::path variant = until_wrong_variant(file);
        const RelabRun r = run_relab(m_dir, fmt::format("{} {} --runs 1 --jobs 2", id, variant.string()), CiReport::skip);
        ASSERT_EQ(r.exit_code, 1) << r.err << r.out;
        EXPECT_EQ(lab_of(r, id).at("summary").at("verdict"), "held") << r.out;
        EXPECT_EQ(lab_of(r, id).at("summary").at("trials"), 1);
        const auto& v = lab_of(r, id + "-until-wrong").at("summary");
        EXPECT_EQ(v.at("verdict"), "broken") << r.out;
        EXPECT_EQ(v.at("trials"), 3) << "until_wrong ran " << v.at("trials") << " trials, not its max_runs";
        EXPECT_EQ(v.at("wrong"), 0);
        EXPECT_TRUE(fs::is_empty(m_dir / "tmp"));
    }

    // A family whose trials do not repeat refuses until_wrong when the file loads (exit 2, the
    // reason), and its lab holds under --jobs 2 beside another.
    void expect_until_wrong_refused(const std::string& file, const std::string& id, const std::string& beside) {
        const RelabRun refused = run_relab(m_dir, until_wrong_variant(file).string(), CiReport::skip);
        EXPECT_EQ(refused.exit_code, 2) << refused.out;
        EXPECT_NE(refused.err.find("applies only to labs whose trials repeat"), std::string::npos) << refused.err;
        const RelabRun r = run_relab(m_dir, fmt::format("{} {} --jobs 2", id, beside));
        ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
        EXPECT_EQ(lab_of(r, id).at("summary").at("verdict"), "held");
        EXPECT_TRUE(fs::is_empty(m_dir / "tmp"));
    }
};

TEST_F(FamiliesTest, stream_labs_honour_until_wrong_under_jobs) { expect_until_wrong_under_jobs("08b-s1.json", "08b-s1"); }

TEST_F(FamiliesTest, idempotency_client_labs_honour_until_wrong_under_jobs) {
    expect_until_wrong_under_jobs("idem-g-mw-mismatch.json", "idem-mw-mismatch");
}

TEST_F(FamiliesTest, the_cluster_probe_honours_until_wrong_under_jobs) {
    expect_until_wrong_under_jobs("idem-y2-cluster.json", "idem-cluster");
}

TEST_F(FamiliesTest, session_labs_refuse_until_wrong_and_hold_under_jobs) {
    expect_until_wrong_refused("idem-a-race.json", "idem-race", "idem-phase2");
}

TEST_F(FamiliesTest, the_benchmark_refuses_until_wrong_and_holds_under_jobs) {
    expect_until_wrong_refused("idem-z-bench.json", "idem-bench", "idem-race");
}

}  // namespace families_test
