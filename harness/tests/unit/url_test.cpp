#include <gtest/gtest.h>

#include "clients/endpoint.h"

namespace relab {
namespace url_test {

std::string error_of_redis(const std::string& url) {
    try {
        parse_redis_url(url);
    } catch (const EnvironmentError& e) {
        return e.what();
    }
    return "";
}

std::string error_of_pg(const std::string& url) {
    try {
        parse_pg_url(url);
    } catch (const EnvironmentError& e) {
        return e.what();
    }
    return "";
}

std::string error_of_topology(const std::string& url) {
    try {
        parse_redis_topology_url(url);
    } catch (const EnvironmentError& e) {
        return e.what();
    }
    return "";
}

TEST(UrlTest, SentinelUrlListsItsSentinelsAndTheMasterName) {
    const RedisUrl u = parse_redis_topology_url("redis+sentinel://:s3cret@10.0.0.1:26380,10.0.0.2,[::1]:26390/mymaster/2");
    EXPECT_EQ(u.kind, RedisUrl::Kind::sentinel);
    ASSERT_EQ(u.nodes.size(), 3u);
    EXPECT_EQ(u.nodes[0].host, "10.0.0.1");
    EXPECT_EQ(u.nodes[0].port, 26380);
    EXPECT_EQ(u.nodes[1].port, 26379);  // Sentinel's default port
    EXPECT_EQ(u.nodes[2].host, "::1");
    EXPECT_EQ(u.nodes[2].port, 26390);
    for (const auto& n : u.nodes) EXPECT_EQ(n.password, "");  // the sentinels are asked without it
    EXPECT_EQ(u.master_name, "mymaster");
    EXPECT_EQ(u.password, "s3cret");
    EXPECT_EQ(u.db, 2);
    EXPECT_EQ(parse_redis_topology_url("redis+sentinel://h:1/m").db, 0);
}

TEST(UrlTest, ClusterUrlListsItsSeedNodes) {
    const RedisUrl u = parse_redis_topology_url("redis+cluster://:pw@127.0.0.1:7001,127.0.0.1:7002,node3");
    EXPECT_EQ(u.kind, RedisUrl::Kind::cluster);
    ASSERT_EQ(u.nodes.size(), 3u);
    EXPECT_EQ(u.nodes[1].port, 7002);
    EXPECT_EQ(u.nodes[2].host, "node3");
    EXPECT_EQ(u.nodes[2].port, 6379);
    EXPECT_EQ(u.nodes[2].password, "pw");  // the cluster's nodes are the data servers
    EXPECT_EQ(parse_redis_topology_url("redis+cluster://h:1/0").db, 0);
}

TEST(UrlTest, PlainRedisUrlIsOneInstance) {
    const RedisUrl u = parse_redis_topology_url("redis://127.0.0.1:6390/3");
    EXPECT_EQ(u.kind, RedisUrl::Kind::single);
    EXPECT_EQ(u.single.port, 6390);
    EXPECT_EQ(u.db, 3);
    EXPECT_TRUE(u.nodes.empty());
}

TEST(UrlTest, BadTopologyUrlsSayWhichFormWasExpected) {
    EXPECT_NE(error_of_topology("redis+sentinel://h:26379").find("no master name"), std::string::npos);
    EXPECT_NE(error_of_topology("redis+sentinel://h:26379/").find("expected redis+sentinel://"), std::string::npos);
    EXPECT_NE(error_of_topology("redis+sentinel://h:1,,h:2/m").find("an empty host"), std::string::npos);
    EXPECT_NE(error_of_topology("redis+sentinel://h:1/m/x").find("database must be a number"), std::string::npos);
    EXPECT_NE(error_of_topology("redis+cluster://h:1/2").find("database 0 only"), std::string::npos);
    EXPECT_NE(error_of_topology("redis+cluster://h:1/0/x").find("expected redis+cluster://"), std::string::npos);
    EXPECT_NE(error_of_topology("redis+cluster://h:99999").find("bad host 'h:99999'"), std::string::npos);
    // The password never shows in an error.
    const std::string e = error_of_topology("redis+cluster://:hunter2@h:1,/");
    EXPECT_FALSE(e.empty());
    EXPECT_EQ(e.find("hunter2"), std::string::npos);
}

TEST(UrlTest, RedisUrlWithPortAndDb) {
    RedisEndpoint ep = parse_redis_url("redis://127.0.0.1:6390/2");
    EXPECT_EQ(ep.host, "127.0.0.1");
    EXPECT_EQ(ep.port, 6390);
    EXPECT_EQ(ep.db, 2);
    EXPECT_EQ(ep.password, "");
    EXPECT_EQ(ep.display(), "redis://127.0.0.1:6390/2");
}

TEST(UrlTest, RedisUrlDefaultsToPort6379AndDb0) {
    RedisEndpoint ep = parse_redis_url("redis://cache.internal");
    EXPECT_EQ(ep.host, "cache.internal");
    EXPECT_EQ(ep.port, 6379);
    EXPECT_EQ(ep.db, 0);
    EXPECT_EQ(parse_redis_url("redis://h:1/").db, 0);
    EXPECT_EQ(parse_redis_url("REDIS://h:1").port, 1);
}

TEST(UrlTest, RedisPasswordIsParsedAndMaskedInDisplay) {
    RedisEndpoint ep = parse_redis_url("redis://:s3cret@127.0.0.1:6390/0");
    EXPECT_EQ(ep.password, "s3cret");
    EXPECT_EQ(ep.display(), "redis://:***@127.0.0.1:6390/0");
    EXPECT_EQ(ep.display().find("s3cret"), std::string::npos);
    EXPECT_EQ(parse_redis_url("redis://default:pw@h").password, "pw");
}

TEST(UrlTest, RedisPasswordMayBePercentEscapedOrContainAt) {
    EXPECT_EQ(parse_redis_url("redis://:p%40ss%3Aw@h:1").password, "p@ss:w");
    RedisEndpoint ep = parse_redis_url("redis://:a@b@h:7/1");
    EXPECT_EQ(ep.password, "a@b");
    EXPECT_EQ(ep.host, "h");
    EXPECT_EQ(ep.port, 7);
    EXPECT_EQ(ep.db, 1);
}

TEST(UrlTest, RedisIpv6HostIsBracketed) {
    RedisEndpoint ep = parse_redis_url("redis://[::1]:7000/3");
    EXPECT_EQ(ep.host, "::1");
    EXPECT_EQ(ep.port, 7000);
    EXPECT_EQ(ep.display(), "redis://[::1]:7000/3");
}

TEST(UrlTest, BadRedisUrlsAreRejected) {
    for (const char* url : {"http://h:1", "127.0.0.1:6379", "redis://", "redis://:1", "redis://h:0",
                            "redis://h:65536", "redis://h:12ab", "redis://h/x", "redis://h/1/2",
                            "redis://h:1?timeout=3", "redis://[::1", "redis://alice:pw@h", "redis://:%zz@h"}) {
        EXPECT_NE(error_of_redis(url), "") << url;
    }
}

TEST(UrlTest, RedisUrlErrorNamesExpectedFormButNotThePassword) {
    std::string msg = error_of_redis("redis://:topsecret@h:notaport/0");
    EXPECT_NE(msg.find("bad port"), std::string::npos) << msg;
    EXPECT_NE(msg.find("redis://[:password@]host[:port][/db]"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("topsecret"), std::string::npos) << msg;
    msg = error_of_redis("redis://alice:topsecret@h");
    EXPECT_EQ(msg.find("topsecret"), std::string::npos) << msg;
}

TEST(UrlTest, PgUrlWithEverything) {
    PgEndpoint ep = parse_pg_url("postgresql://alice:pw@db.example:5433/orders");
    EXPECT_EQ(ep.host, "db.example");
    EXPECT_EQ(ep.port, 5433);
    EXPECT_EQ(ep.user, "alice");
    EXPECT_EQ(ep.password, "pw");
    EXPECT_EQ(ep.dbname, "orders");
    EXPECT_EQ(ep.display(), "postgresql://alice:***@db.example:5433/orders");
}

TEST(UrlTest, PgUrlDefaultsAndShortScheme) {
    PgEndpoint ep = parse_pg_url("postgres://bob@localhost/app");
    EXPECT_EQ(ep.port, 5432);
    EXPECT_EQ(ep.user, "bob");
    EXPECT_EQ(ep.password, "");
    EXPECT_EQ(ep.display(), "postgresql://bob@localhost:5432/app");
    PgEndpoint anonymous = parse_pg_url("postgresql://127.0.0.1:5499/x");
    EXPECT_EQ(anonymous.user, "");
    EXPECT_EQ(anonymous.display(), "postgresql://127.0.0.1:5499/x");
}

TEST(UrlTest, PgConninfoQuotesValuesAndCarriesThePassword) {
    PgEndpoint ep = parse_pg_url("postgresql://alice:it's%20a\\pw@127.0.0.1:5433/orders");
    EXPECT_EQ(ep.password, "it's a\\pw");
    EXPECT_EQ(ep.conninfo(),
              "host='127.0.0.1' port='5433' user='alice' password='it\\'s a\\\\pw' dbname='orders'");
    EXPECT_EQ(ep.display().find("it's"), std::string::npos);
}

TEST(UrlTest, PgConninfoOmitsEmptyFields) {
    PgEndpoint ep;
    ep.host = "127.0.0.1";
    ep.port = 5432;
    ep.dbname = "relab";
    EXPECT_EQ(ep.conninfo(), "host='127.0.0.1' port='5432' dbname='relab'");
}

TEST(UrlTest, BadPgUrlsAreRejectedWithoutThePassword) {
    for (const char* url : {"postgresql://h:5432", "postgresql://h:5432/", "mysql://h/db", "postgresql://h/a/b",
                            "postgresql://h/db?sslmode=require", "postgresql://:5432/db"}) {
        EXPECT_NE(error_of_pg(url), "") << url;
    }
    std::string msg = error_of_pg("postgresql://u:hunter2@h:99999/db");
    EXPECT_NE(msg, "");
    EXPECT_EQ(msg.find("hunter2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("postgresql://[user[:password]@]host[:port]/dbname"), std::string::npos) << msg;
}

}  // namespace url_test
}  // namespace relab
