#include "ports/seeded_rng.h"

#include <stdexcept>

namespace relab {

uint64_t mix_seed(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t derive_seed(uint64_t parent, std::string_view label) {
    uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a of the label
    for (unsigned char c : label) h = (h ^ c) * 0x100000001b3ULL;
    return mix_seed(parent ^ mix_seed(h));
}

uint64_t derive_seed(uint64_t parent, uint64_t index) { return mix_seed(parent ^ mix_seed(index + 1)); }

SeededRng::SeededRng(uint64_t seed) {
    uint64_t x = seed;
    for (auto& s : m_s) {
        x = mix_seed(x);
        s = x;
    }
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t SeededRng::next() {
    const uint64_t result = rotl(m_s[1] * 5, 7) * 9;
    const uint64_t t = m_s[1] << 17;
    m_s[2] ^= m_s[0];
    m_s[3] ^= m_s[1];
    m_s[1] ^= m_s[2];
    m_s[0] ^= m_s[3];
    m_s[2] ^= t;
    m_s[3] = rotl(m_s[3], 45);
    return result;
}

int64_t SeededRng::uniform(int64_t lo, int64_t hi) {
    if (hi < lo) throw std::invalid_argument("SeededRng::uniform: hi < lo");
    const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
    if (span == 0) return static_cast<int64_t>(next());  // the full 64-bit range
    const uint64_t limit = UINT64_MAX - (UINT64_MAX % span);
    uint64_t r;
    do r = next();
    while (r >= limit);
    return lo + static_cast<int64_t>(r % span);
}

}  // namespace relab
