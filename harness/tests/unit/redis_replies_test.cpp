// What RealControl reads out of Redis replies (backend_real/redis_replies.h), on replies and CLIENT
// LIST text built by hand; no server needed.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend_real/redis_replies.h"

namespace relab {
namespace redis_replies_test {

RedisReply of(RedisReply::Type type, std::string s = "", long long integer = 0) {
    RedisReply r;
    r.type = type;
    r.str = std::move(s);
    r.integer = integer;
    return r;
}

RedisReply array(std::vector<RedisReply> elements) {
    RedisReply r = of(RedisReply::Type::array);
    r.elements = std::move(elements);
    return r;
}

RedisReply str(std::string s) { return of(RedisReply::Type::string, std::move(s)); }

TEST(RedisReplies, ReplyDataGivesEachTypeAsData) {
    EXPECT_EQ(reply_data(RedisReply{}), nlohmann::json(nullptr));
    EXPECT_EQ(reply_data(of(RedisReply::Type::status, "OK")), "OK");
    EXPECT_EQ(reply_data(str("v")), "v");
    EXPECT_EQ(reply_data(of(RedisReply::Type::integer, "", 42)), 42);
    EXPECT_EQ(reply_data(of(RedisReply::Type::error, "OOM command not allowed")),
              nlohmann::json({{"error", "OOM command not allowed"}}));
    const RedisReply nested = array({str("a"), of(RedisReply::Type::integer, "", 7), array({RedisReply{}})});
    EXPECT_EQ(reply_data(nested), nlohmann::json::parse(R"(["a", 7, [null]])"));
    EXPECT_EQ(reply_data(array({})), nlohmann::json::array());
}

TEST(RedisReplies, FieldOfFindsAFieldOfAFlatArray) {
    // One entry of XINFO GROUPS: name, consumers, pending, last-delivered-id.
    const RedisReply group = array({str("name"), str("order-processor"), str("consumers"),
                                    of(RedisReply::Type::integer, "", 2), str("pending"),
                                    of(RedisReply::Type::integer, "", 3), str("last-delivered-id"), str("5-0")});
    ASSERT_NE(field_of(group, "name"), nullptr);
    EXPECT_EQ(field_of(group, "name")->str, "order-processor");
    EXPECT_EQ(field_of(group, "pending")->integer, 3);
    EXPECT_EQ(field_of(group, "last-delivered-id")->str, "5-0");
    EXPECT_EQ(field_of(group, "lag"), nullptr);
    // A value is not a field name: "5-0" names nothing, and a field without its value is absent.
    EXPECT_EQ(field_of(group, "5-0"), nullptr);
    EXPECT_EQ(field_of(array({str("name")}), "name"), nullptr);
}

TEST(RedisReplies, NamedClientsReadsIdsAndNamesOfClientList) {
    const std::string list =
        "id=3 addr=127.0.0.1:5000 laddr=127.0.0.1:6379 fd=8 name=relab:r1:08a:t1:C1 age=2 idle=0 flags=b db=0 "
        "cmd=xreadgroup user=default lib-name=hiredis lib-ver=1.2\n"
        "id=4 addr=127.0.0.1:5001 laddr=127.0.0.1:6379 fd=9 name= age=2 idle=0 flags=N db=0 cmd=client|list\n"
        "id=15 addr=127.0.0.1:5002 laddr=127.0.0.1:6379 fd=10 name=relab:r1:08a:t1:C1.w1 age=1 idle=1 flags=N\n"
        "garbage line name=x\n"
        "id=16 addr=127.0.0.1:5003 fd=11 age=1\n";
    const std::vector<NamedClient> clients = named_clients(list);
    ASSERT_EQ(clients.size(), 3u);
    EXPECT_EQ(clients[0].id, "3");
    EXPECT_EQ(clients[0].name, "relab:r1:08a:t1:C1");
    EXPECT_EQ(clients[1].id, "4");
    EXPECT_EQ(clients[1].name, "");  // unnamed: lib-name is not its name
    EXPECT_EQ(clients[2].id, "15");
    EXPECT_EQ(clients[2].name, "relab:r1:08a:t1:C1.w1");
    EXPECT_TRUE(named_clients("").empty());
}

}  // namespace redis_replies_test
}  // namespace relab
