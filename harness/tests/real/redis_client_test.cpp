// RedisClient, RealStream and RealKv against a real redis-server: one EmbeddedRedis for the whole
// binary, started by the first test that needs it; every test works under its own key prefix.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "clients/redis_client.h"
#include "servers/servers.h"

namespace relab {
namespace redis_client_test {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

// Stops the shared server after the last test, before static destruction.
class SharedRedisEnvironment : public ::testing::Environment {
public:
    static const RedisEndpoint& endpoint() {
        if (!s_redis && s_error.empty()) {
            try {
                s_redis = std::make_unique<EmbeddedRedis>();
            } catch (const std::exception& e) {
                s_error = e.what();
            }
        }
        if (!s_redis) throw std::runtime_error("no redis-server for the tests: " + s_error);
        return s_redis->endpoint();
    }
    void TearDown() override { s_redis.reset(); }

private:
    static inline std::unique_ptr<EmbeddedRedis> s_redis;
    static inline std::string s_error;
};

[[maybe_unused]] ::testing::Environment* const g_redis_environment =
    ::testing::AddGlobalTestEnvironment(new SharedRedisEnvironment);

long long elapsed_ms(SteadyClock::time_point since) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - since).count();
}

bool version_at_least(const std::string& version, int major, int minor) {
    int got_major = 0, got_minor = 0;
    if (std::sscanf(version.c_str(), "%d.%d", &got_major, &got_minor) < 1) return false;
    return got_major != major ? got_major > major : got_minor >= minor;
}

// Each test gets a client and a key prefix of its own; its keys are removed afterwards.
class RedisFixture : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        m_ns.prefix = std::string("relabtest:") + info->test_suite_name() + "." + info->name() + ":";
        m_client = std::make_unique<RedisClient>(SharedRedisEnvironment::endpoint());
    }
    void TearDown() override {
        if (!m_client) return;
        try {
            RedisClient cleaner(SharedRedisEnvironment::endpoint());
            delete_keys_with_prefix(cleaner, m_ns.prefix);
        } catch (const std::exception& e) {
            ADD_FAILURE() << "cleanup failed: " << e.what();
        }
    }
    const RedisEndpoint& endpoint() const { return SharedRedisEnvironment::endpoint(); }
    RedisClient& client() { return *m_client; }
    std::string key(const std::string& logical) const { return m_ns.key(logical); }

    RedisNamespace m_ns;
    std::unique_ptr<RedisClient> m_client;
};

class RedisClientTest : public RedisFixture {};
class RealStreamTest : public RedisFixture {
protected:
    void create_group(const std::string& stream, const std::string& group) {
        client().call({"XGROUP", "CREATE", key(stream), group, "$", "MKSTREAM"});
    }
};
class RealKvTest : public RedisFixture {};

// ---------------------------------------------------------------- RedisClient

TEST_F(RedisClientTest, CommandReturnsErrorRepliesAndCallThrowsThem) {
    RedisReply pong = client().command({"PING"});
    EXPECT_EQ(pong.type, RedisReply::Type::status);
    EXPECT_EQ(pong.str, "PONG");

    RedisReply unknown = client().command({"NOSUCHCOMMAND", "x"});
    ASSERT_TRUE(unknown.is_error());
    EXPECT_NE(unknown.str.find("unknown command"), std::string::npos) << unknown.str;

    client().call({"SET", key("text"), "abc"});
    try {
        client().call({"INCR", key("text")});
        FAIL() << "INCR on a string must throw";
    } catch (const RedisError& e) {
        EXPECT_EQ(e.command(), "INCR " + key("text"));
        EXPECT_EQ(e.key(), key("text"));
        EXPECT_NE(e.server_message().find("not an integer"), std::string::npos) << e.server_message();
        EXPECT_NE(std::string(e.what()).find("not an integer"), std::string::npos) << e.what();
    }
    // An error reply leaves the connection usable.
    EXPECT_EQ(client().call({"GET", key("text")}).str, "abc");
}

