// The link proxy (process/link_proxy.h) in front of a real redis-server: a delay adds its time to
// every round trip, a blackhole takes the bytes and answers nothing until the heal lets them
// through, a reset answers with an RST, and nothing of the proxy is left once it is gone.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>

#include "clients/redis_client.h"
#include "process/link_proxy.h"
#include "servers/servers.h"

namespace relab {
namespace link_proxy_test {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

RedisEndpoint through(const LinkProxy& p) { return RedisEndpoint{"127.0.0.1", p.port(), "", 0}; }

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// The slowest of n PINGs, in ms.
double slowest_ping(RedisClient& c, int n) {
    double worst = 0;
    for (int i = 0; i < n; ++i) {
        const auto t0 = Clock::now();
        EXPECT_EQ(c.call({"PING"}).str, "PONG");
        worst = std::max(worst, ms_since(t0));
    }
    return worst;
}

bool port_accepts(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
}

TEST(LinkProxyTest, ADelayAddsItsTimeToEveryRoundTripAndAHealTakesItAway) {
    EmbeddedRedis redis;
    LinkProxy proxy(redis.endpoint().host, redis.endpoint().port);
    RedisClient c(through(proxy));
    EXPECT_LT(slowest_ping(c, 20), 40.0);
    proxy.set(LinkMode{.blackhole = false, .delay = milliseconds(60)});
    for (int i = 0; i < 5; ++i) {
        const auto t0 = Clock::now();
        EXPECT_EQ(c.call({"PING"}).str, "PONG");
        const double ms = ms_since(t0);
        EXPECT_GE(ms, 60.0);
        EXPECT_LT(ms, 600.0);
    }
    EXPECT_EQ(proxy.set(LinkMode{}), 0);  // a delay holds nothing for a heal to release
    EXPECT_LT(slowest_ping(c, 20), 40.0);
    EXPECT_EQ(proxy.connections(), 1);
}

// The bytes are taken, not refused: the PING waits (no error, no reset), and the SET sent beside
// it does not reach the server until the heal, when both go through in order.
TEST(LinkProxyTest, ABlackholeHangsAPingUntilTheHealAndTheHeldBytesThenFlow) {
    EmbeddedRedis redis;
    RedisClient admin(redis.endpoint());
    LinkProxy proxy(redis.endpoint().host, redis.endpoint().port);
    RedisClient c(through(proxy), milliseconds(0));  // no socket timeout: a hung call stays hung
    EXPECT_EQ(c.call({"PING"}).str, "PONG");
    proxy.set(LinkMode{.blackhole = true});
    const auto t0 = Clock::now();
    auto hung = std::async(std::launch::async, [&] {
        const std::string set = c.call({"SET", "link-proxy-test:k", "v"}).str;
        return set + " " + c.call({"PING"}).str;
    });
    EXPECT_EQ(hung.wait_for(milliseconds(400)), std::future_status::timeout);
    EXPECT_EQ(admin.call({"EXISTS", "link-proxy-test:k"}).integer, 0);  // the SET never reached the server
    EXPECT_GT(proxy.queued_bytes(), 0);
    const int64_t released = proxy.set(LinkMode{});
    EXPECT_GE(released, static_cast<int64_t>(std::string("*3\r\n$3\r\nSET\r\n").size()));
    ASSERT_EQ(hung.wait_for(milliseconds(2000)), std::future_status::ready);
    EXPECT_EQ(hung.get(), "OK PONG");
    EXPECT_GE(ms_since(t0), 400.0);
    EXPECT_EQ(admin.call({"GET", "link-proxy-test:k"}).str, "v");
    EXPECT_EQ(proxy.queued_bytes(), 0);
}

// The role's own socket timeout decides what a hung call becomes (hiredis: an I/O error naming the
// timeout), not the proxy, which neither closes nor answers.
TEST(LinkProxyTest, ACallerWithASocketTimeoutGetsItsTimeoutErrorFromABlackhole) {
    EmbeddedRedis redis;
    LinkProxy proxy(redis.endpoint().host, redis.endpoint().port);
    RedisClient c(through(proxy), milliseconds(300));
    EXPECT_EQ(c.call({"PING"}).str, "PONG");
    proxy.set(LinkMode{.blackhole = true});
    const auto t0 = Clock::now();
    try {
        c.call({"PING"});
        ADD_FAILURE() << "a PING through a blackhole was answered";
    } catch (const RedisError& e) {
        EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
    }
    EXPECT_GE(ms_since(t0), 290.0);
}

// reset_peer: the command reaches the server and runs, and the caller gets "connection reset" in
// place of its reply; every connection is reset so until the heal, after which a new one carries.
TEST(LinkProxyTest, AResetRunsTheCommandAndResetsTheConnectionInPlaceOfItsReplyUntilTheHeal) {
    EmbeddedRedis redis;
    RedisClient admin(redis.endpoint());
    LinkProxy proxy(redis.endpoint().host, redis.endpoint().port);
    RedisClient c(through(proxy), milliseconds(2000));
    EXPECT_EQ(c.call({"PING"}).str, "PONG");
    proxy.set(LinkMode{.reset = LinkServer::redis});
    try {
        c.call({"INCR", "link-proxy-test:n"});
        ADD_FAILURE() << "an INCR through a reset link was answered";
    } catch (const RedisError& e) {
        EXPECT_NE(std::string(e.what()).find("reset"), std::string::npos) << e.what();
    }
    EXPECT_EQ(admin.call({"GET", "link-proxy-test:n"}).str, "1");  // it ran: only its reply was lost
    EXPECT_THROW(RedisClient(through(proxy), milliseconds(2000)).call({"PING"}), RedisError);
    EXPECT_EQ(proxy.set(LinkMode{}), 0);
    RedisClient again(through(proxy), milliseconds(2000));
    EXPECT_EQ(again.call({"INCR", "link-proxy-test:n"}).integer, 2);
    EXPECT_EQ(proxy.queued_bytes(), 0);
}

TEST(LinkProxyTest, NothingListensOnceTheProxyIsGoneAndAServerThatIsDownClosesTheRolesConnection) {
    EmbeddedRedis redis;
    int port = 0;
    {
        LinkProxy proxy(redis.endpoint().host, redis.endpoint().port);
        port = proxy.port();
        RedisClient c(through(proxy));
        EXPECT_EQ(c.call({"PING"}).str, "PONG");
        EXPECT_TRUE(port_accepts(port));
    }
    EXPECT_FALSE(port_accepts(port));

    const int server_port = redis.endpoint().port;
    redis.stop();
    LinkProxy proxy("127.0.0.1", server_port);
    EXPECT_THROW(
        {
            RedisClient c(through(proxy));
            c.call({"PING"});
        },
        RedisError);
}

}  // namespace link_proxy_test
}  // namespace relab
