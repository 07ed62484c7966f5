// Redis Cluster's key → slot mapping, computed on the client: hiredis 0.14 has no cluster support,
// so relab finds the node that owns a key itself. The rules are the cluster specification's:
// CRC16 (XMODEM) of the key mod 16384, or of its hash tag, the part between the first '{' and the
// first '}' after it when that part is not empty. The slot map a node reports (CLUSTER SLOTS) is
// read here too, once, for the cluster client and for the lab's own cluster alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace relab {

inline constexpr int kClusterSlots = 16384;

// CRC16-CCITT as the cluster hashes keys (XMODEM: polynomial 0x1021, initial value 0, no reflection).
// crc16_xmodem("123456789") == 0x31C3.
uint16_t crc16_xmodem(std::string_view data);

// The part of the key that is hashed: its hash tag, or the whole key when it has none ("{}" is no tag).
std::string_view hashed_part(std::string_view key);

// CLUSTER KEYSLOT key, without a server: 0..16383.
int key_slot(std::string_view key);

// Slots first..last, both included.
struct SlotRange {
    int first = 0;
    int last = kClusterSlots - 1;
    int count() const { return last - first + 1; }
    bool contains(int slot) const { return slot >= first && slot <= last; }
    std::string text() const;  // "0-5460"
};

// The even split `redis-cli --cluster create` makes over `masters` masters (3 → 0-5460,
// 5461-10922, 10923-16383). Throws std::invalid_argument unless 1 <= masters <= 16384.
std::vector<SlotRange> split_slots(int masters);

struct RedisReply;  // clients/redis_client.h

// A CLUSTER SLOTS reply: the masters it names (host, port), in its order, and each slot's master
// among them. A slot two ranges name is the later range's, as the cluster spec's clients read it.
struct SlotMap {
    static constexpr uint16_t kNoMaster = 0xffff;
    std::vector<std::pair<std::string, int>> masters;
    std::vector<uint16_t> owner = std::vector<uint16_t>(kClusterSlots, kNoMaster);  // per slot: an index into masters
    // The master serving `slot`; nullopt when no range names it.
    std::optional<std::pair<std::string, int>> master_of(int slot) const;
    // The first slot no range names; nullopt when every slot has its master.
    std::optional<int> unserved_slot() const;
};

// Reads a CLUSTER SLOTS reply. Throws RedisError (KvError::Kind::unexpected, the reply in its
// message) when a range is not [first, last, [host, port, ...], ...].
SlotMap read_slot_map(const RedisReply& reply);

}  // namespace relab