TEST_F(RedisClientTest, PipelineReturnsEveryReplyInOrderErrorsIncluded) {
    std::vector<RedisReply> replies = client().pipeline({{"SET", key("n"), "1"},
                                                         {"INCR", key("n")},
                                                         {"INCRBY", key("n"), "not-a-number"},
                                                         {"GET", key("n")},
                                                         {"GET", key("missing")}});
    ASSERT_EQ(replies.size(), 5u);
    EXPECT_EQ(replies[0].to_string(), "OK");
    EXPECT_EQ(replies[1].to_string(), "(integer) 2");
    EXPECT_TRUE(replies[2].is_error());
    EXPECT_EQ(replies[2].to_string().rfind("(error) ERR", 0), 0u) << replies[2].to_string();
    EXPECT_EQ(replies[3].to_string(), "\"2\"");
    EXPECT_EQ(replies[4].to_string(), "(nil)");
    EXPECT_TRUE(client().pipeline({}).empty());
}

TEST_F(RedisClientTest, ServerRepliesPrintLikeRedisCli) {
    client().call({"RPUSH", key("list"), "a", "b c", "d\"e"});
    EXPECT_EQ(client().call({"LRANGE", key("list"), "0", "-1"}).to_string(), "1) \"a\"\n2) \"b c\"\n3) \"d\\\"e\"");
    EXPECT_EQ(client().call({"LRANGE", key("nothing"), "0", "-1"}).to_string(), "(empty array)");
}

TEST_F(RedisClientTest, ConnectionRefusedGivesConnectionErrorWithoutPassword) {
    RedisEndpoint ep;
    ep.port = free_loopback_port();
    ep.password = "hunter2-very-secret";
    try {
        RedisClient c(ep, 1000ms);
        FAIL() << "connecting to a closed port must throw";
    } catch (const RedisConnectionError& e) {
        std::string what = e.what();
        EXPECT_NE(what.find("127.0.0.1:" + std::to_string(ep.port)), std::string::npos) << what;
        EXPECT_NE(what.find("refused"), std::string::npos) << what;
        EXPECT_EQ(what.find("hunter2"), std::string::npos) << what;
    }
}

TEST_F(RedisClientTest, AuthAndSelectFollowTheEndpointAndAWrongPasswordIsNotPrinted) {
    RedisOptions opts;
    opts.config = {{"requirepass", "right-pass-123"}};
    EmbeddedRedis secured(opts);
    RedisEndpoint ep = secured.endpoint();
    ep.db = 3;
    {
        RedisClient c(ep);
        EXPECT_EQ(c.call({"PING"}).str, "PONG");
        c.call({"SET", "in-db-3", "x"});
        RedisEndpoint db0 = secured.endpoint();
        RedisClient c0(db0);
        EXPECT_EQ(c0.call({"EXISTS", "in-db-3"}).integer, 0);
        EXPECT_EQ(c0.call({"SELECT", "3"}).str, "OK");
        EXPECT_EQ(c0.call({"EXISTS", "in-db-3"}).integer, 1);
    }
    ep.password = "wrong-pass-456";
    try {
        RedisClient c(ep);
        FAIL() << "a wrong password must throw";
    } catch (const RedisConnectionError& e) {
        std::string what = e.what();
        EXPECT_EQ(what.find("wrong-pass-456"), std::string::npos) << what;
        EXPECT_EQ(what.find("right-pass-123"), std::string::npos) << what;
        EXPECT_NE(what.find("WRONGPASS"), std::string::npos) << what;
        EXPECT_EQ(e.command(), "AUTH ***");
    }
}

