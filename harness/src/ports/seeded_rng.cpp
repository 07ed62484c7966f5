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

void SeededRng::bad_range() { throw std::invalid_argument("SeededRng::uniform: hi < lo"); }

}  // namespace relab
