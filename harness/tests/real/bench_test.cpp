// `relab bench redis` end to end, on the throwaway redis-server it starts itself, with small
// counts: every figure is measured and its ratio is computed from the raw figures written beside
// it. No speed is asserted here: the targets are the bench's to check, not a test's.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "relab_cli.h"

namespace relab {

namespace fs = std::filesystem;

class BenchTest : public relab::test::RelabDirTest {
protected:
    // Runs `relab bench ARGS` with TMPDIR in the test's folder (and `env` before it, if any);
    // the exit status.
    int bench(const std::string& args, const std::string& env = "") {
        const std::string cmd = fmt::format("TMPDIR={} {} {} bench {} >{} 2>{}", (m_dir / "tmp").string(), env,
                                            RELAB_BINARY, args, (m_dir / "out.txt").string(),
                                            (m_dir / "err.txt").string());
        const int status = std::system(cmd.c_str());
        m_out = test::slurp(m_dir / "out.txt");
        m_err = test::slurp(m_dir / "err.txt");
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    bool tmp_is_empty() const { return fs::is_empty(m_dir / "tmp"); }

    std::string m_out, m_err;
};

TEST_F(BenchTest, redis_bench_writes_every_figure_with_a_ratio_computed_from_its_raw_figures) {
    const fs::path json_path = m_dir / "bench.json";
    ASSERT_EQ(bench(fmt::format("redis --requests 200 --samples 50 --repetitions 1 --json {}", json_path.string())), 0)
        << m_out << m_err;
    const nlohmann::json j = nlohmann::json::parse(test::slurp(json_path));
    EXPECT_FALSE(j.at("context").at("redis_version").get<std::string>().empty());
    EXPECT_GE(j.at("context").at("num_cpus").get<int>(), 1);

    std::set<std::string> names;
    for (const auto& b : j.at("benchmarks")) {
        const std::string name = b.at("name");
        names.insert(name);
        SCOPED_TRACE(name);
        EXPECT_GT(b.at("iterations").get<int64_t>(), 0);
        EXPECT_GT(b.at("real_time").get<double>(), 0);
        if (name.rfind("machine/", 0) == 0) {
            // The machine's own speed: per read or record in ns, no ratio and no target.
            EXPECT_EQ(b.at("time_unit"), "ns");
            EXPECT_TRUE(b.at("ratio").is_null());
            EXPECT_FALSE(b.contains("met"));
            const char* raw = name == "machine/memory_read" ? "read_ns" : "record_ns";
            EXPECT_EQ(b.at(raw).get<double>(), b.at("real_time").get<double>());
            continue;
        }
        EXPECT_EQ(b.at("time_unit"), "us");
        ASSERT_TRUE(b.at("ratio").is_number());
        const double ratio = b.at("ratio");
        // Every figure has a target but the shipped load lab's, which shows what COUNT 1 costs, the
        // autocommit one's, which shows what a transaction per event costs, and what relab's client
        // adds to a receipt.
        if (name == "load/noop_jobs/count:1" || name == "load/noop_jobs/commit:each" ||
            name.rfind("receipt/client/", 0) == 0)
            EXPECT_FALSE(b.contains("met")) << name;
        else
            EXPECT_TRUE(b.at("met").is_boolean()) << name;
        // The ratio from the raw figures written beside it.
        double expected = 0;
        if (name.rfind("redis/", 0) == 0 || name.rfind("ping/", 0) == 0) {
            ASSERT_GT(b.at("relab_us").get<double>(), 0);
            ASSERT_GT(b.at("redis_benchmark_us").get<double>(), 0);
            expected = b.at("relab_us").get<double>() / b.at("redis_benchmark_us").get<double>();
        } else if (name.rfind("receipt/client/", 0) == 0) {
            // relab's receipts against the same receipts through bare hiredis calls.
            ASSERT_GT(b.at("receipt_us").get<double>(), 0);
            ASSERT_GT(b.at("bare_hiredis_receipt_us").get<double>(), 0);
            expected = b.at("receipt_us").get<double>() / b.at("bare_hiredis_receipt_us").get<double>();
        } else if (name.rfind("receipt/", 0) == 0) {
            ASSERT_GT(b.at("receipt_us").get<double>(), 0);
            ASSERT_GT(b.at("paired_ping_us").get<double>(), 0);
            ASSERT_GT(b.at("relab_ping_us").get<double>(), 0);
            ASSERT_GT(b.at("redis_benchmark_ping_us").get<double>(), 0);
            ASSERT_GT(b.at("bare_hiredis_receipt_us").get<double>(), 0);
            expected = b.at("receipt_us").get<double>() / b.at("paired_ping_us").get<double>();
        } else if (name == "load/producer_xadd") {
            ASSERT_GT(b.at("relab_xadd_per_s").get<double>(), 0);
            ASSERT_GT(b.at("redis_benchmark_xadd_per_s").get<double>(), 0);
            expected = b.at("relab_xadd_per_s").get<double>() / b.at("redis_benchmark_xadd_per_s").get<double>();
        } else if (name.rfind("load/noop_jobs", 0) == 0) {
            // The S1 load lab run by `relab run` with free jobs: its events applied per second,
            // its consumer reading 100 entries per XREADGROUP with one XACK each and one
            // transaction (or an autocommit UPDATE per event), and as shipped.
            const bool shipped = name == "load/noop_jobs/count:1";
            EXPECT_EQ(b.at("read_count").get<int>(), shipped ? 1 : 100) << name;
            EXPECT_EQ(b.at("ack").get<std::string>(), shipped ? "each" : "batch") << name;
            EXPECT_EQ(b.at("commit").get<std::string>(), name == "load/noop_jobs" ? "batch" : "each") << name;
            ASSERT_GT(b.at("load_lab_events_per_s").get<double>(), 0);
            ASSERT_GT(b.at("redis_benchmark_xadd_per_s").get<double>(), 0);
            EXPECT_GT(b.at("events").get<int64_t>(), 0);
            expected = b.at("load_lab_events_per_s").get<double>() / b.at("redis_benchmark_xadd_per_s").get<double>();
        } else {
            ADD_FAILURE() << "unexpected figure " << name;
        }
        EXPECT_NEAR(ratio, expected, 1e-9 * expected);
    }
    EXPECT_EQ(names, (std::set<std::string>{"redis/XADD", "redis/XREADGROUP", "redis/SET_NX_GET", "ping/p50",
                                            "ping/p99", "receipt/p50", "receipt/p99", "receipt/client/p50",
                                            "receipt/client/p99", "load/producer_xadd",
                                            "load/noop_jobs", "load/noop_jobs/commit:each", "load/noop_jobs/count:1",
                                            "machine/memory_read",
                                            "machine/json_record"}));
    // The table names each figure; the server and its folder are gone.
    EXPECT_NE(m_out.find("receipt/p99"), std::string::npos) << m_out;
    EXPECT_TRUE(tmp_is_empty());

    // --compare against the file just written: every figure in both, each 0% changed.
    ASSERT_EQ(bench(fmt::format("--compare {} --against {}", json_path.string(), json_path.string())), 0) << m_err;
    EXPECT_NE(m_out.find("redis/XREADGROUP"), std::string::npos) << m_out;
    EXPECT_NE(m_out.find("+0.0%"), std::string::npos) << m_out;
}

TEST_F(BenchTest, a_missing_tool_is_named_with_what_to_install_exit_2_and_nothing_left) {
    // redis-server on PATH, redis-benchmark not.
    const fs::path bin = m_dir / "bin";
    fs::create_directories(bin);
    const char* path = std::getenv("PATH");
    std::string redis_server;
    for (const std::string dir : {"/usr/bin", "/usr/local/bin"})
        if (fs::exists(dir + "/redis-server")) redis_server = dir + "/redis-server";
    ASSERT_FALSE(redis_server.empty()) << "redis-server not found (PATH " << (path ? path : "") << ")";
    fs::create_symlink(redis_server, bin / "redis-server");
    EXPECT_EQ(bench("redis --requests 100", "PATH=" + bin.string()), 2) << m_out << m_err;
    EXPECT_NE(m_err.find("redis-benchmark"), std::string::npos) << m_err;
    EXPECT_NE(m_err.find("apt-get install -y redis-tools"), std::string::npos) << m_err;
    EXPECT_TRUE(tmp_is_empty());

    // Neither: redis-server is named first, with its package.
    EXPECT_EQ(bench("", "PATH=" + (m_dir / "nothing").string()), 2) << m_out << m_err;
    EXPECT_NE(m_err.find("redis-server not found"), std::string::npos) << m_err;
    EXPECT_NE(m_err.find("apt-get install -y redis-server"), std::string::npos) << m_err;
    EXPECT_TRUE(tmp_is_empty());
}

}  // namespace relab
