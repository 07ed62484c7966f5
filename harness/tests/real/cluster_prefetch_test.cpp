// ClusterPrefetch: the next lab's Redis Cluster, formed on a worker thread while the current lab
// runs. Its servers must outlive the call that formed them (they die with the thread that started
// them), and a lab must get a cluster with its own options, never the one formed for the next lab.
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "clients/redis_client.h"
#include "scenario/loader/loader.h"
#include "servers/redis_cluster.h"
#include "process/proc_stat.h"
#include "servers/servers.h"
#include "servers/cluster_prefetch.h"
#include "backend_real/real_backend.h"
#include "scenario/scenario.h"

namespace relab {
namespace cluster_prefetch_test {

using namespace std::chrono_literals;

bool answers(const EmbeddedRedisCluster& c) {
    for (const auto& ep : c.endpoints()) {
        RedisClient client(ep);
        if (client.call({"CLUSTER", "INFO"}).str.find("cluster_state:ok") == std::string::npos) return false;
    }
    return true;
}

std::string test_comm(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    std::getline(in, name);
    return name;
}

TEST(ClusterPrefetchTest, a_cluster_formed_ahead_serves_the_lab_that_takes_it_and_outlives_the_forming) {
    ClusterPrefetch prefetch;
    RedisClusterOptions two;
    two.masters = 2;
    prefetch.want_next(two);
    prefetch.start_next();
    std::this_thread::sleep_for(2500ms);  // the forming is over: only the worker thread started it
    const auto started = std::chrono::steady_clock::now();
    const auto cluster = prefetch.take(two);
    EXPECT_LT(std::chrono::steady_clock::now() - started, 1500ms) << "formed again instead of ahead";
    ASSERT_EQ(cluster->size(), 2u);
    std::this_thread::sleep_for(200ms);
    EXPECT_TRUE(answers(*cluster));
}

// The lab that needs a cluster takes its own first; only then does the next lab's start forming.
TEST(ClusterPrefetchTest, the_current_lab_gets_its_own_options_and_the_next_labs_forms_after_it) {
    ClusterPrefetch prefetch;
    RedisClusterOptions three, two;
    two.masters = 2;
    prefetch.want_next(two);  // the next lab's; nothing starts before the current lab takes its own
    const auto current = prefetch.take(three);
    EXPECT_EQ(current->size(), 3u);
    const auto next = prefetch.take(two);
    EXPECT_EQ(next->size(), 2u);
    EXPECT_TRUE(answers(*current));
    EXPECT_TRUE(answers(*next));
}

// `relab run` tells the backend every lab still to come: the next lab that forms a cluster has it
// formed while the labs without one before it run, not only while the one just before it runs.
TEST(ClusterPrefetchTest, a_cluster_is_formed_ahead_across_the_labs_that_need_none) {
    const std::string dir = std::string(RELAB_SOURCE_DIR) + "/scenarios/";
    const Scenario baseline = load_scenario(dir + "08a-baseline.json"), s1 = load_scenario(dir + "08b-s1.json");
    const Scenario shard = load_scenario(dir + "beyond-s2-shard.json");
    ASSERT_TRUE(shard.flow().shard.enabled);
    const ServerSet servers = start_servers("", "");
    BackendOptions o;
    o.relab_exe = RELAB_BINARY;
    o.run_id = new_run_id();
    o.runs = 1;
    RealBackend backend(servers, o);
    const auto redis_servers = [] {
        int n = 0;
        for (int pid : children_of(::getpid()))
            n += test_comm(pid) == "redis-server";
        return n;
    };
    const int before = redis_servers();  // the run's own
    const std::vector<Scenario> later{shard};
    backend.upcoming(s1, later);
    EXPECT_FALSE(backend.run(baseline).trials.empty());
    // Two labs before the shard lab, its cluster's masters are already up.
    bool forming = false;
    for (int i = 0; i < 300 && !forming; ++i) {
        forming = redis_servers() >= before + 3;
        if (!forming) std::this_thread::sleep_for(10ms);
    }
    EXPECT_TRUE(forming) << "no cluster forming while 08a ran: " << redis_servers() << " redis-servers";
    backend.upcoming(shard, {});
    EXPECT_FALSE(backend.run(s1).trials.empty());
    const LabResult r = backend.run(shard);
    EXPECT_TRUE(r.held) << "s2-shard did not hold";
    EXPECT_EQ(backend.clusters_taken_ahead(), 1) << "the shard lab's cluster was formed when it began";
}

}  // namespace cluster_prefetch_test
}  // namespace relab
