// S2's cluster client (clients/cluster_link.h) on a real Redis Cluster that relab forms: a slot is
// moved under it with CLUSTER SETSLOT MIGRATING/IMPORTING, MIGRATE and SETSLOT NODE, as
// `redis-cli --cluster reshard` does, and the client follows the ASK and MOVED replies it meets.
#include <chrono>
#include <string>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "clients/cluster_link.h"
#include "clients/cluster_slot.h"
#include "servers/redis_cluster.h"

namespace relab {
namespace cluster_link_test {

using namespace std::chrono_literals;

std::string reply_of(const RedisEndpoint& ep, const std::vector<std::string>& argv) {
    RedisClient c(ep);
    const RedisReply r = c.command(argv);
    return r.is_error() ? "ERR:" + r.str : r.str;
}

TEST(ClusterLinkTest, the_client_follows_ask_while_a_slot_migrates_and_moved_once_it_has_moved) {
    RedisClusterOptions opts;
    opts.masters = 2;
    opts.node_timeout = 2000ms;
    EmbeddedRedisCluster cluster(opts);
    ClusterRouter router(cluster.endpoints(), RedisNamespace{"t:"}, "t:", "tester");
    ClusterStream stream(router);

    const std::string key = "t:s:{a}";  // the stream "s:{a}" under the prefix: slot of "a"
    const int slot = key_slot(key);
    const std::string slot_text = std::to_string(slot);
    const std::string source_at = router.owner_address(key);
    const size_t source = cluster.endpoints()[0].display().find(source_at) != std::string::npos ? 0 : 1;
    const RedisEndpoint from = cluster.endpoints()[source];
    const RedisEndpoint to = cluster.endpoints()[1 - source];
    ASSERT_EQ(source_at, fmt::format("{}:{}", from.host, from.port));

    ASSERT_EQ(stream.xadd("s:{a}", {{{"type", "created"}}}).size(), 1u);
    EXPECT_EQ(router.moved(), 0);
    EXPECT_EQ(router.asked(), 0);

    // The slot starts to migrate: keys the source still has are served there, a new one is asked for
    // on the target.
    const std::string from_id = reply_of(from, {"CLUSTER", "MYID"});
    const std::string to_id = reply_of(to, {"CLUSTER", "MYID"});
    ASSERT_EQ(reply_of(to, {"CLUSTER", "SETSLOT", slot_text, "IMPORTING", from_id}), "OK");
    ASSERT_EQ(reply_of(from, {"CLUSTER", "SETSLOT", slot_text, "MIGRATING", to_id}), "OK");
    EXPECT_EQ(stream.xrange("s:{a}").size(), 1u);
    EXPECT_EQ(router.asked(), 0);
    EXPECT_EQ(stream.xadd("n:{a}", {{{"type", "paid"}}}).size(), 1u);  // not on the source: ASK
    EXPECT_EQ(router.asked(), 1);
    {
        RedisClient c(to);
        EXPECT_EQ(c.command({"CLUSTER", "COUNTKEYSINSLOT", slot_text}).integer, 1);
    }

    // The stream itself moves (MIGRATE); the source now asks for it on the target too.
    ASSERT_EQ(reply_of(from, {"MIGRATE", to.host, std::to_string(to.port), "", "0", "5000", "KEYS", key}), "OK");
    EXPECT_EQ(stream.xrange("s:{a}").size(), 1u);
    EXPECT_EQ(router.asked(), 2);

    // The slot is the target's: the client's map is stale, the source answers MOVED, the client
    // reads the map again and sends it there.
    ASSERT_EQ(reply_of(to, {"CLUSTER", "SETSLOT", slot_text, "NODE", to_id}), "OK");
    ASSERT_EQ(reply_of(from, {"CLUSTER", "SETSLOT", slot_text, "NODE", to_id}), "OK");
    EXPECT_EQ(stream.xadd("s:{a}", {{{"type", "shipped"}}}).size(), 1u);
    EXPECT_EQ(router.moved(), 1);
    EXPECT_EQ(router.owner_address(key), fmt::format("{}:{}", to.host, to.port));
    const auto entries = stream.xrange("s:{a}");
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0].field("type"), "created");
    EXPECT_EQ(entries[1].field("type"), "shipped");
    EXPECT_EQ(router.moved(), 1);  // the map is right now: no more redirections
}

TEST(ClusterLinkTest, a_redirection_the_client_cannot_follow_is_an_error_not_a_loop) {
    RedisClusterOptions opts;
    opts.masters = 2;
    opts.node_timeout = 2000ms;
    EmbeddedRedisCluster cluster(opts);
    ClusterRouter router(cluster.endpoints(), RedisNamespace{"t:"}, "t:");
    const std::string key = "t:k:{a}";
    const std::string slot_text = std::to_string(key_slot(key));
    const std::string owner_at = router.owner_address(key);
    const size_t owner = cluster.endpoints()[0].port == std::stoi(owner_at.substr(owner_at.rfind(':') + 1)) ? 0 : 1;
    const RedisEndpoint from = cluster.endpoints()[owner];
    const RedisEndpoint to = cluster.endpoints()[1 - owner];
    // MIGRATING on the source only: the target does not import, so it answers the ASKed command
    // with MOVED back to the source, which ASKs again...
    ASSERT_EQ(reply_of(from, {"CLUSTER", "SETSLOT", slot_text, "MIGRATING", reply_of(to, {"CLUSTER", "MYID"})}), "OK");
    try {
        router.call(key, {"SET", key, "v"});
        FAIL() << "no error";
    } catch (const RedisError& e) {
        const std::string msg = e.what();
        EXPECT_TRUE(msg.find("MOVED") != std::string::npos || msg.find("ASK") != std::string::npos) << msg;
    }
    EXPECT_LE(router.asked() + router.moved(), ClusterRouter::kMaxRedirects + 1);
}

}  // namespace cluster_link_test
}  // namespace relab
