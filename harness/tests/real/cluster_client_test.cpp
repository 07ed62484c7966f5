// relab's cluster client (clients/cluster_client.h) on a real Redis Cluster that relab forms, in
// both of its modes. Following redirections (S2): a slot is moved under it with CLUSTER SETSLOT
// MIGRATING/IMPORTING, MIGRATE and SETSLOT NODE, as `redis-cli --cluster reshard` does, and the
// client follows the ASK and MOVED replies it meets. Refusing them (the idempotency cluster lab): the
// same MOVED is an error naming the key, its slot and the node relab sent it to.
#include <chrono>
#include <iostream>
#include <string>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "clients/cluster_client.h"
#include "clients/cluster_slot.h"
#include "servers/redis_cluster.h"

namespace relab {
namespace cluster_client_test {

using namespace std::chrono_literals;

std::string reply_of(const RedisEndpoint& ep, const std::vector<std::string>& argv) {
    RedisClient c(ep);
    const RedisReply r = c.command(argv);
    return r.is_error() ? "ERR:" + r.str : r.str;
}

RedisClusterOptions two_masters() {
    RedisClusterOptions opts;
    opts.masters = 2;
    opts.node_timeout = 2000ms;
    return opts;
}

ClusterClientOptions following(std::string actor = "") {
    return ClusterClientOptions::following(RedisNamespace{"t:"}, "t:", std::move(actor));
}

// The index of the cluster's node at "host:port".
size_t node_at(const EmbeddedRedisCluster& cluster, const std::string& address) {
    for (size_t i = 0; i < cluster.size(); ++i)
        if (fmt::format("{}:{}", cluster.endpoints()[i].host, cluster.endpoints()[i].port) == address) return i;
    throw std::logic_error("no node at " + address);
}

TEST(ClusterClientTest, following_it_takes_ask_while_a_slot_migrates_and_moved_once_it_has_moved) {
    EmbeddedRedisCluster cluster(two_masters());
    ClusterClient client(cluster.endpoints(), following("tester"));
    ClusterStream stream(client);

    const std::string key = "t:s:{a}";  // the stream "s:{a}" under the prefix: slot of "a"
    const std::string slot_text = std::to_string(key_slot(key));
    const size_t source = node_at(cluster, client.owner_address(key));
    const RedisEndpoint from = cluster.endpoints()[source];
    const RedisEndpoint to = cluster.endpoints()[1 - source];

    ASSERT_EQ(stream.xadd("s:{a}", {{{"type", "created"}}}).size(), 1u);
    EXPECT_EQ(client.moved(), 0);
    EXPECT_EQ(client.asked(), 0);

    // The slot starts to migrate: keys the source still has are served there, a new one is asked for
    // on the target.
    const std::string from_id = reply_of(from, {"CLUSTER", "MYID"});
    const std::string to_id = reply_of(to, {"CLUSTER", "MYID"});
    ASSERT_EQ(reply_of(to, {"CLUSTER", "SETSLOT", slot_text, "IMPORTING", from_id}), "OK");
    ASSERT_EQ(reply_of(from, {"CLUSTER", "SETSLOT", slot_text, "MIGRATING", to_id}), "OK");
    EXPECT_EQ(stream.xrange("s:{a}").size(), 1u);
    EXPECT_EQ(client.asked(), 0);
    EXPECT_EQ(stream.xadd("n:{a}", {{{"type", "paid"}}}).size(), 1u);  // not on the source: ASK
    EXPECT_EQ(client.asked(), 1);
    {
        RedisClient c(to);
        EXPECT_EQ(c.command({"CLUSTER", "COUNTKEYSINSLOT", slot_text}).integer, 1);
    }

    // The stream itself moves (MIGRATE); the source now asks for it on the target too.
    ASSERT_EQ(reply_of(from, {"MIGRATE", to.host, std::to_string(to.port), "", "0", "5000", "KEYS", key}), "OK");
    EXPECT_EQ(stream.xrange("s:{a}").size(), 1u);
    EXPECT_EQ(client.asked(), 2);

    // The slot is the target's: the client's map is stale, the source answers MOVED, the client
    // reads the map again and sends it there.
    ASSERT_EQ(reply_of(to, {"CLUSTER", "SETSLOT", slot_text, "NODE", to_id}), "OK");
    ASSERT_EQ(reply_of(from, {"CLUSTER", "SETSLOT", slot_text, "NODE", to_id}), "OK");
    EXPECT_EQ(stream.xadd("s:{a}", {{{"type", "shipped"}}}).size(), 1u);
    EXPECT_EQ(client.moved(), 1);
    EXPECT_EQ(client.owner_address(key), fmt::format("{}:{}", to.host, to.port));
    const auto entries = stream.xrange("s:{a}");
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0].field("type"), "created");
    EXPECT_EQ(entries[1].field("type"), "shipped");
    EXPECT_EQ(client.moved(), 1);  // the map is right now: no more redirections
}

