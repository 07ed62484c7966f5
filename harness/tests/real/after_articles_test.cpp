// The failures after the articles on real servers (group after-articles): a poison entry with and
// without a delivery-count cap, group churn (a rename, XGROUP DELCONSUMER, claim then delete) and
// trimming under lag, each checked on the records the servers' replies left in the history.
#include <unistd.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "relab_cli.h"

namespace after_articles_test {

namespace fs = std::filesystem;
using nlohmann::json;
using relab::test::lab_of;
using relab::test::run_relab;

class AfterArticlesTest : public relab::test::RelabDirTest {};

// The records of one trial with this op whose fields hold `fields` (top level, by equality).
std::vector<json> records(const json& trial, const std::string& op, const json& fields = json::object()) {
    std::vector<json> out;
    for (const auto& r : trial.at("history")) {
        if (r.at("op") != op) continue;
        bool match = true;
        for (const auto& [k, v] : fields.items()) match = match && r.contains(k) && r.at(k) == v;
        if (match) out.push_back(r);
    }
    return out;
}

TEST_F(AfterArticlesTest, the_labs_hold_and_the_servers_replies_say_what_each_lab_claims) {
    const auto r = run_relab(m_dir, "after-articles --runs 1");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    // No cap: the poison entry is delivered again and again, its delivery count growing each time.
    for (const auto& trial : lab_of(r, "poison-no-cap").at("trials")) {
        const auto fails = records(trial, "job_fail");
        ASSERT_GE(fails.size(), 5u);
        for (size_t i = 1; i < fails.size(); ++i)
            EXPECT_GT(fails[i].at("deliveries").get<int>(), fails[i - 1].at("deliveries").get<int>());
        EXPECT_EQ(trial.at("accounting").at("pending"), 3);
    }
    // The cap: one XADD to the dead-letter stream, answered with an entry ID, then the XACK.
    for (const auto& trial : lab_of(r, "poison-dead-letter").at("trials")) {
        const auto dead = records(trial, "dead_letter");
        ASSERT_EQ(dead.size(), 1u);
        EXPECT_EQ(dead[0].at("deliveries"), 3);
        EXPECT_FALSE(dead[0].at("dead_entry").get<std::string>().empty());
        EXPECT_EQ(records(trial, "ack", {{"entry", dead[0].at("entry")}}).size(), 1u);
    }
    // DELCONSUMER answers how many pending entries it dropped: the one the dead consumer held.
    for (const auto& trial : lab_of(r, "churn-delconsumer").at("trials")) {
        const auto del = records(trial, "fault", {{"action", "delete_consumer"}, {"phase", "ok"}});
        ASSERT_EQ(del.size(), 1u);
        EXPECT_EQ(del[0].at("pending_dropped"), 1);
        EXPECT_EQ(del[0].at("dropped_entries").size(), 1u);
    }
    // Redis 7's XAUTOCLAIM answers a trimmed pending entry among its deleted IDs.
    for (const auto& trial : lab_of(r, "trim-pending-claim").at("trials")) {
        const auto trim = records(trial, "fault", {{"action", "trim"}, {"phase", "ok"}});
        ASSERT_EQ(trim.size(), 1u);
        const auto claims = records(trial, "claim");
        ASSERT_FALSE(claims.empty());
        EXPECT_EQ(claims[0].at("deleted"), trim[0].at("trimmed_entries"));
    }
}

}  // namespace after_articles_test