TEST_F(RedisClientTest, ReplyTimeoutBreaksTheClientForGood) {
    RedisClient c(endpoint(), 200ms);
    auto start = SteadyClock::now();
    try {
        c.command({"BLPOP", key("never"), "2"});
        FAIL() << "a reply later than the timeout must throw";
    } catch (const RedisConnectionError& e) {
        EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
        EXPECT_EQ(e.key(), key("never"));
    }
    EXPECT_GE(elapsed_ms(start), 190);
    EXPECT_LT(elapsed_ms(start), 1500);
    try {
        c.command({"PING"});
        FAIL() << "a broken client must refuse further calls";
    } catch (const RedisConnectionError& e) {
        EXPECT_NE(std::string(e.what()).find("earlier failure"), std::string::npos) << e.what();
    }
}

TEST_F(RedisClientTest, DetectFeaturesReadsTheVersionAndDelex) {
    RedisFeatures f = detect_redis_features(client());
    std::string info = client().call({"INFO", "server"}).str;
    ASSERT_FALSE(f.version.empty());
    EXPECT_NE(info.find("redis_version:" + f.version + "\r\n"), std::string::npos) << f.version;
    EXPECT_EQ(f.delex, version_at_least(f.version, 8, 4)) << f.version;
    EXPECT_EQ(f.xadd_idmp, version_at_least(f.version, 8, 6)) << f.version;
}

TEST_F(RedisClientTest, DeleteKeysWithPrefixRemovesOnlyThePrefixKeys) {
    // Glob characters in the prefix must match literally.
    const std::string prefix = key("t[1]*?\\:");
    std::vector<std::vector<std::string>> sets;
    for (int i = 0; i < 1500; ++i) sets.push_back({"SET", prefix + std::to_string(i), "v"});
    const std::vector<std::string> decoys = {key("t1ab:x"), key("t1XY\\:y"), key("t[1]*?"), "relabtest-other:" + key("x")};
    for (const auto& d : decoys) sets.push_back({"SET", d, "keep"});
    for (const auto& r : client().pipeline(sets)) ASSERT_FALSE(r.is_error()) << r.to_string();

    delete_keys_with_prefix(client(), prefix);

    for (int i : {0, 1, 777, 1499}) EXPECT_EQ(client().call({"EXISTS", prefix + std::to_string(i)}).integer, 0);
    RedisReply left = client().call({"KEYS", "*"});
    size_t under_prefix = 0;
    for (const auto& k : left.elements) under_prefix += k.str.rfind(prefix, 0) == 0;
    EXPECT_EQ(under_prefix, 0u);
    for (const auto& d : decoys) EXPECT_EQ(client().call({"EXISTS", d}).integer, 1) << d;
    client().call({"DEL", decoys.back()});

    EXPECT_THROW(delete_keys_with_prefix(client(), ""), RedisError);
}

// ---------------------------------------------------------------- RealStream

TEST_F(RealStreamTest, PipelinedXaddReturnsIncreasingIdsUnderTheNamespace) {
    RealStream stream(client(), m_ns, "");
    std::vector<Fields> batch;
    for (int i = 0; i < 5; ++i) batch.push_back({{"order", "42"}, {"event", "e" + std::to_string(i)}});
    std::vector<std::string> ids = stream.xadd("orders", batch);
    ASSERT_EQ(ids.size(), 5u);
    auto parse = [](const std::string& id) {
        size_t dash = id.find('-');
        return std::make_pair(std::stoll(id.substr(0, dash)), std::stoll(id.substr(dash + 1)));
    };
    for (size_t i = 1; i < ids.size(); ++i) EXPECT_LT(parse(ids[i - 1]), parse(ids[i])) << ids[i - 1] << " " << ids[i];

    EXPECT_EQ(client().call({"XLEN", key("orders")}).integer, 5);
    EXPECT_EQ(client().call({"EXISTS", "orders"}).integer, 0);
    std::vector<StreamEntry> entries = stream.xrange("orders");
    ASSERT_EQ(entries.size(), 5u);
    for (size_t i = 0; i < entries.size(); ++i) {
        EXPECT_EQ(entries[i].id, ids[i]);
        EXPECT_EQ(entries[i].fields, batch[i]);
        EXPECT_EQ(entries[i].field("event"), "e" + std::to_string(i));
    }
}