TEST(ClusterClientTest, following_it_sends_a_moved_command_and_pipeline_where_the_slot_lives_now) {
    EmbeddedRedisCluster cluster(two_masters());
    ClusterClient client(cluster.endpoints(), following());
    const std::string key = "t:k:{b}";
    const size_t owner = client.node_of_key(key);
    const RedisEndpoint other = client.endpoint(1 - owner);
    const std::string other_id = reply_of(other, {"CLUSTER", "MYID"});
    const std::string slot_text = std::to_string(key_slot(key));
    // The slot changes hands behind the client's back (it is empty: no key to migrate).
    ASSERT_EQ(reply_of(client.endpoint(owner), {"CLUSTER", "SETSLOT", slot_text, "NODE", other_id}), "OK");
    ASSERT_EQ(reply_of(other, {"CLUSTER", "SETSLOT", slot_text, "NODE", other_id}), "OK");

    EXPECT_EQ(client.pipeline({key, key}, {{"SET", key, "1"}, {"INCR", key}})[1].integer, 2);
    EXPECT_EQ(client.moved(), 1);
    EXPECT_EQ(client.command(key, {"GET", key}).str, "2");
    EXPECT_EQ(client.moved(), 1);  // the map was read again: the GET went straight to the new owner
    EXPECT_EQ(reply_of(other, {"GET", key}), "2");
}

TEST(ClusterClientTest, a_redirection_the_client_cannot_follow_is_an_error_not_a_loop) {
    EmbeddedRedisCluster cluster(two_masters());
    ClusterClient client(cluster.endpoints(), following());
    const std::string key = "t:k:{a}";
    const std::string slot_text = std::to_string(key_slot(key));
    const size_t owner = node_at(cluster, client.owner_address(key));
    const RedisEndpoint from = cluster.endpoints()[owner];
    const RedisEndpoint to = cluster.endpoints()[1 - owner];
    // MIGRATING on the source only: the target does not import, so it answers the ASKed command
    // with MOVED back to the source, which ASKs again...
    ASSERT_EQ(reply_of(from, {"CLUSTER", "SETSLOT", slot_text, "MIGRATING", reply_of(to, {"CLUSTER", "MYID"})}), "OK");
    try {
        client.call(key, {"SET", key, "v"});
        FAIL() << "no error";
    } catch (const RedisError& e) {
        const std::string msg = e.what();
        EXPECT_TRUE(msg.find("MOVED") != std::string::npos || msg.find("ASK") != std::string::npos) << msg;
    }
    EXPECT_LE(client.asked() + client.moved(), ClusterClient::kMaxRedirects + 1);
}

TEST(ClusterClientTest, refusing_redirections_a_moved_reply_is_an_error_naming_the_key_its_slot_and_the_node) {
    EmbeddedRedisCluster cluster(two_masters());
    ClusterClient client(cluster.endpoints(), ClusterClientOptions::refusing());
    const size_t owner = client.node_of_key("foo");  // slot 12182
    const RedisEndpoint other = cluster.endpoints()[1 - owner];
    EXPECT_EQ(client.command("bar", {"SET", "bar", "1"}).str, "OK");  // slot 5061; foo's slot stays empty
    EXPECT_EQ(client.command("foo", {"MGET", "foo", "bar"}).str.rfind("CROSSSLOT", 0), 0u);  // an error reply, returned
    // The slot changes hands behind the client's back.
    const std::string other_id = reply_of(other, {"CLUSTER", "MYID"});
    ASSERT_EQ(reply_of(cluster.endpoints()[owner], {"CLUSTER", "SETSLOT", "12182", "NODE", other_id}), "OK");
    try {
        client.command("foo", {"GET", "foo"});
        FAIL() << "no ClusterRedirectError";
    } catch (const ClusterRedirectError& e) {
        const std::string msg = e.what();
        std::cout << "[ message  ] " << msg << "\n";
        EXPECT_NE(msg.find("MOVED 12182 127.0.0.1:" + std::to_string(other.port)), std::string::npos) << msg;
        EXPECT_NE(msg.find("key foo (slot 12182)"), std::string::npos) << msg;
        EXPECT_NE(msg.find(fmt::format("node {} (127.0.0.1:{})", owner + 1, cluster.endpoints()[owner].port)),
                  std::string::npos)
            << msg;
    }
    EXPECT_THROW(client.pipeline({"foo"}, {{"SET", "foo", "2"}}), ClusterRedirectError);
    EXPECT_THROW(client.call("foo", {"GET", "foo"}), ClusterRedirectError);
    EXPECT_EQ(client.moved(), 0);
    EXPECT_EQ(client.node_of_key("foo"), owner);  // the map was not read again
    // Nothing was sent on to the node the cluster named.
    RedisClient c(other);
    EXPECT_EQ(c.command({"CLUSTER", "COUNTKEYSINSLOT", "12182"}).integer, 0);
}

}  // namespace cluster_client_test
}  // namespace relab
