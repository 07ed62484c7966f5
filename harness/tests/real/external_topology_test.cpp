// relab on a Redis Cluster and a Sentinel set that the test starts and hands over by URL, as a user
// hands theirs: the S2 labs route by the user's cluster's slots; the failover lab is skipped on the
// user's sentinels without --allow-server-faults while the other labs run on the primary they name,
// and with it fails their primary over and moves it back; and every key outside relab's namespace
// is byte-identical afterwards.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "clients/cluster_client.h"
#include "clients/redis_client.h"
#include "outside_servers.h"
#include "relab_cli.h"
#include "servers/redis_cluster.h"
#include "servers/sentinel.h"

namespace external_topology_test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using json = nlohmann::json;
using relab::ClusterClient;
using relab::ClusterClientOptions;
using relab::EmbeddedRedis;
using relab::RedisClient;
using relab::RedisEndpoint;
using relab::RedisReply;
using relab::test::lab_of;
using relab::test::run_relab;

using Snapshot = relab::test::RedisSnapshot;
const auto& snapshot = relab::test::redis_snapshot;

// Keys of a run of relab ("relab:<run id>:…"), not the user's "relab:not-a-run:…".
size_t run_keys(const RedisEndpoint& ep) {
    size_t n = 0;
    for (const auto& [key, value] : snapshot(ep))
        n += key.rfind("relab:", 0) == 0 && key.rfind("relab:not-a-run:", 0) != 0 ? 1 : 0;
    return n;
}

// The user's keys of several types, one with a TTL, all under the hash tag `tag`.
std::vector<std::vector<std::string>> user_writes(const std::string& tag) {
    const std::string p = "app:{" + tag + "}:";
    return {{"SET", p + "string", "hello"},        {"SET", p + "session", "token", "PX", "3600000"},
            {"RPUSH", p + "list", "a", "b"},       {"HSET", p + "hash", "f", "v"},
            {"ZADD", p + "zset", "1", "one"},      {"XADD", p + "orders", "1-1", "type", "created"},
            {"SET", "relab:not-a-run:{" + tag + "}", "keep me"}};
}

struct TestDir {
    fs::path path = fs::temp_directory_path() / fmt::format("relab-external-test-{}-{}", getpid(), ++counter);
    TestDir() { fs::create_directories(path / "tmp"); }
    ~TestDir() { fs::remove_all(path); }
    static inline int counter = 0;
};

// The observe record where relab says on which node each shard's stream lives.
std::set<std::string> shard_nodes(const json& trial) {
    std::set<std::string> out;
    for (const auto& r : trial.at("history"))
        if (r.at("op") == "observe" && r.contains("streams"))
            for (const auto& s : r.at("streams")) out.insert(s.at("node").get<std::string>());
    return out;
}

TEST(ExternalTopologyTest, s2_labs_route_by_the_slots_of_a_users_cluster_and_leave_its_other_keys_alone) {
    relab::EmbeddedRedisCluster cluster;  // 3 masters; q0, q1 and q2 hash to one each
    const auto nodes = cluster.endpoints();
    ClusterClient writer(nodes, ClusterClientOptions::refusing());
    for (const std::string tag : {"a", "b", "c", "d", "e", "f"})
        for (const auto& argv : user_writes(tag)) writer.call(argv.at(1), argv);
    std::vector<Snapshot> before;
    for (const auto& ep : nodes) before.push_back(snapshot(ep));
    for (const auto& s : before) ASSERT_FALSE(s.empty()) << "every master holds some of the user's keys";

    // Two seed nodes only: relab reads the third from the cluster's slot map.
    TestDir dir;
    const auto r = run_relab(dir.path, fmt::format("s2-shard s2-s1-same-workload s2-shard-failover --runs 1 --redis-url "
                                                   "redis+cluster://127.0.0.1:{},127.0.0.1:{}",
                                                   nodes[0].port, nodes[1].port));
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    // Killing a master is done only to a cluster relab forms: on the user's, the lab is skipped.
    const json& failover = lab_of(r, "s2-shard-failover");
    EXPECT_TRUE(failover.at("skipped").get<bool>()) << r.out;
    EXPECT_NE(failover.at("skip_reason").get<std::string>().find("never to yours"), std::string::npos) << r.out;
    const json& shard = lab_of(r, "s2-shard");
    EXPECT_TRUE(shard.at("summary").at("held").get<bool>()) << r.out;
    std::set<std::string> expected;
    for (const auto& ep : nodes) expected.insert(fmt::format("127.0.0.1:{}", ep.port));
    EXPECT_EQ(shard_nodes(shard.at("trials").at(0)), expected) << "one shard on each of the user's masters";
    EXPECT_TRUE(lab_of(r, "s2-s1-same-workload").at("summary").at("held").get<bool>()) << r.out;

    for (size_t i = 0; i < nodes.size(); ++i) {
        EXPECT_EQ(snapshot(nodes[i]), before[i]) << "master " << i + 1 << " changed";
        EXPECT_EQ(run_keys(nodes[i]), 0u) << "master " << i + 1;
    }
    EXPECT_TRUE(fs::is_empty(dir.path / "tmp"));
}

// A primary, its replica and 3 sentinels, started here and handed to relab as the user's. A
// supervisor thread starts a server again once its process has ended, as systemd or Docker's
// restart policy would: it must have nothing to do, since relab stops no server of the user's.
struct UserSentinelSet {
    EmbeddedRedis primary;
    EmbeddedRedis replica{replica_of(primary)};
    std::unique_ptr<relab::SentinelSet> sentinels;
    std::atomic<bool> stop{false};
    std::atomic<int> restarts{0};
    std::thread supervisor;

