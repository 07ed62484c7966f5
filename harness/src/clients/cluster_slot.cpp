#include "clients/cluster_slot.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "clients/redis_client.h"

namespace relab {

uint16_t crc16_xmodem(std::string_view data) {
    uint16_t crc = 0;
    for (unsigned char byte : data) {
        crc = static_cast<uint16_t>(crc ^ (byte << 8));
        for (int bit = 0; bit < 8; ++bit)
            crc = static_cast<uint16_t>((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
    }
    return crc;
}

std::string_view hashed_part(std::string_view key) {
    const size_t open = key.find('{');
    if (open == std::string_view::npos) return key;
    const size_t close = key.find('}', open + 1);
    if (close == std::string_view::npos || close == open + 1) return key;
    return key.substr(open + 1, close - open - 1);
}

int key_slot(std::string_view key) { return crc16_xmodem(hashed_part(key)) & (kClusterSlots - 1); }

std::string SlotRange::text() const { return fmt::format("{}-{}", first, last); }

std::vector<SlotRange> split_slots(int masters) {
    if (masters < 1 || masters > kClusterSlots)
        throw std::invalid_argument(fmt::format("a cluster needs 1..{} masters, not {}", kClusterSlots, masters));
    // redis-cli's own arithmetic (clusterManagerCommandCreate), so the ranges match a cluster it made.
    // Single precision as there.
    const float per_node = static_cast<float>(kClusterSlots) / static_cast<float>(masters);
    std::vector<SlotRange> out;
    int first = 0;
    float cursor = 0.0f;
    for (int i = 0; i < masters; ++i) {
        int last = static_cast<int>(std::lround(cursor + per_node - 1.0f));
        if (last > kClusterSlots - 1 || i == masters - 1) last = kClusterSlots - 1;
        if (last < first) last = first;
        out.push_back({first, last});
        first = last + 1;
        cursor += per_node;
    }
    return out;
}

std::optional<std::pair<std::string, int>> SlotMap::master_of(int slot) const {
    if (slot < 0 || slot >= kClusterSlots || owner[static_cast<size_t>(slot)] == kNoMaster) return std::nullopt;
    return masters.at(owner[static_cast<size_t>(slot)]);
}

std::optional<int> SlotMap::unserved_slot() const {
    const auto it = std::find(owner.begin(), owner.end(), kNoMaster);
    if (it == owner.end()) return std::nullopt;
    return static_cast<int>(it - owner.begin());
}

SlotMap read_slot_map(const RedisReply& reply) {
    SlotMap m;
    for (const RedisReply& range : reply.elements) {
        if (range.elements.size() < 3 || range.elements[2].elements.size() < 2)
            throw RedisError("CLUSTER SLOTS", "", "unexpected reply: " + reply.to_string(), KvError::Kind::unexpected);
        const std::pair<std::string, int> at{range.elements[2].elements[0].str,
                                             static_cast<int>(range.elements[2].elements[1].integer)};
        const auto it = std::find(m.masters.begin(), m.masters.end(), at);
        const auto index = static_cast<uint16_t>(it - m.masters.begin());
        if (it == m.masters.end()) m.masters.push_back(at);
        for (auto s = std::max(0LL, range.elements[0].integer); s <= range.elements[1].integer && s < kClusterSlots; ++s)
            m.owner[static_cast<size_t>(s)] = index;
    }
    return m;
}

}  // namespace relab
