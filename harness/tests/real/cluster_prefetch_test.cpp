// ClusterPrefetch: the next lab's Redis Cluster, formed on a worker thread while the current lab
// runs. Its servers must outlive the call that formed them (they die with the thread that started
// them), and a lab must get a cluster with its own options, never the one formed for the next lab.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "real/redis_client.h"
#include "real/redis_cluster.h"
#include "run/cluster_prefetch.h"

namespace relab {
namespace {

using namespace std::chrono_literals;

bool answers(const EmbeddedRedisCluster& c) {
    for (const auto& ep : c.endpoints()) {
        RedisClient client(ep);
        if (client.call({"CLUSTER", "INFO"}).str.find("cluster_state:ok") == std::string::npos) return false;
    }
    return true;
}

}  // namespace

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

}  // namespace relab