    static relab::RedisOptions replica_of(const EmbeddedRedis& p) {
        relab::RedisOptions o;
        o.config["replicaof"] = fmt::format("127.0.0.1 {}", p.endpoint().port);
        return o;
    }
    static bool ended(int pid) {
        relab::test::ProcInfo p;
        return !relab::test::read_proc(pid, p) || p.state == 'Z';
    }
    UserSentinelSet() {
        RedisClient r(replica.endpoint());
        for (int i = 0; i < 1500 && relab::info_section(r, "replication")["master_link_status"] != "up"; ++i)
            std::this_thread::sleep_for(10ms);
        sentinels = std::make_unique<relab::SentinelSet>(primary.endpoint(), 1);
        supervisor = std::thread([this] {
            while (!stop.load()) {
                for (EmbeddedRedis* s : {&primary, &replica})
                    if (ended(s->pid())) {
                        s->restart();
                        ++restarts;
                    }
                std::this_thread::sleep_for(20ms);
            }
        });
    }
    ~UserSentinelSet() {
        stop.store(true);
        supervisor.join();
    }
    std::string url() const {
        const auto& s = sentinels->endpoints();
        return fmt::format("redis+sentinel://127.0.0.1:{},127.0.0.1:{},127.0.0.1:{}/{}", s.at(0).port, s.at(1).port,
                           s.at(2).port, sentinels->master_name());
    }
};

TEST(ExternalTopologyTest, without_the_opt_in_the_failover_lab_leaves_a_users_sentinel_set_alone) {
    UserSentinelSet user;
    ASSERT_EQ(user.restarts.load(), 0);
    {
        RedisClient c(user.primary.endpoint());
        for (const auto& argv : user_writes("u")) c.call(argv);
        ASSERT_GE(c.call({"WAIT", "1", "5000"}).integer, 1);
    }
    const Snapshot before = snapshot(user.primary.endpoint());
    const int primary_pid = user.primary.pid();
    TestDir dir;

    // Without the opt-in: the failover lab is skipped with the reason; 08a runs on the primary the
    // sentinels name, and nothing is faulted.
    const auto plain = run_relab(dir.path, fmt::format("08i-failover 08a-baseline --runs 1 --redis-url {}", user.url()));
    ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;
    const json& skipped = lab_of(plain, "08i-failover");
    EXPECT_TRUE(skipped.at("skipped").get<bool>());
    EXPECT_NE(skipped.at("skip_reason").get<std::string>().find("--allow-server-faults"), std::string::npos)
        << skipped.at("skip_reason");
    EXPECT_TRUE(lab_of(plain, "08a-baseline").at("summary").at("held").get<bool>()) << plain.out;
    EXPECT_TRUE(plain.report.at("servers").at("redis_external").get<bool>());
    EXPECT_EQ(user.primary.pid(), primary_pid);
    EXPECT_TRUE(user.sentinels->switches().empty());

    EXPECT_EQ(snapshot(user.primary.endpoint()), before);
    EXPECT_EQ(run_keys(user.primary.endpoint()), 0u);
    EXPECT_EQ(user.restarts.load(), 0) << "no server of the user's stopped";
    EXPECT_TRUE(fs::is_empty(dir.path / "tmp"));
}

TEST(ExternalTopologyTest, with_the_opt_in_the_failover_lab_fails_over_a_users_primary_and_moves_it_back) {
    UserSentinelSet user;
    {
        RedisClient c(user.primary.endpoint());
        for (const auto& argv : user_writes("u")) c.call(argv);
        ASSERT_GE(c.call({"WAIT", "1", "5000"}).integer, 1);
    }
    const Snapshot before = snapshot(user.primary.endpoint());
    TestDir dir;

    // With it: the replica is detached, the user's sentinels fail the primary over to it, and their
    // promotion is what the lab's clients follow; relab moves the primary back. No server stops.
    const auto faulted =
        run_relab(dir.path, fmt::format("08i-failover --runs 1 --allow-server-faults --redis-url {}", user.url()));
    ASSERT_EQ(faulted.exit_code, 0) << faulted.out << faulted.err;
    const json& lab = lab_of(faulted, "08i-failover");
    EXPECT_TRUE(lab.at("summary").at("held").get<bool>()) << faulted.out;
    const json& trial = lab.at("trials").at(0);
    EXPECT_EQ(trial.at("accounting").at("lost"), 2);
    std::string new_primary;
    for (const auto& rec : trial.at("history"))
        if (rec.at("op") == "fault" && rec.contains("new_primary")) new_primary = rec.at("new_primary");
    EXPECT_EQ(new_primary, user.replica.endpoint().display()) << "the promoted replica, as the user's sentinels said";
    EXPECT_EQ(user.restarts.load(), 0) << "no server of the user's stopped";
    EXPECT_EQ(user.sentinels->switches().size(), 2u) << "the lab's failover and the one moving the primary back";
    EXPECT_EQ(user.sentinels->master_addr().port, user.primary.endpoint().port);

    EXPECT_EQ(snapshot(user.primary.endpoint()), before) << "the user's keys, resynced to the restarted primary";
    EXPECT_EQ(run_keys(user.primary.endpoint()), 0u);
    EXPECT_EQ(run_keys(user.replica.endpoint()), 0u);
    EXPECT_TRUE(fs::is_empty(dir.path / "tmp"));
}

}  // namespace external_topology_test
