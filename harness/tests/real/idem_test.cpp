// The idempotency-key labs (article 002) end to end: the relab binary runs them on servers it
// starts itself, and the outcomes are read back from its JSON report.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "servers/servers.h"
#include "relab_cli.h"

namespace idem_test {

namespace fs = std::filesystem;
using nlohmann::json;
using relab::test::lab_of;
using relab::test::RelabRun;
using relab::test::CiReport;
using relab::test::run_relab;
using relab::test::slurp;

class IdemLabsTest : public relab::test::RelabDirTest {
public:
    RelabRun relab_run(const std::string& args) { return relab(args); }

protected:

    static const json& lab(const RelabRun& r, const std::string& id) { return lab_of(r, id); }
    static const json& counts(const RelabRun& r, const std::string& id, size_t trial = 0) {
        return lab(r, id).at("trials").at(trial).at("idem").at("counts");
    }
    // The measured figure whose label starts with label_start; a missing figure fails the test.
    static std::string measured(const RelabRun& r, const std::string& id, const std::string& label_start) {
        for (const auto& m : lab(r, id).at("summary").at("measurements"))
            if (m.at("label").get<std::string>().rfind(label_start, 0) == 0) return m.at("measured");
        throw std::runtime_error("no measurement \"" + label_start + "...\" in " + id);
    }
    // The records of trial 1 of a lab with this op (and, when given, a nemesis fault's "action", done).
    static std::vector<json> records(const RelabRun& r, const std::string& id, const std::string& op,
                                     const std::string& type = "") {
        std::vector<json> out;
        for (const auto& rec : lab(r, id).at("trials").at(0).at("history"))
            if (rec.value("op", "") == op &&
                (type.empty() || (rec.value("action", "") == type && rec.value("phase", "") == "ok")))
                out.push_back(rec);
        return out;
    }
    // The steps of a case, by session, in order.
    static std::vector<json> steps(const RelabRun& r, const std::string& id, size_t c, const std::string& session) {
        std::vector<json> out;
        for (const auto& s : lab(r, id).at("cases").at(c).at("steps"))
            if (s.at("session") == session) out.push_back(s);
        return out;
    }

    // The history records of trial 1 of a lab whose "step" is `step` and whose `name_field` (pair,
    // load) is `name`.
    static json observation(const RelabRun& r, const std::string& id, const std::string& step,
                            const std::string& name_field = "", const std::string& name = "") {
        for (const auto& rec : lab(r, id).at("trials").at(0).at("history"))
            if (rec.value("step", "") == step && (name_field.empty() || rec.value(name_field, "") == name)) return rec;
        throw std::runtime_error("no " + step + " record " + name + " in " + id);
    }

