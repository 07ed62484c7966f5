// The soak on real servers, CI-sized: --orders 2500 instead of 33,334 (7,500 events in 10 s, the
// consumer process SIGKILLed and restarted at 2, 5 and 8 s). Every event is accounted for from the
// JSON report (processed, pending in the group, never delivered, lost), the kills happened and the
// group gave entries back after them, no order ends wrong; the mutant without recovery leaves
// entries pending at the soak's deadline and breaks. `./run_labs.sh soak` is the full-size run.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "relab_cli.h"

namespace relab {
namespace soak_test {

namespace fs = std::filesystem;
using nlohmann::json;
using relab::test::CiReport;
using relab::test::lab_of;
using relab::test::RelabRun;
using relab::test::run_relab;
using relab::test::slurp;

class SoakRealTest : public relab::test::RelabDirTest {
protected:
    // Processes whose command line names this test's folder: roles and servers live under its TMPDIR.
    std::vector<std::string> leftovers() const {
        std::vector<std::string> out;
        for (const auto& p : fs::directory_iterator("/proc")) {
            const std::string name = p.path().filename().string();
            if (name.find_first_not_of("0123456789") != std::string::npos) continue;
            std::string cmd = slurp(p.path() / "cmdline");
            std::replace(cmd.begin(), cmd.end(), '\0', ' ');
            if (cmd.find(m_dir.string()) != std::string::npos) out.push_back(name + ": " + cmd);
        }
        return out;
    }
};

// relab's own peak RSS in MB, from "relab's peak RSS N MB" at the end of a run; -1 when missing.
double relab_peak_rss_mb(const std::string& err) {
    std::smatch m;
    static const std::regex line(R"(relab's peak RSS ([0-9.]+) MB)");
    return std::regex_search(err, m, line) ? std::stod(m[1].str()) : -1;
}

int64_t n(const json& j, const char* key) { return j.at(key).get<int64_t>(); }

TEST_F(SoakRealTest, every_event_is_accounted_for_through_the_kills_and_no_order_ends_wrong) {
    const RelabRun r = run_relab(m_dir, "soak --orders 2500");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json& lab = lab_of(r, "soak-s3-s5-kills");
    EXPECT_TRUE(lab.at("summary").at("held").get<bool>()) << lab.at("summary").at("failures").dump();
    const json& t = lab.at("trials").at(0);
    const json& a = t.at("accounting");
    const json& k = t.at("soak");
    // Every event sent is processed (once, or again after a kill) or lost; none is left in the
    // group (pending) or in the stream beyond it (never delivered), as the server has it at the end.
    EXPECT_EQ(n(a, "published"), 7500);
    EXPECT_EQ(n(a, "processed_once") + n(a, "duplicated") + n(a, "lost"), 7500);
    EXPECT_EQ(n(a, "lost"), 0);
    EXPECT_EQ(n(a, "redelivered"), 0);
    EXPECT_EQ(n(a, "unexpected"), 0);
    EXPECT_EQ(n(a, "stale_overwrites"), 0);
    // The three paid events the producer retried land after shipped: the CAS refuses each.
    EXPECT_GE(n(a, "unapplied"), 3);
    EXPECT_EQ(n(k, "pending"), 0);
    EXPECT_EQ(n(k, "undelivered"), 0);
    EXPECT_FALSE(k.at("deadline_passed").get<bool>());
    EXPECT_LT(n(k, "end_ms"), n(k, "deadline_ms"));
    // The kills happened (every 3 s from 2 s while the 10 s of events went out), each restarted the
    // reader, and the group gave back what the killed readers held.
    EXPECT_GE(n(k, "kills"), 2);
    EXPECT_LE(n(k, "kills"), 4);
    EXPECT_EQ(n(k, "restarts"), n(k, "kills"));
    EXPECT_EQ(n(k, "fault_failures"), 0);
    EXPECT_GT(n(k, "recovered"), 0);
    // No order ends wrong.
    EXPECT_TRUE(t.at("wrong_orders").empty()) << t.at("wrong_orders").dump();
    EXPECT_EQ(n(t.at("load"), "wrong_orders"), 0);
    EXPECT_EQ(n(t.at("load"), "events"), 7500);
    // A trial of over 20,000 records keeps its figures, not its history.
    EXPECT_TRUE(t.at("history").empty());
    EXPECT_FALSE(t.at("role_peak_rss_kb").empty());
    // The accounting ends the run's output, and relab's own memory stays small.
    EXPECT_NE(r.out.find("Soak, per lab"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("7,500 events sent"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("0 pending in the group · 0 never delivered · 0 lost"), std::string::npos) << r.out;
    const double rss = relab_peak_rss_mb(r.err);
    EXPECT_GT(rss, 0) << r.err;
    EXPECT_LT(rss, 400) << r.err;
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp")) << "temp dirs left in " << (m_dir / "tmp");
    EXPECT_EQ(leftovers(), std::vector<std::string>{});
}

// Without recovery the restarted reader reads only new entries: what each killed one held stays
// pending, the trial stops by itself at its deadline (10 s of events + 20 s) and says what it left.
TEST_F(SoakRealTest, without_recovery_the_soak_stops_at_its_deadline_with_entries_pending_and_breaks) {
    const RelabRun m = run_relab(m_dir, "soak --orders 2500 --mutant no-recovery", CiReport::skip);
    ASSERT_EQ(m.exit_code, 1) << m.err;
    const json& mlab = lab_of(m, "soak-s3-s5-kills");
    EXPECT_EQ(mlab.at("summary").at("verdict"), "broken");
    const json& mt = mlab.at("trials").at(0);
    const json& mk = mt.at("soak");
    EXPECT_TRUE(mk.at("deadline_passed").get<bool>());
    EXPECT_GE(n(mk, "end_ms"), n(mk, "deadline_ms"));
    EXPECT_GT(n(mk, "pending"), 0);
    EXPECT_EQ(n(mk, "undelivered"), 0);
    EXPECT_EQ(n(mk, "recovered"), 0);
    // Entries never processed were held by a killed reader: each is still pending.
    EXPECT_LE(n(mt.at("accounting"), "lost"), n(mk, "pending"));
    EXPECT_EQ(n(mt.at("accounting"), "published"), 7500);
    EXPECT_NE(m.err.find("BROKEN soak-s3-s5-kills: trial 1: pending = 0 (measured"), std::string::npos) << m.err;
    EXPECT_NE(m.out.find("the deadline (30.0 s) passed before the group drained"), std::string::npos) << m.out;
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp")) << "temp dirs left in " << (m_dir / "tmp");
    EXPECT_EQ(leftovers(), std::vector<std::string>{});
}

// With a plain write the FIFO and the recovery still hold, but the three paid events the producer
// retried after their shipped overwrite it: S5's CAS is what keeps those orders right.
TEST_F(SoakRealTest, a_plain_write_lets_the_retried_events_overwrite_and_breaks) {
    const RelabRun m = run_relab(m_dir, "soak --orders 2500 --mutant plain-write", CiReport::skip);
    ASSERT_EQ(m.exit_code, 1) << m.err;
    const json& mt = lab_of(m, "soak-s3-s5-kills").at("trials").at(0);
    EXPECT_EQ(n(mt.at("accounting"), "unapplied"), 0);
    EXPECT_EQ(n(mt.at("load"), "wrong_orders"), 3);
    const json expected = {"#7=paid (expected shipped)", "#42=paid (expected shipped)", "#77=paid (expected shipped)"};
    EXPECT_EQ(mt.at("wrong_orders"), expected);
    EXPECT_EQ(n(mt.at("soak"), "pending"), 0);
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp")) << "temp dirs left in " << (m_dir / "tmp");
    EXPECT_EQ(leftovers(), std::vector<std::string>{});
}

}  // namespace soak_test
}  // namespace relab
