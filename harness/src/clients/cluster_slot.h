// Redis Cluster's key → slot mapping, computed on the client: hiredis 0.14 has no cluster support,
// so relab finds the node that owns a key itself. The rules are the cluster specification's:
// CRC16 (XMODEM) of the key mod 16384, or of its hash tag, the part between the first '{' and the
// first '}' after it when that part is not empty.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
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

}  // namespace relab