    // Processes whose command line or working directory mentions our temp dir: servers and roles
    // of the run, which must all be gone.
    std::vector<std::string> leftovers() const {
        std::vector<std::string> out;
        const std::string mine = (m_dir / "tmp").string();
        for (const auto& e : fs::directory_iterator("/proc")) {
            const std::string name = e.path().filename();
            if (name.find_first_not_of("0123456789") != std::string::npos) continue;
            std::string cmdline = slurp(e.path() / "cmdline");
            std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
            std::error_code ec;
            const std::string cwd = fs::read_symlink(e.path() / "cwd", ec).string();
            if (cmdline.find(mine) != std::string::npos || cwd.rfind(mine, 0) == 0) out.push_back(name + ": " + cmdline);
        }
        return out;
    }
};

TEST_F(IdemLabsTest, redis_sessions_reproduce_the_articles_transcripts) {
    const auto r = relab("idem-race idem-phase2 idem-lua idem-wrongtype idem-memory");
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;

    const auto a = steps(r, "idem-race", 0, "A");
    const auto b = steps(r, "idem-race", 0, "B");
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(b.size(), 2u);
    EXPECT_EQ(a[0]["tag"], "(nil)");
    EXPECT_EQ(b[0]["tag"], "\"{\\\"status\\\":\\\"in_progress\\\"}\"");
    EXPECT_EQ(b[1]["tag"], "(integer) 59");
    EXPECT_TRUE(b[1]["redis"].get<bool>());
    // The transcript shows the lab's key names, not relab's prefix.
    EXPECT_EQ(a[0]["sql"], "SET idem:demo:k1 '{\"status\":\"in_progress\"}' NX GET EX 60");

    const auto keepttl = steps(r, "idem-phase2", 0, "A");
    EXPECT_EQ(keepttl.at(2)["tag"], "(integer) 59");
    const auto two_tier = steps(r, "idem-phase2", 1, "A");
    EXPECT_EQ(two_tier.at(3)["tag"], "(integer) 86400");

    const auto lua_b = steps(r, "idem-lua", 0, "B");
    EXPECT_EQ(lua_b.at(0)["tag"], b[0]["tag"]);  // the same replies as SET ... NX GET

    const auto wt = steps(r, "idem-wrongtype", 0, "redis");
    EXPECT_EQ(wt.at(1)["error"].get<std::string>().rfind("WRONGTYPE", 0), 0u);
    EXPECT_EQ(wt.at(2)["tag"], "hash");
    EXPECT_EQ(wt.at(3)["tag"], "\"b\"");

    const auto mem = steps(r, "idem-memory", 0, "redis");
    const std::string usage = mem.at(1)["tag"];
    ASSERT_EQ(usage.rfind("(integer) ", 0), 0u) << usage;
    const int bytes = std::stoi(usage.substr(10));
    EXPECT_GT(bytes, 150);
    EXPECT_LT(bytes, 260);
    EXPECT_NE(r.out.find("← article: 192 (Redis 8.8)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("× 10,000 (10,000 orders/day, each key kept 24 h) ="), std::string::npos);
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp"));
}

TEST_F(IdemLabsTest, middleware_and_key_design_are_counted_from_the_orders_table_and_the_answers) {
    const auto r = relab("idem-middleware idem-keys --runs 1");
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;

    const auto& click = counts(r, "idem-mw-double-click");
    EXPECT_EQ(click["orders"], 1);
    EXPECT_EQ(click["created"], 1);
    EXPECT_GE(click["conflicts_409"].get<int>(), 1);
    EXPECT_GE(click["replays"].get<int>(), 1);

    EXPECT_EQ(counts(r, "idem-mw-mismatch")["mismatches_422"], 1);
    EXPECT_EQ(counts(r, "idem-mw-mismatch")["orders"], 1);
    EXPECT_EQ(counts(r, "idem-mw-release")["orders"], 1);
    EXPECT_EQ(counts(r, "idem-mw-release")["errors_5xx"], 1);

    EXPECT_EQ(counts(r, "idem-key-correct")["duplicates"], 0);
    EXPECT_EQ(counts(r, "idem-key-correct")["mismatches_422"], 1);
    EXPECT_EQ(counts(r, "idem-key-hash-in-key")["duplicates"], 1);
    EXPECT_EQ(counts(r, "idem-key-hash-in-key")["mismatches_422"], 0);
    EXPECT_EQ(counts(r, "idem-key-no-user")["leaks"], 1);
    EXPECT_EQ(counts(r, "idem-key-owner-check")["leaks"], 0);
    EXPECT_EQ(counts(r, "idem-key-version-bump")["duplicates"], 0);
    EXPECT_GE(counts(r, "idem-key-version-bump")["layer4_caught"].get<int>(), 1);

    // The rows themselves: the duplicate is two orders under one idem_key.
    const auto& orders = lab(r, "idem-key-hash-in-key")["trials"][0]["idem"]["orders"];
    ASSERT_EQ(orders.size(), 2u);
    EXPECT_EQ(orders[0]["idem_key"], orders[1]["idem_key"]);
}

TEST_F(IdemLabsTest, fault_labs_run_on_their_own_servers_and_leave_no_process_or_directory) {
    const auto r = relab("idem-stuck idem-eviction idem-restart idem-failover");
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;

    // Stuck: one-tier keeps answering 409 with about 24 h left; two-tier frees the key.
    EXPECT_EQ(counts(r, "idem-stuck-one-tier")["orders"], 0);
    EXPECT_GE(counts(r, "idem-stuck-one-tier")["conflicts_409"].get<int>(), 5);
    EXPECT_NE(measured(r, "idem-stuck-one-tier", "key of the killed client").find("still in_progress"), std::string::npos);
    EXPECT_EQ(counts(r, "idem-stuck-two-tier")["orders"], 1);
    EXPECT_NE(measured(r, "idem-stuck-two-tier", "key of the killed client").find("freed"), std::string::npos);

    // Eviction: allkeys-lru evicts the 24 h key and the retry duplicates; noeviction refuses writes.
    EXPECT_EQ(counts(r, "idem-eviction-lru")["duplicates"], 1);
    EXPECT_NE(measured(r, "idem-eviction-lru", "evicted_keys"), "0");
    EXPECT_EQ(measured(r, "idem-eviction-lru", "idempotency keys left"), "0 of 1");
    EXPECT_EQ(counts(r, "idem-eviction-noeviction")["duplicates"], 0);
    EXPECT_NE(measured(r, "idem-eviction-noeviction", "OOM errors"), "0");
    EXPECT_EQ(measured(r, "idem-eviction-noeviction", "idempotency keys left"), "1 of 1");
    using Keys = std::vector<std::string>;
    const auto lru_flood = records(r, "idem-eviction-lru", "fault", "flood");
    ASSERT_EQ(lru_flood.size(), 1u);
    EXPECT_EQ(lru_flood[0]["lost"], (Keys{"idem:v1:7:8f3a"})) << lru_flood[0].dump();
    EXPECT_EQ(lru_flood[0]["survived"], Keys{}) << lru_flood[0].dump();
    EXPECT_GT(lru_flood[0]["evicted_keys"].get<int64_t>(), 0);
    EXPECT_EQ(lru_flood[0]["oom_errors"], 0);
    const auto noev_flood = records(r, "idem-eviction-noeviction", "fault", "flood");
    ASSERT_EQ(noev_flood.size(), 1u);
    EXPECT_EQ(noev_flood[0]["survived"], (Keys{"idem:v1:7:8f3a"})) << noev_flood[0].dump();
    EXPECT_EQ(noev_flood[0]["lost"], Keys{});
    EXPECT_GT(noev_flood[0]["oom_errors"].get<int64_t>(), 0);
    EXPECT_EQ(noev_flood[0]["evicted_keys"], 0);

    // Restart: without AOF the key after the snapshot is lost; with AOF nothing is.
    EXPECT_EQ(counts(r, "idem-restart-rdb")["duplicates"], 1);
    EXPECT_EQ(measured(r, "idem-restart-rdb", "idempotency keys lost"), "1 of 2");
    EXPECT_EQ(counts(r, "idem-restart-aof")["duplicates"], 0);
    EXPECT_EQ(measured(r, "idem-restart-aof", "idempotency keys lost"), "0 of 2");
    // The key written before the snapshot survives the crash, the one after it is lost.
    const auto rdb_crash = records(r, "idem-restart-rdb", "fault", "restart");
    ASSERT_EQ(rdb_crash.size(), 1u);
    EXPECT_EQ(rdb_crash[0]["survived"], (Keys{"idem:v1:7:early-1"})) << rdb_crash[0].dump();
    EXPECT_EQ(rdb_crash[0]["lost"], (Keys{"idem:v1:8:late-2"})) << rdb_crash[0].dump();
    const auto aof_crash = records(r, "idem-restart-aof", "fault", "restart");
    ASSERT_EQ(aof_crash.size(), 1u);
    EXPECT_EQ(aof_crash[0]["survived"], (Keys{"idem:v1:7:early-1", "idem:v1:8:late-2"})) << aof_crash[0].dump();
    EXPECT_EQ(aof_crash[0]["lost"], Keys{});

    // Failover: the acknowledged claim is missing on the promoted replica.
    EXPECT_EQ(counts(r, "idem-failover-async")["duplicates"], 1);
    EXPECT_EQ(measured(r, "idem-failover-async", "idempotency keys on the promoted replica"), "0 of 1");
    const auto failover = records(r, "idem-failover-async", "fault", "failover");
    ASSERT_EQ(failover.size(), 1u);
    EXPECT_EQ(failover[0]["lost"], (Keys{"idem:v1:7:8f3a"})) << failover[0].dump();
    EXPECT_EQ(failover[0]["survived"], Keys{});
    // Sentinel's election, not a hand-made promotion: nothing is down before down-after-milliseconds.
    EXPECT_EQ(failover[0]["election"], "sentinel") << failover[0].dump();
    EXPECT_EQ(failover[0]["sentinels"], 3);
    EXPECT_EQ(failover[0]["quorum"], 2);
    EXPECT_GE(failover[0]["switch_ms"].get<int64_t>(), failover[0]["down_after_ms"].get<int64_t>());
    EXPECT_EQ(failover[0]["seen_by"].get<std::string>().rfind("SUBSCRIBE +switch-master on sentinel 127.0.0.1:", 0), 0u);
    // The old primary comes back as the new one's replica (the lab's restart of "redis-replica").
    const auto rejoin = records(r, "idem-failover-async", "fault", "restart");
    ASSERT_EQ(rejoin.size(), 1u);
    EXPECT_EQ(rejoin[0]["target"], "redis-replica");
    EXPECT_EQ(measured(r, "idem-failover-wait-gap", "idempotency keys on the promoted replica"), "1 of 1");
    EXPECT_EQ(counts(r, "idem-failover-wait")["duplicates"], 0);
    EXPECT_EQ(counts(r, "idem-failover-wait-gap")["duplicates"], 1);
    EXPECT_EQ(counts(r, "idem-failover-layer4")["duplicates"], 0);
    EXPECT_GE(counts(r, "idem-failover-layer4")["layer4_caught"].get<int>(), 1);

    EXPECT_TRUE(fs::is_empty(m_dir / "tmp")) << "temp dirs left in " << (m_dir / "tmp");
    EXPECT_TRUE(leftovers().empty()) << leftovers().front();
}

// Runs a copy of the double-click lab (one trial, a business logic of 1.5 s) on servers the test
// starts itself, and calls `stop` once a client's claim won: a failure no fault of the lab explains.
RelabRun run_double_click_and_stop_a_server(IdemLabsTest& t, const fs::path& dir, const relab::EmbeddedRedis& redis,
                                            const relab::EmbeddedPostgres& pg, const std::function<void()>& stop);

TEST_F(IdemLabsTest, postgresql_lost_with_no_fault_scheduled_ends_the_run_with_exit_2_naming_it_not_a_held_lab) {
    relab::EmbeddedRedis redis;
    relab::EmbeddedPostgres pg;
    // SIGINT is PostgreSQL's fast shutdown: every session is cut, as when the server goes away.
    const auto r = run_double_click_and_stop_a_server(*this, m_dir, redis, pg, [&] { ::kill(pg.pid(), SIGINT); });
    EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
    EXPECT_NE(r.err.find("relab: harness failure, no lab result reported"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("lab idem-mw-double-click trial 1"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("the business logic (INSERT INTO orders)"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("no fault of the lab explains it"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("check that PostgreSQL is running"), std::string::npos) << r.err;
    // No lab was judged: no report, no verdict line.
    EXPECT_TRUE(r.report.is_null()) << r.report.dump();
    EXPECT_EQ(r.err.find("held"), std::string::npos) << r.err;
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp")) << "temp dirs left in " << (m_dir / "tmp");
    EXPECT_TRUE(leftovers().empty()) << leftovers().front();
}

TEST_F(IdemLabsTest, redis_lost_with_no_fault_scheduled_ends_the_run_with_exit_2_not_a_503_answer) {
    relab::EmbeddedRedis redis;
    relab::EmbeddedPostgres pg;
    const auto r = run_double_click_and_stop_a_server(*this, m_dir, redis, pg, [&] { ::kill(redis.pid(), SIGKILL); });
    EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
    EXPECT_NE(r.err.find("relab: harness failure, no lab result reported"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("the idempotency store failed"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("no fault of the lab explains it"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("check that redis-server is running"), std::string::npos) << r.err;
    EXPECT_TRUE(r.report.is_null()) << r.report.dump();
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp")) << "temp dirs left in " << (m_dir / "tmp");
    EXPECT_TRUE(leftovers().empty()) << leftovers().front();
}

RelabRun run_double_click_and_stop_a_server(IdemLabsTest& t, const fs::path& dir, const relab::EmbeddedRedis& redis,
                                            const relab::EmbeddedPostgres& pg, const std::function<void()>& stop) {
    std::string text = slurp(fs::path(RELAB_SOURCE_DIR) / "scenarios" / "idem-f-mw-double-click.json");
    auto replace = [&](const std::string& from, const std::string& to) {
        const auto at = text.find(from);
        if (at == std::string::npos) throw std::runtime_error("the double-click lab has no " + from);
        text.replace(at, from.size(), to);
    };
    replace("\"runs\": 3", "\"runs\": 1");
    replace("\"work_ms\": 300", "\"work_ms\": 1500");
    const fs::path lab = dir / "double-click.json";
    std::ofstream(lab) << text;

    // The clients' histories are under relab's temp dir; a claim that won shows as decision "first".
    std::atomic<bool> done{false};
    bool stopped = false;
    std::thread watcher([&] {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (!done && std::chrono::steady_clock::now() < deadline) {
            std::error_code ec;
            for (auto it = fs::recursive_directory_iterator(dir / "tmp", ec); !ec && it != fs::end(it);
                 it.increment(ec)) {
                if (it->path().extension() != ".jsonl") continue;
                if (slurp(it->path()).find("\"decision\":\"first\"") == std::string::npos) continue;
                stop();
                stopped = true;
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    });
    const auto r = t.relab_run(fmt::format("{} --redis-url {} --pg-url {}", lab.string(), redis.endpoint().display(),
                                           pg.endpoint().display()));
    done = true;
    watcher.join();
    EXPECT_TRUE(stopped) << "no client claimed first: " << r.err;
    return r;
}

TEST_F(IdemLabsTest, peak_hour_duplicates_without_layer4_and_none_with_it) {
    const auto r = relab("idem-peak");
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    EXPECT_GT(counts(r, "idem-peak")["duplicates"].get<int>(), 0);
    EXPECT_EQ(counts(r, "idem-peak-layer4")["duplicates"], 0);
    EXPECT_GT(counts(r, "idem-peak-layer4")["layer4_caught"].get<int>(), 0);
}

TEST_F(IdemLabsTest, benchmark_measures_both_stores_and_the_articles_tools_on_the_same_servers) {
    std::string text = slurp(fs::path(RELAB_SOURCE_DIR) / "scenarios" / "idem-z-bench.json");
    auto replace = [&](const std::string& from, const std::string& to) {
        const auto at = text.find(from);
        ASSERT_NE(at, std::string::npos) << from;
        text.replace(at, from.size(), to);
    };
    replace("\"duration_ms\": 1000", "\"duration_ms\": 300");
    replace("\"redis_benchmark_requests\": 20000", "\"redis_benchmark_requests\": 2000");
    replace("\"pgbench_seconds\": 2", "\"pgbench_seconds\": 1");
    std::ofstream(m_dir / "bench.json") << text;
    const auto r = relab((m_dir / "bench.json").string());
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const std::string ratio = measured(r, "idem-bench", "Redis ÷ PostgreSQL, fsync per commit");
    EXPECT_GT(std::stod(ratio), 1.0) << "PostgreSQL waiting for fsync per commit should be slower than Redis";

    // Every figure is a history record an expectation can read: one each, by name, from its tool.
    std::map<std::string, json> figures;
    for (const auto& f : records(r, "idem-bench", "figure")) {
        EXPECT_EQ(f["actor"], "relab");
        EXPECT_TRUE(figures.emplace(f.at("name").get<std::string>(), f).second) << "twice: " << f.dump();
    }
    const std::map<std::string, std::string> tools = {
        {"redis_claim_us", "relab"},
        {"pg_fsync_claim_us", "relab"},
        {"pg_async_claim_us", "relab"},
        {"fsync_ratio", "relab"},
        {"async_ratio", "relab"},
        {"redis_benchmark_claim_us", "redis-benchmark"},
        {"pgbench_fsync_claim_us", "pgbench"},
        {"pgbench_async_claim_us", "pgbench"},
        {"tools_fsync_ratio", "redis-benchmark/pgbench"},
        {"tools_async_ratio", "redis-benchmark/pgbench"}};
    EXPECT_EQ(figures.size(), tools.size());
    for (const auto& [name, tool] : tools) {
        ASSERT_TRUE(figures.count(name)) << "no figure " << name;
        EXPECT_EQ(figures[name]["tool"], tool) << name;
        EXPECT_GT(figures[name]["value"].get<double>(), 0.0) << name;
    }
    // The ratio record is relab's loops' per-claim times divided, as the measurement prints it.
    EXPECT_NEAR(figures["fsync_ratio"]["value"].get<double>(),
                figures["pg_fsync_claim_us"]["value"].get<double>() / figures["redis_claim_us"]["value"].get<double>(),
                1e-6 * figures["fsync_ratio"]["value"].get<double>());
    EXPECT_EQ(fmt::format("{:.1f}×", figures["fsync_ratio"]["value"].get<double>()), ratio);
    EXPECT_NEAR(figures["redis_benchmark_claim_us"]["value"].get<double>(),
                1e6 / std::stod(measured(r, "idem-bench", "redis-benchmark -n 2000 -c 1, requests/s")),
                0.01 * figures["redis_benchmark_claim_us"]["value"].get<double>());
    EXPECT_GT(std::stod(measured(r, "idem-bench", "redis-benchmark")), 0.0);
    EXPECT_GT(std::stod(measured(r, "idem-bench", "pgbench -c 1 -T 1, tps (fsync per commit)")), 0.0);
    EXPECT_GT(std::stod(measured(r, "idem-bench", "pgbench -c 1 -T 1, tps (synchronous_commit=off)")), 0.0);
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp"));
}

TEST_F(IdemLabsTest, benchmark_without_redis_benchmark_ends_the_run_with_exit_2_naming_what_to_install) {
    // A PATH with redis-server and nothing else: relab still starts its servers (PostgreSQL is found
    // in /usr/lib/postgresql), but the article's tool is missing.
    const fs::path bin = m_dir / "bin";
    fs::create_directories(bin);
    const auto redis_server = relab::find_binary("redis-server");
    fs::create_symlink(redis_server, bin / "redis-server");
    const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
    setenv("PATH", bin.c_str(), 1);
    const auto r = relab("idem-bench");
    setenv("PATH", old_path.c_str(), 1);
    EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
    EXPECT_NE(r.err.find("idem-bench runs redis-benchmark, which is not on PATH: install it (apt-get install -y redis-tools"),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(r.report.is_null()) << r.report.dump();
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp")) << "temp dirs left in " << (m_dir / "tmp");
    EXPECT_TRUE(leftovers().empty()) << leftovers().front();
}

TEST_F(IdemLabsTest, cluster_hash_tag_puts_a_users_keys_in_one_slot_and_a_hot_users_claims_on_one_node) {
    const auto r = relab("idem-cluster");
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const std::string id = "idem-cluster";

    const json tagged = observation(r, id, "keyslot", "pair", "tagged");
    EXPECT_EQ(tagged["slots"][0], tagged["slots"][1]) << tagged.dump();
    EXPECT_TRUE(tagged["same_node"].get<bool>());
    const json untagged = observation(r, id, "keyslot", "pair", "untagged");
    EXPECT_NE(untagged["slots"][0], untagged["slots"][1]) << untagged.dump();
    EXPECT_EQ(observation(r, id, "eval", "pair", "tagged")["reply"], "OK");
    const json crossslot = observation(r, id, "eval", "pair", "untagged");
    EXPECT_EQ(crossslot["error_code"], "CROSSSLOT");
    EXPECT_EQ(crossslot["reply"].get<std::string>().rfind("(error) CROSSSLOT", 0), 0u);

    // With the tag every claim of the hot user lands on one node; without it, on all three alike.
    const json hot = observation(r, id, "load", "load", "tagged");
    auto keys = hot["keys_per_node"].get<std::vector<int64_t>>();
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(keys, (std::vector<int64_t>{0, 0, 3000}));
    EXPECT_EQ(hot["set_calls_per_node"], hot["keys_per_node"]);
    EXPECT_EQ(hot["slots"], 1);
    const json spread = observation(r, id, "load", "load", "untagged");
    int64_t total = 0;
    for (const int64_t n : spread["keys_per_node"].get<std::vector<int64_t>>()) {
        EXPECT_GT(n, 800) << spread.dump();  // a third of 3000, ± 7 standard deviations
        EXPECT_LT(n, 1200) << spread.dump();
        total += n;
    }
    EXPECT_EQ(total, 3000);
    EXPECT_EQ(spread["set_calls_per_node"], spread["keys_per_node"]);
    EXPECT_GT(spread["slots"].get<int>(), 2000);

    EXPECT_EQ(measured(r, id, "hot user, 3000 claims as idem:v1:{user:7}:<client_key>: keys per node")
                  .find(fmt::format("{} / {} / {}", hot["keys_per_node"][0].get<int64_t>(),
                                    hot["keys_per_node"][1].get<int64_t>(), hot["keys_per_node"][2].get<int64_t>())),
              0u);
    EXPECT_NE(r.out.find("(article: a hot user (big shop, bot) puts all its load on one node"), std::string::npos)
        << r.out;
    EXPECT_TRUE(lab(r, id).at("summary").at("held").get<bool>());
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp")) << "temp dirs left in " << (m_dir / "tmp");
    EXPECT_TRUE(leftovers().empty()) << leftovers().front();
}

TEST_F(IdemLabsTest, cluster_lab_breaks_when_its_expectation_says_a_hot_user_spreads) {
    std::string text = slurp(fs::path(RELAB_SOURCE_DIR) / "scenarios" / "idem-y2-cluster.json");
    const std::string from = R"("load": "tagged", "first": 3000, "nodes_used": 1, "nodes_called": 1)";
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos);
    text.replace(at, from.size(), R"("load": "tagged", "first": 3000, "nodes_used": 3, "nodes_called": 3)");
    std::ofstream(m_dir / "cluster.json") << text;
    // Broken on purpose: kept out of the CI report.
    const auto r = relab((m_dir / "cluster.json").string(), CiReport::skip);
    EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
    const json& summary = lab(r, "idem-cluster").at("summary");
    EXPECT_FALSE(summary.at("held").get<bool>());
    ASSERT_EQ(summary.at("failures").size(), 1u) << summary.dump();
    EXPECT_NE(summary.at("failures")[0].get<std::string>().find("load=tagged, nodes_called=3, nodes_used=3"),
              std::string::npos)
        << summary.dump();
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp"));
    EXPECT_TRUE(leftovers().empty()) << leftovers().front();
}

TEST_F(IdemLabsTest, ctrl_c_while_the_cluster_forms_stops_every_node_and_removes_their_dirs) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        setenv("TMPDIR", (m_dir / "tmp").c_str(), 1);
        const int null = ::open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        execl(RELAB_BINARY, RELAB_BINARY, "run", "idem-cluster", static_cast<char*>(nullptr));
        _exit(127);
    }
    // Cluster nodes name themselves "redis-server 127.0.0.1:PORT [cluster]"; they wait 2 s before
    // cluster_state:ok, so the signal lands while the lab waits for the cluster to form.
    auto cluster_nodes = [&] {
        const auto processes = leftovers();
        return std::count_if(processes.begin(), processes.end(),
                             [](const std::string& p) { return p.find("[cluster]") != std::string::npos; });
    };
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (cluster_nodes() < 3 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_EQ(cluster_nodes(), 3) << "the run never started its cluster";
    ASSERT_EQ(kill(pid, SIGINT), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 130);
    EXPECT_TRUE(leftovers().empty()) << leftovers().front();
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp")) << "temp dirs left in " << (m_dir / "tmp");
}

}  // namespace idem_test
