// RedisReply::to_string prints replies the way redis-cli does; no server needed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "clients/redis_client.h"
#include "clients/redis_link.h"

namespace relab {
namespace redis_reply_test {

RedisReply str(std::string s) {
    RedisReply r;
    r.type = RedisReply::Type::string;
    r.str = std::move(s);
    return r;
}

RedisReply arr(std::vector<RedisReply> elements) {
    RedisReply r;
    r.type = RedisReply::Type::array;
    r.elements = std::move(elements);
    return r;
}

TEST(RedisReplyTest, ScalarsPrintLikeRedisCli) {
    EXPECT_EQ(RedisReply{}.to_string(), "(nil)");
    RedisReply status;
    status.type = RedisReply::Type::status;
    status.str = "OK";
    EXPECT_EQ(status.to_string(), "OK");
    RedisReply error;
    error.type = RedisReply::Type::error;
    error.str = "ERR unknown command 'X'";
    EXPECT_EQ(error.to_string(), "(error) ERR unknown command 'X'");
    RedisReply integer;
    integer.type = RedisReply::Type::integer;
    integer.integer = -7;
    EXPECT_EQ(integer.to_string(), "(integer) -7");
    EXPECT_EQ(str("abc").to_string(), "\"abc\"");
}

TEST(RedisReplyTest, StringsAreEscapedLikeRedisCli) {
    EXPECT_EQ(str("a\"b\\c\n\r\t").to_string(), "\"a\\\"b\\\\c\\n\\r\\t\"");
    EXPECT_EQ(str(std::string("\x01\xff", 2)).to_string(), "\"\\x01\\xff\"");
    EXPECT_EQ(str("").to_string(), "\"\"");
}

TEST(RedisReplyTest, NestedArraysAreIndentedUnderTheirIndex) {
    // XRANGE orders - + with one entry.
    RedisReply entry = arr({str("1-0"), arr({str("event"), str("paid")})});
    EXPECT_EQ(arr({entry, RedisReply{}}).to_string(),
              "1) 1) \"1-0\"\n"
              "   2) 1) \"event\"\n"
              "      2) \"paid\"\n"
              "2) (nil)");
    EXPECT_EQ(arr({}).to_string(), "(empty array)");
}

TEST(RedisReplyTest, IndexesAreRightAlignedFromTenElements) {
    std::vector<RedisReply> ten;
    for (char c = 'a'; c <= 'j'; ++c) ten.push_back(str(std::string(1, c)));
    ten[9] = arr({str("x"), str("y")});
    std::string out = arr(ten).to_string();
    EXPECT_EQ(out.rfind(" 1) \"a\"\n 2) \"b\"\n", 0), 0u) << out;
    EXPECT_NE(out.find("\n 9) \"i\"\n10) 1) \"x\"\n    2) \"y\""), std::string::npos) << out;
}

RedisReply of(RedisReply::Type type, std::string text = "", long long integer = 0) {
    RedisReply r;
    r.type = type;
    r.str = std::move(text);
    r.integer = integer;
    return r;
}

TEST(ExistsReplyTest, AnIntegerCountsTheKey) {
    const std::vector<std::string> argv{"EXISTS", "relab:r:t1:idem:v1:7:8f3a"};
    EXPECT_TRUE(exists_reply(of(RedisReply::Type::integer, "", 1), argv));
    EXPECT_FALSE(exists_reply(of(RedisReply::Type::integer, "", 0), argv));
}

TEST(ExistsReplyTest, AnErrorReplyIsNeverReadAsAbsent) {
    const std::vector<std::string> argv{"EXISTS", "relab:r:t1:idem:v1:7:8f3a"};
    try {
        exists_reply(of(RedisReply::Type::error, "LOADING Redis is loading the dataset in memory"), argv);
        FAIL() << "an error reply was read as a count";
    } catch (const RedisError& e) {
        EXPECT_EQ(e.kind(), KvError::Kind::unexpected);
        const std::string what = e.what();
        EXPECT_NE(what.find("EXISTS relab:r:t1:idem:v1:7:8f3a"), std::string::npos) << what;
        EXPECT_NE(what.find("LOADING Redis is loading"), std::string::npos) << what;
        EXPECT_NE(what.find("cannot tell whether the key exists"), std::string::npos) << what;
    }
    EXPECT_THROW(exists_reply(of(RedisReply::Type::nil), argv), RedisError);
    EXPECT_THROW(exists_reply(of(RedisReply::Type::string, "0"), argv), RedisError);
}

TEST(OomErrorTest, OnlyTheMaxmemoryRefusalIsAnOomError) {
    EXPECT_TRUE(is_oom_error(of(RedisReply::Type::error, "OOM command not allowed when used memory > 'maxmemory'.")));
    EXPECT_FALSE(is_oom_error(of(RedisReply::Type::error, "READONLY You can't write against a read only replica.")));
    EXPECT_FALSE(is_oom_error(of(RedisReply::Type::error, "ERR OOM in a message")));
    EXPECT_FALSE(is_oom_error(of(RedisReply::Type::string, "OOM command not allowed")));
    EXPECT_FALSE(is_oom_error(of(RedisReply::Type::status, "OK")));
}

TEST(RedisErrorTest, KindSaysWhetherTheServerAnswered) {
    EXPECT_EQ(RedisError("SET k v", "k", "OOM command not allowed").kind(), KvError::Kind::reply);
    EXPECT_EQ(RedisConnectionError("SET k v", "k", "server closed the connection").kind(),
              KvError::Kind::unavailable);
}

// What RedisLink drops its connection for: the connection is gone, or the node was demoted. Every
// other error (the server's own answer, an unreadable reply) leaves the connection as it is.
TEST(RedisLinkTest, OnlyALostConnectionOrReadonlyMakesTheLinkLookForThePrimaryAgain) {
    EXPECT_TRUE(link_must_reconnect(RedisConnectionError("GET k", "k", "Connection refused")));
    EXPECT_TRUE(link_must_reconnect(RedisError("SET k v", "k", "READONLY You can't write against a read only replica.")));
    EXPECT_FALSE(link_must_reconnect(RedisError("SET k v", "k", "OOM command not allowed when used memory > 'maxmemory'.")));
    EXPECT_FALSE(link_must_reconnect(RedisError("SET k v NX GET", "k", "WRONGTYPE Operation against a key")));
    EXPECT_FALSE(link_must_reconnect(RedisError("XREADGROUP", "s", "NOGROUP No such key 's'")));
    EXPECT_FALSE(link_must_reconnect(RedisError("GET k", "k", "ERR mentions READONLY later")));
    EXPECT_FALSE(link_must_reconnect(RedisError("SET k v", "k", "READONLY", KvError::Kind::unexpected)));
}

}  // namespace redis_reply_test
}  // namespace relab