TEST_F(RealStreamTest, XreadgroupOnAnEmptyStreamReturnsEmptyAfterTheBlock) {
    create_group("orders", "g");
    RealStream stream(client(), m_ns, "");
    auto start = SteadyClock::now();
    EXPECT_TRUE(stream.xreadgroup("g", "c1", "orders", 10, 100ms).empty());
    EXPECT_GE(elapsed_ms(start), 95);
    EXPECT_LT(elapsed_ms(start), 1000);
    EXPECT_EQ(client().call({"PING"}).str, "PONG");
    EXPECT_EQ(client().timeout(), 5000ms);
}

TEST_F(RealStreamTest, BlockLongerThanTheClientTimeoutKeepsTheClientWorking) {
    create_group("orders", "g");
    RedisClient c(endpoint(), 300ms);
    RealStream stream(c, m_ns, "");
    auto start = SteadyClock::now();
    EXPECT_TRUE(stream.xreadgroup("g", "c1", "orders", 10, 800ms).empty());
    EXPECT_GE(elapsed_ms(start), 790);
    EXPECT_EQ(c.call({"PING"}).str, "PONG");
    EXPECT_EQ(c.timeout(), 300ms);
    // The short timeout is really back on the socket.
    EXPECT_THROW(c.command({"BLPOP", key("never"), "1"}), RedisConnectionError);
}

TEST_F(RealStreamTest, XreadgroupDeliversEntriesAndXackClearsThePending) {
    create_group("orders", "g");
    RealStream stream(client(), m_ns, "");
    std::vector<std::string> ids = stream.xadd("orders", {{{"event", "created"}}, {{"event", "paid"}}, {{"event", "shipped"}}});
    std::vector<StreamEntry> got = stream.xreadgroup("g", "c1", "orders", 10, 100ms);
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].id, ids[0]);
    EXPECT_EQ(got[1].field("event"), "paid");
    EXPECT_EQ(got[2].id, ids[2]);
    EXPECT_EQ(client().call({"XPENDING", key("orders"), "g"}).elements.at(0).integer, 3);
    for (const auto& e : got) stream.xack("orders", "g", e.id);
    EXPECT_EQ(client().call({"XPENDING", key("orders"), "g"}).elements.at(0).integer, 0);
    EXPECT_TRUE(stream.xreadgroup("g", "c1", "orders", 10, 50ms).empty());
}

TEST_F(RealStreamTest, WaitReadersBlockedSeesAReaderOnAnotherConnection) {
    create_group("orders", "g");
    const std::string barrier = m_ns.prefix + "trial1:";
    auto reader = std::async(std::launch::async, [&] {
        RedisClient c(endpoint(), 1000ms);
        RealStream stream(c, m_ns, barrier);
        return stream.xreadgroup("g", "consumer-1", "orders", 1, 5000ms);
    });
    RealStream producer(client(), m_ns, barrier);
    auto start = SteadyClock::now();
    EXPECT_NO_THROW(producer.wait_readers_blocked(1, 3000ms));
    EXPECT_LT(elapsed_ms(start), 3000);
    EXPECT_NE(client().call({"CLIENT", "LIST"}).str.find("name=" + barrier + "consumer-1 "), std::string::npos);
    try {
        producer.wait_readers_blocked(2, 50ms);
        ADD_FAILURE() << "two readers were never blocked";
    } catch (const RedisError& e) {
        EXPECT_NE(std::string(e.what()).find("only 1 of 2 readers blocked"), std::string::npos) << e.what();
    }
    std::vector<std::string> ids = producer.xadd("orders", {{{"event", "go"}}});
    std::vector<StreamEntry> got = reader.get();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].id, ids[0]);
}

