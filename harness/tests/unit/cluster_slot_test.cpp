// Redis Cluster's key → slot function, checked against the cluster specification's reference
// values and the hash-tag rules, and the reader of CLUSTER SLOTS on replies built by hand, without
// a server.
#include <gtest/gtest.h>

#include "clients/cluster_slot.h"
#include "clients/redis_client.h"

namespace relab {
namespace cluster_slot_test {

TEST(ClusterSlotTest, crc16_is_the_xmodem_variant_of_the_cluster_specification) {
    EXPECT_EQ(crc16_xmodem("123456789"), 0x31C3);  // the spec's check value
    EXPECT_EQ(crc16_xmodem(""), 0);
}

TEST(ClusterSlotTest, slots_match_what_cluster_keyslot_answers) {
    EXPECT_EQ(key_slot("foo"), 12182);      // CLUSTER KEYSLOT foo, from the command's documentation
    EXPECT_EQ(key_slot("somekey"), 11058);  // CLUSTER KEYSLOT somekey, idem
    EXPECT_EQ(key_slot(""), 0);
    for (const char* key : {"a", "idem:v1:7:8f3a", "{user:7}", "\xff\xfe binary"}) {
        EXPECT_GE(key_slot(key), 0) << key;
        EXPECT_LT(key_slot(key), kClusterSlots) << key;
    }
}

TEST(ClusterSlotTest, only_the_hash_tag_is_hashed) {
    EXPECT_EQ(key_slot("{user1000}.following"), key_slot("{user1000}.followers"));
    EXPECT_EQ(key_slot("{user1000}.following"), key_slot("user1000"));
    // The article's pair: the idempotency key and the lock of user 7 share a slot with the tag...
    EXPECT_EQ(key_slot("idem:v1:{user:7}:8f3a"), key_slot("lock:v1:{user:7}:place-order"));
    EXPECT_EQ(key_slot("idem:v1:{user:7}:8f3a"), key_slot("user:7"));
    // ...and do not without it.
    EXPECT_NE(key_slot("idem:v1:7:8f3a"), key_slot("lock:v1:7:place-order"));
}

TEST(ClusterSlotTest, the_specifications_edge_cases_of_hash_tags) {
    // The first '{' and the first '}' after it; an empty tag or no '}' means the whole key.
    EXPECT_EQ(hashed_part("foo{bar}{zap}"), "bar");
    EXPECT_EQ(hashed_part("foo{{bar}}zap"), "{bar");
    EXPECT_EQ(hashed_part("foo{}{bar}"), "foo{}{bar}");
    EXPECT_EQ(hashed_part("{}"), "{}");
    EXPECT_EQ(hashed_part("foo{bar"), "foo{bar");
    EXPECT_EQ(hashed_part("foo}bar{"), "foo}bar{");
    EXPECT_EQ(hashed_part("plain"), "plain");
    EXPECT_EQ(key_slot("foo{bar}{zap}"), key_slot("bar"));
    EXPECT_EQ(key_slot("foo{{bar}}zap"), key_slot("{bar"));
    EXPECT_EQ(key_slot("foo{}{bar}"), crc16_xmodem("foo{}{bar}") % kClusterSlots);
    EXPECT_NE(key_slot("foo{}{bar}"), key_slot("bar"));
}

TEST(ClusterSlotTest, three_masters_get_redis_clis_split) {
    const auto ranges = split_slots(3);
    ASSERT_EQ(ranges.size(), 3u);
    EXPECT_EQ(ranges[0].text(), "0-5460");
    EXPECT_EQ(ranges[1].text(), "5461-10922");
    EXPECT_EQ(ranges[2].text(), "10923-16383");
    EXPECT_EQ(split_slots(1).at(0).text(), "0-16383");
    EXPECT_TRUE(ranges[1].contains(5461));
    EXPECT_FALSE(ranges[1].contains(5460));
}

TEST(ClusterSlotTest, every_split_covers_every_slot_once_in_order) {
    for (int masters = 1; masters <= 16; ++masters) {
        const auto ranges = split_slots(masters);
        ASSERT_EQ(ranges.size(), static_cast<size_t>(masters));
        int next = 0;
        for (const auto& r : ranges) {
            EXPECT_EQ(r.first, next) << masters << " masters";
            EXPECT_GE(r.count(), kClusterSlots / masters - 1) << masters << " masters";
            next = r.last + 1;
        }
        EXPECT_EQ(next, kClusterSlots) << masters << " masters";
    }
    EXPECT_THROW(split_slots(0), std::invalid_argument);
    EXPECT_THROW(split_slots(kClusterSlots + 1), std::invalid_argument);
}

RedisReply integer(long long v) {
    RedisReply r;
    r.type = RedisReply::Type::integer;
    r.integer = v;
    return r;
}

RedisReply text(const std::string& v) {
    RedisReply r;
    r.type = RedisReply::Type::string;
    r.str = v;
    return r;
}

RedisReply array(std::vector<RedisReply> elements) {
    RedisReply r;
    r.type = RedisReply::Type::array;
    r.elements = std::move(elements);
    return r;
}

// One range of CLUSTER SLOTS: first, last, the master (host, port, id) and one replica.
RedisReply range(int first, int last, int master_port) {
    return array({integer(first), integer(last), array({text("127.0.0.1"), integer(master_port), text("id")}),
                  array({text("127.0.0.1"), integer(master_port + 1), text("replica")})});
}

TEST(ClusterSlotTest, the_slot_map_names_each_master_once_in_its_order_and_each_slot_its_master) {
    const SlotMap m = read_slot_map(array({range(5461, 10922, 7002), range(0, 5460, 7000), range(10923, 16383, 7002)}));
    ASSERT_EQ(m.masters.size(), 2u);
    EXPECT_EQ(m.masters[0], std::make_pair(std::string("127.0.0.1"), 7002));
    EXPECT_EQ(m.masters[1], std::make_pair(std::string("127.0.0.1"), 7000));
    EXPECT_EQ(m.master_of(0)->second, 7000);
    EXPECT_EQ(m.master_of(5461)->second, 7002);
    EXPECT_EQ(m.master_of(16383)->second, 7002);
    EXPECT_FALSE(m.master_of(kClusterSlots).has_value());
    EXPECT_FALSE(m.unserved_slot().has_value());
}

TEST(ClusterSlotTest, a_slot_no_range_names_has_no_master_and_a_later_range_wins) {
    const SlotMap m = read_slot_map(array({range(0, 100, 7000), range(50, 60, 7004)}));
    EXPECT_EQ(m.master_of(55)->second, 7004);
    EXPECT_EQ(m.master_of(61)->second, 7000);
    EXPECT_FALSE(m.master_of(101).has_value());
    EXPECT_EQ(m.unserved_slot(), 101);
    EXPECT_EQ(read_slot_map(array({})).unserved_slot(), 0);  // a node not in a cluster yet
}

TEST(ClusterSlotTest, a_range_of_another_shape_is_refused_with_the_reply) {
    EXPECT_THROW(read_slot_map(array({array({integer(0), integer(5)})})), RedisError);
    try {
        read_slot_map(array({array({integer(0), integer(5), array({text("127.0.0.1")})})}));
        FAIL() << "a master without a port was read";
    } catch (const RedisError& e) {
        EXPECT_NE(std::string(e.what()).find("unexpected reply"), std::string::npos) << e.what();
    }
}

}  // namespace cluster_slot_test
}  // namespace relab
