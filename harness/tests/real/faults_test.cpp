// Faults as data on real servers: the 08h labs (a consumer SIGKILLed, paused, restarted; entries
// recovered by XAUTOCLAIM or by reading the own PEL), an unseen fault lab written by the test, and
// what every fault run leaves behind: no process, no temp dir.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "clients/pg_client.h"
#include "servers/servers.h"
#include "relab_cli.h"

namespace faults_test {

namespace fs = std::filesystem;
using nlohmann::json;
using relab::test::CiReport;
using relab::test::lab_of;
using relab::test::run_relab;
using relab::test::slurp;

class FaultsTest : public relab::test::RelabDirTest {
protected:
    // Processes whose command line names this test's folder: role processes (their config lives
    // in the run's temp dir) and servers (their data dirs do); and processes working in it:
    // PostgreSQL's backends, whose command line names no folder, run in their data directory.
    std::vector<std::string> processes_under_dir() const {
        std::vector<std::string> out;
        for (const auto& p : fs::directory_iterator("/proc")) {
            const std::string name = p.path().filename();
            if (name.find_first_not_of("0123456789") != std::string::npos) continue;
            std::string cmd = slurp(p.path() / "cmdline");
            std::replace(cmd.begin(), cmd.end(), '\0', ' ');
            std::error_code ec;
            const std::string cwd = fs::read_symlink(p.path() / "cwd", ec).string();
            if (cmd.find(m_dir.string()) != std::string::npos || cwd.find(m_dir.string()) != std::string::npos)
                out.push_back(name + ": " + cmd + " (in " + cwd + ")");
        }
        return out;
    }
};

// The records of one trial with this op (and actor, when given).
std::vector<json> records(const json& trial, const std::string& op, const std::string& actor = "") {
    std::vector<json> out;
    for (const auto& r : trial.at("history"))
        if (r.at("op") == op && (actor.empty() || r.at("actor") == actor)) out.push_back(r);
    return out;
}

std::string published_entry(const json& trial, const std::string& type) {
    for (const auto& r : records(trial, "publish"))
        if (r.at("event").at("type") == type && r.value("result", "") == "ok") return r.at("entry");
    return "";
}

TEST_F(FaultsTest, fault_labs_hold_on_real_servers_and_leave_no_process_or_temp_dir) {
    const auto r = run_relab(m_dir, "faults --runs 2");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    for (const char* id : {"08h-claim-plain", "08h-claim-cas", "08h-restart-pel", "08h-pause-claim", "08h-pause-claim-cas",
                           "08i-restart-volatile", "08i-restart-aof", "08i-failover", "08j-outbox-pg-restart",
                           "08k-drop-clients", "beyond-link-hang", "beyond-link-hang-cas", "beyond-link-reset",
                           "beyond-link-reset-cas-state"}) {
        SCOPED_TRACE(id);
        EXPECT_EQ(lab_of(r, id).at("summary").at("held"), true);
    }

    // A hung link: the holder's UPDATE waits in its proxy; the heal lets those bytes through (its
    // record counts them), and the holder's one write is recorded after the heal, applied by the
    // plain UPDATE and refused by the CAS.
    for (const std::string id : {"beyond-link-hang", "beyond-link-hang-cas"})
        for (const auto& trial : lab_of(r, id).at("trials")) {
            SCOPED_TRACE(id);
            const auto faults = records(trial, "fault", "nemesis");
            ASSERT_EQ(faults.size(), 4u);  // blackhole invoke/ok, heal invoke/ok
            EXPECT_EQ(faults[1].at("action"), "blackhole");
            EXPECT_NE(faults[1].at("text").get<std::string>().find(" ↔ postgres blackhole"), std::string::npos);
            EXPECT_EQ(faults[3].at("action"), "heal");
            const std::string healed = faults[3].at("text");
            EXPECT_EQ(healed.find("; 0 bytes held"), std::string::npos) << healed;  // the UPDATE was held
            EXPECT_NE(healed.find("bytes held flowed on"), std::string::npos) << healed;
            const auto writes = records(trial, "write", faults[1].at("target").get<std::string>());
            ASSERT_EQ(writes.size(), 1u);
            EXPECT_GE(writes[0].at("t_us").get<int64_t>(), faults[2].at("t_us").get<int64_t>());
            EXPECT_EQ(writes[0].at("affected"), id == "beyond-link-hang" ? 1 : 0);
        }

    // XAUTOCLAIM keeps the entry's ID (the article says it "changes on every claim") and raises
    // its delivery count: the reaper received the very entry the producer published, as delivery 2.
    for (const auto& trial : lab_of(r, "08h-claim-plain").at("trials")) {
        const std::string created = published_entry(trial, "created");
        ASSERT_FALSE(created.empty());
        const auto claimed = records(trial, "receive", "reaper");
        ASSERT_EQ(claimed.size(), 1u);
        EXPECT_EQ(claimed[0].at("entry"), created);
        EXPECT_EQ(claimed[0].at("deliveries"), 2);
        EXPECT_EQ(claimed[0].at("via"), "claim");
        // The kill is a nemesis op: invoke, then ok, on the consumer that had received created.
        const auto faults = records(trial, "fault", "nemesis");
        ASSERT_EQ(faults.size(), 2u);
        EXPECT_EQ(faults[0].at("phase"), "invoke");
        EXPECT_EQ(faults[1].at("phase"), "ok");
        std::string holder;
        for (const auto& rec : records(trial, "receive"))
            if (rec.at("entry") == created && rec.at("via") == "new") holder = rec.at("actor");
        EXPECT_EQ(faults[1].at("target"), holder);
        // Nothing of the killed consumer after its death.
        for (const auto& rec : trial.at("history")) {
            if (rec.at("actor") != holder) continue;
            EXPECT_LT(rec.at("t_us").get<int64_t>(), faults[1].at("t_us").get<int64_t>());
        }
    }
    // The restarted consumer got its own pending entry back first, same ID, delivery 2.
    for (const auto& trial : lab_of(r, "08h-restart-pel").at("trials")) {
        const auto faults = records(trial, "fault", "nemesis");
        ASSERT_EQ(faults.size(), 4u);  // kill invoke/ok, restart invoke/ok
        const std::string victim = faults[1].at("target");
        EXPECT_EQ(faults[3].at("target"), victim);
        bool again = false;
        for (const auto& rec : records(trial, "receive", victim))
            if (rec.at("via") == "pending") {
                again = true;
                EXPECT_EQ(rec.at("entry"), published_entry(trial, "created"));
                EXPECT_EQ(rec.at("deliveries"), 2);
            }
        EXPECT_TRUE(again);
    }
    // redis-server SIGKILLed and started again without persistence: the stream, the group and the
    // dead consumer's PEL are gone; a consumer meets NOGROUP and creates the group again, and
    // created, published and acknowledged to the producer, is never processed.
    for (const auto& trial : lab_of(r, "08i-restart-volatile").at("trials")) {
        EXPECT_EQ(trial.at("accounting").at("lost"), 1);
        bool nogroup = false;
        for (const auto& rec : records(trial, "error"))
            nogroup = nogroup || rec.at("error").get<std::string>().find("NOGROUP") != std::string::npos;
        EXPECT_TRUE(nogroup);
        EXPECT_FALSE(records(trial, "group_created").empty());
        EXPECT_TRUE(trial.at("stream").empty());
    }
    // With appendonly yes the same restart loses nothing: the reaper claims created from the PEL
    // the AOF brought back.
    for (const auto& trial : lab_of(r, "08i-restart-aof").at("trials")) {
        EXPECT_EQ(trial.at("accounting").at("lost"), 0);
        EXPECT_EQ(trial.at("stream").size(), 2u);
        EXPECT_EQ(records(trial, "receive", "reaper").size(), 1u);
    }
    // Sentinel's failover with the replica held back: the entries published in the window are
    // gone from the promoted replica's stream, and the group's cursor went back.
    for (const auto& trial : lab_of(r, "08i-failover").at("trials")) {
        EXPECT_EQ(trial.at("accounting").at("lost"), 2);
        EXPECT_EQ(trial.at("accounting").at("redelivered"), 1);
        EXPECT_EQ(trial.at("stream").size(), 2u);  // of the 5 published
        const auto faults = records(trial, "fault", "nemesis");
        ASSERT_FALSE(faults.empty());
        const std::string text = faults.back().at("text");
        // The fault says how Sentinel did it: "Sentinel's election (3 sentinels, quorum 2, ...) promoted <replica>".
        EXPECT_NE(text.find("Sentinel's election"), std::string::npos) << text;
        EXPECT_NE(text.find(") promoted "), std::string::npos) << text;
    }
    // The outbox's own PostgreSQL restarted before the round's COMMIT: the dispatcher's round
    // failed on the lost connection, and the next one published 42's two rows again.
    for (const auto& trial : lab_of(r, "08j-outbox-pg-restart").at("trials")) {
        EXPECT_EQ(trial.at("stream").size(), 6u);
        const auto errors = records(trial, "error", "dispatcher");
        ASSERT_FALSE(errors.empty());
        EXPECT_EQ(errors[0].at("round"), 1);
        EXPECT_EQ(errors[0].at("server"), "postgres");
        const auto faults = records(trial, "fault", "nemesis");
        ASSERT_EQ(faults.size(), 2u);
        EXPECT_EQ(faults[1].at("phase"), "ok");
    }
    // The roles' connections closed while C1 waited in BLOCK: C1 got the error at once, created's
    // first XADD failed, and nothing was lost.
    for (const auto& trial : lab_of(r, "08k-drop-clients").at("trials")) {
        EXPECT_EQ(trial.at("accounting").at("lost"), 0);
        const auto c1 = records(trial, "error", "C1");
        ASSERT_EQ(c1.size(), 1u);
        EXPECT_NE(c1[0].at("error").get<std::string>().find("XREADGROUP"), std::string::npos) << c1[0].dump();
        const auto faults = records(trial, "fault", "nemesis");
        ASSERT_EQ(faults.size(), 2u);
        EXPECT_NE(faults[1].at("text").get<std::string>().find("closed 3 Redis connection(s) of the trial's roles"),
                  std::string::npos)
            << faults[1].dump();  // C1, the reaper and the producer; not the harness's own
    }
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp")) << "temp dirs left in " << (m_dir / "tmp");
    const auto left = processes_under_dir();
    EXPECT_TRUE(left.empty()) << left.front();
}

// A lab that kills its PostgreSQL (and never restarts it) on a run whose PostgreSQL is external
// (--pg-url): the lab gets a PostgreSQL of its own for each trial, so the run's server is never
// touched; the final rows are read from the killed server's data directory once it is started
// again (everything committed is there), and nothing is left behind: no postmaster, no backend,
// no temp dir.
TEST_F(FaultsTest, a_lab_that_kills_postgres_gets_its_own_and_leaves_nothing_behind) {
    relab::EmbeddedPostgres external;
    const int external_pid = external.pid();
    const json lab = {
        {"id", "my-pg-kill"},
        {"title", "the outbox's PostgreSQL is killed after the last write"},
        {"kind", "workload"},
        {"runs", 2},
        {"servers", {{"postgres", json::object()}}},
        {"orders", {{{"id", 42}}, {{"id", 43}}}},
        {"events", {{{"order", 42}, {"type", "created"}, {"version", 1}},
                    {{"order", 43}, {"type", "created"}, {"version", 1}},
                    {{"order", 42}, {"type", "paid"}, {"version", 2}},
                    {{"order", 43}, {"type", "paid"}, {"version", 2}}}},
        {"dispatcher", {{"ordering", "per_key"}}},
        {"consumers", 1},
        {"faults", {{{"action", "kill"}, {"target", "postgres"}, {"delay_ms", 200},
                     {"after", {{"op", "write"}, {"fields", {{"event", {{"order", 43}, {"type", "paid"}}}}}}}}}},
        {"expect", {{"wrong", "none"}, {"final", {{"42", "paid"}, {"43", "paid"}}}, {"lost", 0}}},
    };
    const fs::path file = m_dir / "my-pg-kill.json";
    std::ofstream(file) << lab.dump(2);
    const std::string url = fmt::format("postgresql://{}@127.0.0.1:{}/relab", external.endpoint().user,
                                        external.endpoint().port);
    const auto r = run_relab(m_dir, file.string() + " --pg-url " + url);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    for (const auto& trial : lab_of(r, "my-pg-kill").at("trials")) {
        const auto faults = records(trial, "fault", "nemesis");
        ASSERT_EQ(faults.size(), 2u);
        EXPECT_EQ(faults[1].at("phase"), "ok");
        EXPECT_EQ(faults[1].at("target"), "postgres");
    }
    EXPECT_EQ(external.pid(), external_pid);  // the run's server: untouched
    EXPECT_TRUE(relab::PgSession(external.endpoint(), "").exec("SELECT 1").ok());
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp")) << "temp dirs left in " << (m_dir / "tmp");
    const auto left = processes_under_dir();
    EXPECT_TRUE(left.empty()) << left.front();
}

// A fault lab nobody shipped, written as one JSON file: three consumers that claim in their own
// loop (no reaper); the holder of created is killed 10 ms into its 100 ms job, paid's 500 ms job is
// applied, and a live consumer claims created once it is 1000 ms idle (longer than paid's job, so
// paid is not claimed too) and applies it last: plain UPDATE ends created. Without the kill the same
// workload ends paid, so the verdict rests on it.
TEST_F(FaultsTest, an_unseen_fault_lab_written_as_data_runs_on_both_backends) {
    const json lab = {
        {"id", "my-claim-in-loop"},
        {"title", "the holder of created dies; an idle consumer claims it in its own loop"},
        {"kind", "workload"},
        {"runs", 2},
        {"orders", {{{"id", 7}, {"expected_final", "paid"}}}},
        {"events", {{{"order", 7}, {"type", "created"}, {"version", 1}, {"at_ms", 0}},
                    {{"order", 7}, {"type", "paid"}, {"version", 2}, {"at_ms", 0}}}},
        {"job_cost_ms", {{"created", 100}, {"paid", 500}}},
        {"consumers", 3},
        {"recovery", {{"autoclaim", {{"min_idle_ms", 1000}, {"every_ms", 50}, {"in", "consumers"}}}}},
        {"faults", {{{"action", "kill"}, {"target", "matched"}, {"delay_ms", 10},
                     {"after", {{"op", "receive"}, {"fields", {{"event", {{"type", "created"}}}}}}}}}},
        {"expect", {{"wrong", "all"},
                    {"final", {{"7", "created"}}},
                    {"every_trial_has", {{{"op", "receive"}, {"fields", {{"via", "claim"}, {"deliveries", 2},
                                                                          {"event", {{"type", "created"}}}}}}}},
                    {"never", {{{"op", "claim"}, {"actor", "reaper"}}}}}},
    };
    const fs::path file = m_dir / "my-claim-in-loop.json";
    std::ofstream(file) << lab.dump(2);

    const auto real = run_relab(m_dir, file.string());
    ASSERT_EQ(real.exit_code, 0) << real.out << real.err;
    EXPECT_EQ(lab_of(real, "my-claim-in-loop").at("summary").at("wrong"), 2);
    const auto sim = run_relab(m_dir, file.string() + " --backend sim --trials 50");
    ASSERT_EQ(sim.exit_code, 0) << sim.out << sim.err;
    EXPECT_EQ(lab_of(sim, "my-claim-in-loop").at("summary").at("wrong"), 50);

    json unfaulted = lab;
    unfaulted["id"] = "my-claim-in-loop-no-fault";
    unfaulted["faults"] = json::array();
    const fs::path no_fault = m_dir / "my-claim-in-loop-no-fault.json";
    std::ofstream(no_fault) << unfaulted.dump(2);
    for (const std::string backend : {"real", "sim"}) {
        SCOPED_TRACE(backend);
        const auto r = run_relab(m_dir, no_fault.string() + " --backend " + backend, CiReport::skip);
        ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
        EXPECT_EQ(lab_of(r, "my-claim-in-loop-no-fault").at("summary").at("wrong"), 0);
    }
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp"));
}

// A consumer SIGKILLed mid-job with nothing to claim its entry and no pending-first read strands
// the entry in the PEL for good: on real servers too the trial ends once nothing moves (quiet_ms),
// and the lab breaks on lost 0 (exit 1, not a harness failure's 2) naming the entry, which the
// simulator strands the same way.
TEST_F(FaultsTest, an_entry_stranded_by_a_killed_consumer_breaks_the_lab_on_both_backends) {
    const json lab = {
        {"id", "my-stranded"},
        {"title", "the holder of created dies; nothing claims it"},
        {"kind", "workload"},
        {"runs", 1},
        {"stream", {{"quiet_ms", 1500}}},
        {"orders", {{{"id", 7}, {"expected_final", "paid"}}}},
        {"events", {{{"order", 7}, {"type", "created"}, {"version", 1}, {"at_ms", 0}},
                    {{"order", 7}, {"type", "paid"}, {"version", 2}, {"at_ms", 0}}}},
        {"job_cost_ms", {{"created", 800}, {"paid", 50}}},
        {"consumers", 2},
        {"write", {{"mode", "cas"}}},
        {"faults", {{{"action", "kill"}, {"target", "matched"}, {"delay_ms", 100},
                     {"after", {{"op", "receive"}, {"fields", {{"event", {{"type", "created"}}}}}}}}}},
        {"expect", {{"wrong", "none"}, {"lost", 0}}},
    };
    const fs::path file = m_dir / "my-stranded.json";
    std::ofstream(file) << lab.dump(2);

    for (const std::string backend : {"real", "sim"}) {
        SCOPED_TRACE(backend);
        const auto r = run_relab(m_dir, file.string() + " --backend " + backend, CiReport::skip);
        ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
        EXPECT_EQ(r.err.find("harness failure"), std::string::npos) << r.err;
        const json& trial = lab_of(r, "my-stranded").at("trials").at(0);
        const std::string created = published_entry(trial, "created");
        ASSERT_FALSE(created.empty());
        EXPECT_EQ(trial.at("accounting").at("lost"), 1);
        EXPECT_EQ(trial.at("accounting").at("pending"), 1);
        EXPECT_EQ(trial.at("accounting").at("examples").at("pending"), json::array({created}));
        // Counted from the server's PEL as the trial ended, not only from the history.
        const auto quiet = records(trial, "observe", "relab");
        ASSERT_EQ(quiet.size(), 1u);
        EXPECT_EQ(quiet[0].at("pel"), json::array({created}));
        EXPECT_NE(r.err.find("lost = 0 (measured 1)"), std::string::npos) << r.err;
        EXPECT_NE(r.out.find("pending (received, never acknowledged) 1: " + created), std::string::npos) << r.out;
    }
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp"));
    EXPECT_TRUE(processes_under_dir().empty());
}

}  // namespace faults_test
