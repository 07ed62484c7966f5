// The load labs on real servers, CI-sized (--orders 300 instead of 10,000; 5,000 for the failovers,
// 1,000 for the isolation levels): every strategy holds with the mechanism it claims, every mutant
// breaks one, and the per-strategy table reaches the text, JSON and HTML reports. `./run_labs.sh
// load` is the full-size run.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "relab_cli.h"

namespace relab {
namespace load_test {

namespace fs = std::filesystem;
using nlohmann::json;
using relab::test::CiReport;
using relab::test::RelabRun;
using relab::test::run_relab;
using relab::test::slurp;

class LoadLabsRealTest : public relab::test::RelabDirTest {};

const json& trial1_load(const json& lab) { return lab.at("trials").at(0).at("load"); }

TEST_F(LoadLabsRealTest, every_strategy_holds_at_300_orders_and_the_figures_tell_them_apart) {
    const RelabRun r = run_relab(m_dir, "load --orders 300");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::map<std::string, json> by_id;
    for (const auto& lab : r.report.at("labs")) {
        const std::string id = lab.at("id");
        EXPECT_TRUE(lab.at("summary").at("held").get<bool>()) << id << ": " << lab.at("summary").at("failures").dump();
        const json& t = lab.at("trials").at(0);
        // Every event accounted for: 900 published, none lost, none processed twice.
        EXPECT_EQ(t.at("accounting").at("published"), 900) << id;
        EXPECT_EQ(t.at("accounting").at("lost"), 0) << id;
        EXPECT_EQ(t.at("accounting").at("duplicated"), 0) << id;
        EXPECT_EQ(t.at("load").at("events"), 900) << id;
        EXPECT_GT(t.at("load").at("events_per_s").get<double>(), 0) << id;
        EXPECT_FALSE(t.at("role_peak_rss_kb").empty()) << id;
        by_id[id] = lab;
    }
    ASSERT_EQ(by_id.size(), 9u);
    EXPECT_GT(trial1_load(by_id["load-baseline"]).at("wrong_orders").get<int>(), 0);
    EXPECT_GT(by_id["load-baseline"].at("trials").at(0).at("accounting").at("stale_overwrites").get<int>(), 0);
    EXPECT_GT(trial1_load(by_id["load-s4-lock"]).at("wrong_orders").get<int>(), 0);
    for (const char* id : {"load-s1", "load-s2", "load-s3", "load-s5-cas", "load-s5-cas-poisson", "load-s3-s5",
                           "load-outbox-per-key"})
        EXPECT_EQ(trial1_load(by_id[id]).at("wrong_orders"), 0) << id;
    // S1 queues every order behind the 800 ms job; S3's other workers go on beside it (less than
    // half the job's wait, as the labs say: a stall of the machine can hold every worker a while).
    EXPECT_GE(trial1_load(by_id["load-s1"]).at("hol_ms").get<int>(), 600);
    EXPECT_LE(trial1_load(by_id["load-s3"]).at("hol_ms").get<int>(), 400);
    // Behind the slow job S1 holds every other order's event until it ends, S2 only its shard's.
    const json& s1 = trial1_load(by_id["load-s1"]);
    const json& s2 = trial1_load(by_id["load-s2"]);
    EXPECT_EQ(s1.at("hol_blocked"), s1.at("hol_events"));
    EXPECT_GT(s2.at("hol_blocked").get<int>(), 0);
    EXPECT_LE(2 * s2.at("hol_blocked").get<int>(), s2.at("hol_events").get<int>());
    // S3 keeps the stream's order; the three paid events retried after shipped are the CAS's to refuse.
    EXPECT_EQ(by_id["load-s3-s5"].at("trials").at(0).at("accounting").at("unapplied"), 3);
    // The table on stdout, one row per strategy, and relab's own peak RSS on stderr.
    EXPECT_NE(r.out.find("Load, per strategy"), std::string::npos);
    EXPECT_NE(r.out.find("outbox-per-key"), std::string::npos);
    EXPECT_NE(r.err.find("relab's peak RSS"), std::string::npos);
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp"));
}

TEST_F(LoadLabsRealTest, every_mutant_of_a_load_lab_breaks_it_on_real_servers) {
    const RelabRun r = run_relab(m_dir, "load --orders 300 --mutant all --quiet", CiReport::skip);
    ASSERT_EQ(r.exit_code, 1) << r.err;
    int broken = 0;
    for (const auto& lab : r.report.at("labs")) {
        const std::string name = lab.at("id").get<std::string>() + "/" + lab.at("mutant").get<std::string>();
        EXPECT_FALSE(lab.at("summary").at("held").get<bool>()) << name << " survived";
        EXPECT_FALSE(lab.at("summary").at("failures").empty()) << name;
        ++broken;
    }
    EXPECT_GE(broken, 10);
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp"));
}

TEST_F(LoadLabsRealTest, the_table_is_written_beside_the_labs_and_the_html_report_plots_it) {
    const fs::path out = m_dir / "out";
    const RelabRun r = run_relab(m_dir, fmt::format("load-s1 load-s3 --orders 200 --out-dir {}", out.string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json table = json::parse(slurp(out / "load-table.json"));
    ASSERT_EQ(table.at("load_table").size(), 2u);
    EXPECT_EQ(table.at("load_table").at(0).at("strategy"), "s1");
    EXPECT_GT(table.at("relab_peak_rss_kb").get<int64_t>(), 0);
    EXPECT_NE(slurp(out / "load-table.txt").find("s3"), std::string::npos);
    const std::string cmd = fmt::format("{} report {} >{} 2>&1", RELAB_BINARY, out.string(), (m_dir / "report.txt").string());
    ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(m_dir / "report.txt");
    // The table is no run report, and not said to be ignored.
    EXPECT_EQ(slurp(m_dir / "report.txt").find("ignored"), std::string::npos) << slurp(m_dir / "report.txt");
    const std::string html = slurp(out / "index.html");
    EXPECT_NE(html.find("Load, per strategy"), std::string::npos);
    EXPECT_NE(html.find("Throughput per strategy"), std::string::npos);
    EXPECT_NE(html.find("p99 latency per strategy"), std::string::npos);
    // Argument errors name what to do.
    const RelabRun bad = run_relab(m_dir, "08a-baseline --orders 10", CiReport::skip);
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("--orders resizes a generated workload"), std::string::npos) << bad.err;
}

// The entry a history record names, or "" (a record read from the JSON report has it in its fields).
std::string entry_of(const json& record) { return record.value("entry", std::string()); }

// The failovers at load at their CI size, 5,000 orders (the failover, at 5.5 s, still falls inside the
// 6.25 s of arrivals): without WAIT the async replication window loses entries and their orders end
// short of shipped; with WAIT nothing is lost; on the cluster only shard 0 loses, and only what it
// lost leaves an order wrong.
TEST_F(LoadLabsRealTest, the_failovers_at_load_lose_the_replication_window_and_wait_loses_nothing) {
    const RelabRun r = run_relab(m_dir, "load-failover --orders 5000");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::map<std::string, json> by_id;
    for (const auto& lab : r.report.at("labs")) {
        const std::string id = lab.at("id");
        EXPECT_TRUE(lab.at("summary").at("held").get<bool>()) << id << ": " << lab.at("summary").at("failures").dump();
        EXPECT_EQ(lab.at("trials").at(0).at("accounting").at("unexpected"), 0) << id;
        by_id[id] = lab.at("trials").at(0);
    }
    ASSERT_EQ(by_id.size(), 3u);
    for (const char* id : {"load-failover-s3-s5", "load-shard-failover-s2-s5"}) {
        const json& t = by_id[id];
        const int lost = t.at("accounting").at("lost");
        const int wrong = t.at("load").at("wrong_orders");
        EXPECT_GT(lost, 0) << id;
        // An order ends wrong only for an event it lost: at most one wrong order per lost entry.
        EXPECT_GT(wrong, 0) << id;
        EXPECT_LE(wrong, lost) << id;
    }
    EXPECT_EQ(by_id["load-failover-s3-s5-wait"].at("accounting").at("lost"), 0);
    EXPECT_EQ(by_id["load-failover-s3-s5-wait"].at("load").at("wrong_orders"), 0);
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp"));
}

// The shard failover's mutants: with shard 0's replica never held back, or no fault, nothing is lost.
TEST_F(LoadLabsRealTest, the_shard_failover_at_load_loses_nothing_without_its_replica_held_back) {
    const RelabRun r = run_relab(m_dir, "load-shard-failover-s2-s5 --orders 5000 --mutant all --quiet", CiReport::skip);
    ASSERT_EQ(r.exit_code, 1) << r.err;
    std::set<std::string> broken;
    for (const auto& lab : r.report.at("labs")) {
        const std::string mutant = lab.at("mutant");
        EXPECT_FALSE(lab.at("summary").at("held").get<bool>()) << mutant << " survived";
        EXPECT_EQ(lab.at("trials").at(0).at("accounting").at("lost"), 0) << mutant;
        broken.insert(mutant);
    }
    EXPECT_EQ(broken, (std::set<std::string>{"no-fault", "replica-linked"}));
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp"));
}

// S5 under REPEATABLE READ and SERIALIZABLE at 1,000 orders, where a trial keeps its whole history:
// PostgreSQL refuses some transactions with 40001, and every refused entry is written by a later try
// of its transaction before its XACK; nothing is lost or applied twice; READ COMMITTED's throughput
// stands beside each lab's.
TEST_F(LoadLabsRealTest, the_isolation_labs_retry_every_serialization_failure_before_its_xack) {
    const RelabRun r = run_relab(m_dir, "load-isolation --orders 1000");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(r.report.at("labs").size(), 2u);
    for (const auto& lab : r.report.at("labs")) {
        const std::string id = lab.at("id");
        EXPECT_TRUE(lab.at("summary").at("held").get<bool>()) << id << ": " << lab.at("summary").at("failures").dump();
        EXPECT_EQ(lab.at("summary").at("beside").at("name"), "read-committed") << id;
        EXPECT_GT(lab.at("summary").at("beside").at("jobs_per_s").get<double>(), 0) << id;
        const json& t = lab.at("trials").at(0);
        const json& a = t.at("accounting");
        EXPECT_EQ(a.at("published"), 3000) << id;
        EXPECT_EQ(a.at("lost"), 0) << id;
        EXPECT_EQ(a.at("duplicated"), 0) << id;
        EXPECT_EQ(trial1_load(lab).at("wrong_orders"), 0) << id;
        const json& h = t.at("history");
        ASSERT_FALSE(h.empty()) << id << ": the trial's history was not kept";
        int failures = 0;
        for (size_t i = 0; i < h.size(); ++i) {
            if (h[i].at("op") != "serialization_failure") continue;
            ++failures;
            const std::string entry = entry_of(h[i]);
            ASSERT_FALSE(entry.empty()) << h[i].dump();
            EXPECT_TRUE(h[i].at("retry").get<bool>()) << h[i].dump();
            std::optional<size_t> written, acked;
            for (size_t j = 0; j < h.size(); ++j) {
                if (entry_of(h[j]) != entry) continue;
                if (h[j].at("op") == "ack") {
                    EXPECT_GT(j, i) << entry << " was acknowledged before its transaction failed";
                    if (!acked) acked = j;
                }
                if (h[j].at("op") == "write" && !written) written = j;
            }
            ASSERT_TRUE(written.has_value()) << entry << " failed and was never written";
            ASSERT_TRUE(acked.has_value()) << entry << " was never acknowledged";
            EXPECT_GT(*written, i) << entry;
            EXPECT_LT(*written, *acked) << entry << " was acknowledged before its retry committed";
            EXPECT_GE(h[*written].at("attempts").get<int>(), 2) << h[*written].dump();
            EXPECT_EQ(h[*written].at("isolation"), h[i].at("isolation")) << entry;
        }
        EXPECT_GT(failures, 0) << id;
        EXPECT_EQ(a.at("serialization_failures"), failures) << id;
    }
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp"));
}

// Each mutant turns one knob: without the retry the refused entries are acknowledged unwritten (lost,
// one per failure); in READ COMMITTED nothing fails.
TEST_F(LoadLabsRealTest, the_isolation_labs_break_without_the_retry_and_in_read_committed) {
    const RelabRun r = run_relab(m_dir, "load-isolation --orders 1000 --mutant all --quiet", CiReport::skip);
    ASSERT_EQ(r.exit_code, 1) << r.err;
    int broken = 0;
    for (const auto& lab : r.report.at("labs")) {
        const std::string mutant = lab.at("mutant");
        const std::string name = lab.at("id").get<std::string>() + "/" + mutant;
        EXPECT_FALSE(lab.at("summary").at("held").get<bool>()) << name << " survived";
        const json& a = lab.at("trials").at(0).at("accounting");
        if (mutant == "no-retry") {
            EXPECT_GT(a.at("serialization_failures").get<int>(), 0) << name;
            EXPECT_EQ(a.at("lost"), a.at("serialization_failures")) << name;
        } else {
            EXPECT_EQ(mutant, "read-committed");
            EXPECT_EQ(a.at("serialization_failures"), 0) << name;
            EXPECT_EQ(a.at("lost"), 0) << name;
        }
        ++broken;
    }
    EXPECT_EQ(broken, 4);
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp"));
}

}  // namespace load_test
}  // namespace relab
