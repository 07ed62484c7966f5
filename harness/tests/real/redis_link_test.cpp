// RedisLink, the one reconnecting connection of every role process, against real redis-servers:
// what a caller sees when its primary is demoted (READONLY) or restarted, and that it comes back.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "clients/redis_client.h"
#include "clients/redis_link.h"
#include "servers/servers.h"

namespace relab {
namespace redis_link_test {

struct Failure {
    KvError::Kind kind;
    std::string message;
};

// The error a SET through the link fails with, or nullopt when it succeeds.
std::optional<Failure> set_fails(LinkKv& kv, const std::string& key) {
    try {
        kv.set(key, "1", KvSetOptions{});
    } catch (const KvError& e) {
        return Failure{e.kind(), e.what()};
    }
    return std::nullopt;
}

// A demoted primary answers READONLY: the caller gets that error reply (the app's 5xx), the link
// drops the connection, and its next connection checks ROLE: a replica is refused as "no primary
// reachable" (the link was given no sentinels to ask) until the node is a master again.
TEST(RedisLinkTest, ReadonlyIsSurfacedThenTheLinkConnectsOnlyToAMaster) {
    EmbeddedRedis a;
    EmbeddedRedis b;
    RedisLink link(a.endpoint(), RedisNamespace{"relab:link-test:"}, "relab:link-test:");
    LinkKv kv(link);
    kv.set("k", "1", KvSetOptions{});
    EXPECT_EQ(kv.get("k"), "1");

    RedisClient admin(a.endpoint());
    admin.call({"REPLICAOF", b.endpoint().host, std::to_string(b.endpoint().port)});
    const auto readonly = set_fails(kv, "k");
    ASSERT_TRUE(readonly);
    EXPECT_EQ(readonly->kind, KvError::Kind::reply);
    EXPECT_NE(readonly->message.find("READONLY"), std::string::npos) << readonly->message;
    const auto refused = set_fails(kv, "k");
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->kind, KvError::Kind::unavailable);
    EXPECT_NE(refused->message.find("no primary reachable"), std::string::npos) << refused->message;
    EXPECT_NE(refused->message.find("is a slave"), std::string::npos) << refused->message;

    admin.call({"REPLICAOF", "NO", "ONE"});
    kv.set("k2", "2", KvSetOptions{});
    EXPECT_EQ(kv.get("k2"), "2");
}

// A restarted server: the call that finds the old connection dead fails (unavailable), the next
// one connects again on the same port.
TEST(RedisLinkTest, ARestartedServerFailsOneCallThenTheLinkIsBack) {
    EmbeddedRedis a;
    RedisLink link(a.endpoint(), RedisNamespace{"relab:link-test:"}, "relab:link-test:");
    LinkKv kv(link);
    kv.set("k", "1", KvSetOptions{});
    a.restart();
    const auto lost = set_fails(kv, "k");
    ASSERT_TRUE(lost);
    EXPECT_EQ(lost->kind, KvError::Kind::unavailable) << lost->message;
    kv.set("k", "2", KvSetOptions{});
    EXPECT_EQ(kv.get("k"), "2");
}

}  // namespace redis_link_test
}  // namespace relab
