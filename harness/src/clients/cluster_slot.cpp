#include "clients/cluster_slot.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

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

}  // namespace relab
