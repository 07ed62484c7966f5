// The link proxies a lab whose faults act on links puts between each role and its servers
// (backend_real/role_link_proxies.h): which config a role's process gets, and set_link's targets.
// The proxies listen on loopback; nothing connects through them here, so no server is needed.
#include <string>

#include <gtest/gtest.h>

#include "backend_real/role_link_proxies.h"
#include "fault/fault_spec.h"

namespace relab {
namespace role_link_proxies_test {

Scenario lab_with(FaultAction action) {
    Scenario s;
    s.id = "link-lab";
    FaultSpec f;
    f.action = action;
    f.target = Target::role("C1");
    s.faults.push_back(f);
    return s;
}

RoleConfig config_of(const std::string& actor) {
    RoleConfig c;
    c.actor = actor;
    c.redis.host = "localhost";
    c.redis.port = 6379;
    c.pg.host = "localhost";
    c.pg.port = 5432;
    return c;
}

TEST(RoleLinkProxies, ALabWithoutLinkFaultsLeavesTheServersAsTheyAre) {
    const Scenario s = lab_with(FaultAction::kill);
    RoleLinkProxies links(s);
    const RoleConfig c = links.through(config_of("C1"));
    EXPECT_EQ(c.redis.host, "localhost");
    EXPECT_EQ(c.redis.port, 6379);
    EXPECT_EQ(c.pg.port, 5432);
    EXPECT_TRUE(links.empty());
    EXPECT_THROW(links.set(Target::role("C1"), LinkServer::redis, LinkMode{}), std::logic_error);
}

TEST(RoleLinkProxies, EachRoleGetsProxiesOfItsOwnKeptAcrossItsRestarts) {
    const Scenario s = lab_with(FaultAction::blackhole);
    RoleLinkProxies links(s);
    const RoleConfig c1 = links.through(config_of("C1"));
    EXPECT_FALSE(links.empty());
    EXPECT_EQ(c1.redis.host, "127.0.0.1");
    EXPECT_EQ(c1.pg.host, "127.0.0.1");
    EXPECT_NE(c1.redis.port, 6379);
    EXPECT_NE(c1.redis.port, c1.pg.port);
    const RoleConfig again = links.through(config_of("C1"));  // a restart: the same proxies
    EXPECT_EQ(again.redis.port, c1.redis.port);
    EXPECT_EQ(again.pg.port, c1.pg.port);
    const RoleConfig c2 = links.through(config_of("C2"));
    EXPECT_NE(c2.redis.port, c1.redis.port);

    LinkMode hang;
    hang.blackhole = true;
    const nlohmann::json set = links.set(Target::role("C1"), LinkServer::postgres, hang);
    EXPECT_EQ(set["released"], 0);
    EXPECT_EQ(set["unit"], "bytes");
    EXPECT_THROW(links.set(Target::role("C3"), LinkServer::redis, hang), std::logic_error);
    EXPECT_THROW(links.set(Target::of(FaultTarget::clients), LinkServer::redis, hang), std::logic_error);
}

TEST(RoleLinkProxies, RolesThatFindTheServersThemselvesCannotHaveLinkFaults) {
    const Scenario s = lab_with(FaultAction::delay);
    RoleLinkProxies links(s);
    RoleConfig sentinel = config_of("C1");
    sentinel.redis_sentinels.push_back(RedisEndpoint{});
    EXPECT_THROW(links.through(sentinel), HarnessError);
    RoleConfig cluster = config_of("C1");
    cluster.redis_cluster.push_back(RedisEndpoint{});
    EXPECT_THROW(links.through(cluster), HarnessError);
    EXPECT_TRUE(links.empty());
}

}  // namespace role_link_proxies_test
}  // namespace relab
