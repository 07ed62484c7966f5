// Redis Sentinel for real: a primary, its replica and three `redis-server --sentinel` children
// started by SentinelSet; the primary is SIGKILLed and Sentinel's own election promotes the replica.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <thread>

#include "clients/redis_client.h"
#include "clients/redis_link.h"
#include "servers/sentinel.h"
#include "servers/servers.h"
#include "process/temp_dir.h"

namespace relab {
namespace sentinel_test {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Processes (not zombies of ours: we reap) whose title or command line names 127.0.0.1:<port>
// with "sentinel": redis-server retitles itself "redis-server 127.0.0.1:<port> [sentinel]".
std::vector<std::string> sentinel_processes_on(int port) {
    std::vector<std::string> out;
    const std::string needle = "127.0.0.1:" + std::to_string(port);
    for (const auto& e : fs::directory_iterator("/proc")) {
        const std::string name = e.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::string cmdline = slurp(e.path() / "cmdline");
        std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
        if (cmdline.find(needle) != std::string::npos && cmdline.find("sentinel") != std::string::npos)
            out.push_back(name + ": " + cmdline);
    }
    return out;
}

bool eventually(const std::function<bool()>& cond, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        if (cond()) return true;
        std::this_thread::sleep_for(10ms);
    }
    return cond();
}

std::string info_field(const RedisEndpoint& ep, const std::string& name) {
    try {
        RedisClient c(ep, 1000ms);
        const auto info = info_section(c, "replication");
        const auto it = info.find(name);
        return it == info.end() ? "" : it->second;
    } catch (const RedisError& e) {
        return std::string("error: ") + e.what();
    }
}

// Points TempDir at a private directory, to see exactly what the sentinels leave.
class ScopedTmpdir {
public:
    ScopedTmpdir() : m_dir("relab-sentinel-test-") {
        if (const char* old = std::getenv("TMPDIR")) m_old = old;
        setenv("TMPDIR", m_dir.path().c_str(), 1);
    }
    ~ScopedTmpdir() {
        if (m_old)
            setenv("TMPDIR", m_old->c_str(), 1);
        else
            unsetenv("TMPDIR");
    }
    const std::string& path() const { return m_dir.path(); }
    std::vector<std::string> entries() const {
        std::vector<std::string> out;
        for (const auto& e : fs::directory_iterator(path())) out.push_back(e.path().filename());
        return out;
    }

private:
    TempDir m_dir;
    std::optional<std::string> m_old;
};

struct PrimaryAndReplica {
    EmbeddedRedis primary;
    EmbeddedRedis replica;
    static RedisOptions replica_of(const EmbeddedRedis& p) {
        RedisOptions o;
        o.config["replicaof"] = "127.0.0.1 " + std::to_string(p.endpoint().port);
        return o;
    }
    PrimaryAndReplica() : primary(), replica(replica_of(primary)) {
        if (!eventually([&] { return info_field(replica.endpoint(), "master_link_status") == "up"; }, 15s))
            throw std::runtime_error("the replica did not sync");
    }
};

TEST(SentinelTest, SigkilledPrimaryIsReplacedBySentinelsElectionAndNothingIsLeftBehind) {
    ScopedTmpdir tmp;
    std::vector<int> pids;
    std::vector<int> ports;
    std::string dir;
    {
        PrimaryAndReplica servers;
        const RedisEndpoint old = servers.primary.endpoint();
        const RedisEndpoint replica = servers.replica.endpoint();
        SentinelSet sentinels(old, 1);
        pids = sentinels.pids();
        dir = sentinels.dir();
        for (const auto& ep : sentinels.endpoints()) ports.push_back(ep.port);
        ASSERT_EQ(pids.size(), 3u);
        ASSERT_EQ(ports.size(), 3u);
        EXPECT_TRUE(fs::is_directory(dir));
        // Each is a sentinel that knows the primary, the replica and the two others.
        for (const auto& ep : sentinels.endpoints()) {
            RedisClient c(ep);
            EXPECT_EQ(parse_info(c.call({"INFO", "server"}).str).at("redis_mode"), "sentinel");
            const RedisReply m = c.call({"SENTINEL", "MASTER", "relab"});
            std::map<std::string, std::string> f;
            for (size_t i = 0; i + 1 < m.elements.size(); i += 2) f[m.elements[i].str] = m.elements[i + 1].str;
            EXPECT_EQ(f["port"], std::to_string(old.port));
            EXPECT_EQ(f["num-slaves"], "1");
            EXPECT_EQ(f["num-other-sentinels"], "2");
            EXPECT_EQ(f["quorum"], "2");
            EXPECT_EQ(f["down-after-milliseconds"], "500");
        }
        EXPECT_EQ(sentinels.master_addr().port, old.port);

        // A client that finds the primary through the sentinels, as production clients do.
        RedisLink link(old, RedisNamespace{"relab:sentinel-test:"}, "relab:sentinel-test:", sentinels.endpoints(),
                       sentinels.master_name());
        LinkKv kv(link);
        kv.set("before", "1", KvSetOptions{});
        EXPECT_EQ(kv.get("before"), "1");
        // Replication is asynchronous: the replica acknowledges the key before the kill.
        ASSERT_EQ(kv.wait_replicas(1, Millis{5000}), 1);

        const auto t0 = std::chrono::steady_clock::now();
        servers.primary.crash();  // SIGKILL
        // Until Sentinel switches, the client's calls fail: the sentinels still name the dead one.
        EXPECT_THROW(kv.get("before"), KvError);

        const MasterSwitch sw = sentinels.wait_for_switch_master(old, 30s, t0);
        EXPECT_EQ(sw.primary.port, replica.port);
        EXPECT_EQ(sw.method, "SUBSCRIBE +switch-master");
        EXPECT_EQ(sw.message, "relab 127.0.0.1 " + std::to_string(old.port) + " 127.0.0.1 " + std::to_string(replica.port));
        // Nothing can be declared down before down-after-milliseconds of silence.
        EXPECT_GE(sw.ms, 500.0);
        EXPECT_LT(sw.ms, 30000.0);
        std::cout << "kill -> +switch-master: " << sw.ms << " ms (" << sw.sentinel << ")\n";

        sentinels.wait_until_all_name(replica, 10s);
        EXPECT_EQ(sentinels.master_addr().port, replica.port);
        for (const auto& ep : sentinels.endpoints()) {
            RedisClient c(ep);
            const RedisReply r = c.call({"SENTINEL", "get-master-addr-by-name", "relab"});
            ASSERT_EQ(r.elements.size(), 2u);
            EXPECT_EQ(r.elements[1].str, std::to_string(replica.port));
        }
        {
            RedisClient promoted(replica);
            EXPECT_EQ(promoted.call({"ROLE"}).elements.at(0).str, "master");
        }
        // The client asks the sentinels again and lands on the promoted replica, which has the
        // key written before the kill (it was replicated).
        std::string last;
        EXPECT_TRUE(eventually(
            [&] {
                try {
                    const auto v = kv.get("before");
                    last = v ? "\"" + *v + "\"" : "(nil)";
                    return v == std::optional<std::string>("1");
                } catch (const KvError& e) {
                    last = e.what();
                    return false;
                }
            },
            5s))
            << "last: " << last;
        kv.set("after", "2", KvSetOptions{});
        {
            RedisClient promoted(replica);
            EXPECT_EQ(promoted.call({"GET", "relab:sentinel-test:after"}).str, "2");
        }

        // The old primary comes back empty, a master: Sentinel makes it a replica of the new one.
        servers.primary.restart();
        EXPECT_TRUE(eventually(
            [&] {
                return info_field(old, "role") == "slave" && info_field(old, "master_port") == std::to_string(replica.port) &&
                       info_field(old, "master_link_status") == "up";
            },
            20s))
            << info_field(old, "role") << " " << info_field(old, "master_port") << sentinels.log_tail();
        // One failover, seen once however many sentinels published it.
        EXPECT_EQ(sentinels.switches().size(), 1u);
        for (int pid : pids) EXPECT_TRUE(fs::exists("/proc/" + std::to_string(pid)));
    }
    for (int pid : pids) EXPECT_FALSE(fs::exists("/proc/" + std::to_string(pid))) << "sentinel " << pid << " not reaped";
    for (int port : ports) EXPECT_TRUE(sentinel_processes_on(port).empty()) << sentinel_processes_on(port).front();
    EXPECT_FALSE(fs::exists(dir));
    EXPECT_TRUE(tmp.entries().empty()) << tmp.entries().front();
}

TEST(SentinelTest, ASentinelThatCannotStartIsAnEnvironmentErrorQuotingItsLogAndLeavesNothing) {
    ScopedTmpdir tmp;
    EmbeddedRedis primary;
    SentinelOptions o;
    o.quorum = 0;  // sentinel.conf refuses it: "Quorum must be 1 or greater."
    std::string message;
    try {
        SentinelSet sentinels(primary.endpoint(), 0, o);
    } catch (const EnvironmentError& e) {
        message = e.what();
    }
    EXPECT_NE(message.find("redis-server --sentinel"), std::string::npos) << message;
    EXPECT_NE(message.find("Quorum must be 1 or greater"), std::string::npos) << message;
    // Only the primary's directory is left, and it goes with the primary.
    EXPECT_EQ(tmp.entries().size(), 1u);
}

TEST(SentinelTest, AFailoverThatNeverComesIsAnEnvironmentErrorNotAHang) {
    ScopedTmpdir tmp;
    PrimaryAndReplica servers;
    SentinelSet sentinels(servers.primary.endpoint(), 1);
    // The primary is alive: no sentinel switches.
    std::string message;
    try {
        sentinels.wait_for_switch_master(servers.primary.endpoint(), 300ms, std::chrono::steady_clock::now());
    } catch (const EnvironmentError& e) {
        message = e.what();
    }
    EXPECT_NE(message.find("no sentinel published +switch-master"), std::string::npos) << message;
    EXPECT_TRUE(sentinels.switches().empty());
}

}  // namespace sentinel_test
}  // namespace relab
