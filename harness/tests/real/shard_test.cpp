// `relab run --shard K/N` then `relab merge` end to end, at CI size: four simulated shards of a racy
// lab merged give the wrong count and failing seeds of the unsharded run, each shard's JSON says
// which shard it is, and a missing shard is refused.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "relab_cli.h"

namespace shard_test {

namespace fs = std::filesystem;
using relab::test::slurp;

class ShardTest : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / fmt::format("relab-shard-test-{}", getpid());
        fs::remove_all(m_dir);
        fs::create_directories(m_dir);
    }
    void TearDown() override { fs::remove_all(m_dir); }

    int relab(const std::string& args) {
        const std::string cmd = fmt::format("{} {} >{} 2>{}", RELAB_BINARY, args, (m_dir / "out.txt").string(),
                                            (m_dir / "err.txt").string());
        const int status = std::system(cmd.c_str());
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    nlohmann::json lab(const std::string& dir) {
        return nlohmann::json::parse(slurp(m_dir / dir / "08c-lock.sim.json")).at("labs").at(0).at("summary");
    }
    fs::path m_dir;
};

TEST_F(ShardTest, four_shards_merged_give_the_unsharded_runs_wrong_count_and_failing_seeds) {
    const std::string run = "run 08c-s4a --backend sim --trials 4000 --quiet --out-dir " + (m_dir / "").string();
    ASSERT_EQ(relab(run + "one"), 0) << slurp(m_dir / "err.txt");
    for (int k = 1; k <= 4; ++k) {
        ASSERT_EQ(relab(fmt::format("{}s{} --shard {}/4", run, k, k)), 0) << slurp(m_dir / "err.txt");
        const auto shard = nlohmann::json::parse(slurp(m_dir / fmt::format("s{}", k) / "08c-lock.sim.json")).at("shard");
        EXPECT_EQ(shard.at("index"), k);
        EXPECT_EQ(shard.at("count"), 4);
    }
    const std::string shards = fmt::format("{0}s1 {0}s2 {0}s3 {0}s4", (m_dir / "").string());
    ASSERT_EQ(relab(fmt::format("merge {} --quiet --out-dir {}", shards, (m_dir / "merged").string())), 0)
        << slurp(m_dir / "err.txt");
    const auto one = lab("one"), merged = lab("merged");
    EXPECT_EQ(merged.at("trials"), 4000);
    EXPECT_GT(merged.at("wrong").get<int>(), 0);
    EXPECT_EQ(merged.at("wrong"), one.at("wrong"));
    EXPECT_EQ(merged.at("failing_seeds"), one.at("failing_seeds"));
    EXPECT_EQ(merged.at("ci95"), one.at("ci95"));

    EXPECT_EQ(relab(fmt::format("merge {0}s1 {0}s2 {0}s4 --quiet", (m_dir / "").string())), 2);
    EXPECT_NE(slurp(m_dir / "err.txt").find("shard 3/4 is missing"), std::string::npos) << slurp(m_dir / "err.txt");
}

}  // namespace shard_test