TEST_F(RealStreamTest, WaitReadersBlockedTimesOutWhenNoReaderOfTheTrialIsBlocked) {
    create_group("orders", "g");
    // A reader of another trial is blocked; it must not count.
    auto other = std::async(std::launch::async, [&] {
        RedisClient c(endpoint(), 1000ms);
        RealStream stream(c, m_ns, m_ns.prefix + "trial2:");
        return stream.xreadgroup("g", "consumer-1", "orders", 1, 5000ms);
    });
    RealStream producer(client(), m_ns, m_ns.prefix + "trial1:");
    RealStream other_trial(client(), m_ns, m_ns.prefix + "trial2:");
    other_trial.wait_readers_blocked(1, 3000ms);

    auto start = SteadyClock::now();
    try {
        producer.wait_readers_blocked(1, 150ms);
        ADD_FAILURE() << "no reader of trial1 is blocked";
    } catch (const RedisError& e) {
        EXPECT_NE(std::string(e.what()).find("only 0 of 1 readers blocked after"), std::string::npos) << e.what();
        EXPECT_EQ(e.command(), "wait_readers_blocked");
    }
    EXPECT_GE(elapsed_ms(start), 150);
    EXPECT_LT(elapsed_ms(start), 1000);
    producer.xadd("orders", {{{"event", "release"}}});
    EXPECT_EQ(other.get().size(), 1u);
}

// ---------------------------------------------------------------- RealKv

TEST_F(RealKvTest, SetNxPxSetsOnlyOnceAndExpires) {
    RealKv kv(client(), m_ns, false);
    EXPECT_TRUE(kv.set_nx_px("lock:order:42", "token-a", 5000ms));
    EXPECT_FALSE(kv.set_nx_px("lock:order:42", "token-b", 5000ms));
    EXPECT_EQ(client().call({"GET", key("lock:order:42")}).str, "token-a");
    long long pttl = client().call({"PTTL", key("lock:order:42")}).integer;
    EXPECT_GT(pttl, 0);
    EXPECT_LE(pttl, 5000);
    EXPECT_TRUE(kv.exists("lock:order:42"));
    EXPECT_FALSE(kv.exists("lock:order:43"));
}

TEST_F(RealKvTest, DeleteIfEqualsDeletesOnlyForTheHolderWhileItHolds) {
    RealKv kv(client(), m_ns, detect_redis_features(client()).delex);
    ASSERT_TRUE(kv.set_nx_px("lock", "token-a", 5000ms));
    EXPECT_EQ(kv.delete_if_equals("lock", "token-b"), 0);
    EXPECT_TRUE(kv.exists("lock"));
    EXPECT_EQ(kv.delete_if_equals("lock", "token-a"), 1);
    EXPECT_FALSE(kv.exists("lock"));

    ASSERT_TRUE(kv.set_nx_px("lock", "token-c", 50ms));
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(kv.delete_if_equals("lock", "token-c"), 0);
}

TEST_F(RealKvTest, MethodNamesTheLuaScriptWhereDelexIsMissing) {
    RedisFeatures f = detect_redis_features(client());
    RealKv kv(client(), m_ns, f.delex);
    if (f.delex) {
        EXPECT_EQ(kv.delete_if_equals_method(), "DELEX IFEQ");
        return;
    }
    EXPECT_EQ(kv.delete_if_equals_method(), "compare-and-delete Lua script");
    // Asking for DELEX anyway gives the server's error with the command and key.
    RealKv with_delex(client(), m_ns, true);
    EXPECT_EQ(with_delex.delete_if_equals_method(), "DELEX IFEQ");
    try {
        with_delex.delete_if_equals("lock", "t");
        ADD_FAILURE() << "DELEX does not exist on Redis " << f.version;
    } catch (const RedisError& e) {
        EXPECT_EQ(e.command().rfind("DELEX", 0), 0u) << e.command();
        EXPECT_EQ(e.key(), key("lock"));
        EXPECT_NE(e.server_message().find("unknown command"), std::string::npos) << e.server_message();
    }
}

}  // namespace redis_client_test
}  // namespace relab
