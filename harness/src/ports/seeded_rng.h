#pragma once

#include <cstdint>
#include <string_view>

#include "ports/ports.h"

namespace relab {

// splitmix64: the one mixing step every seed derivation uses, so seeds are stable across
// compilers and standard libraries (std distributions are not).
uint64_t mix_seed(uint64_t x);
// The seed of a child (a lab, a trial, an actor) from its parent's seed and a label or index.
uint64_t derive_seed(uint64_t parent, std::string_view label);
uint64_t derive_seed(uint64_t parent, uint64_t index);

// xoshiro256** seeded through splitmix64; uniform() is unbiased (rejection sampling).
class SeededRng final : public Rng {
public:
    explicit SeededRng(uint64_t seed);
    // Inline, and the class final: the simulator's calls through a SeededRng& are direct.
    int64_t uniform(int64_t lo, int64_t hi) override {
        if (hi < lo) bad_range();
        const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
        if (span == 0) return static_cast<int64_t>(next());  // the full 64-bit range
        // The simulator draws from the same few ranges over and over: keep the last one's limit.
        if (span != m_span) {
            m_span = span;
            m_limit = UINT64_MAX - (UINT64_MAX % span);
        }
        const uint64_t limit = m_limit;
        uint64_t r;
        do r = next();
        while (r >= limit);
        return lo + static_cast<int64_t>(r % span);
    }
    uint64_t next() {
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

private:
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    [[noreturn]] static void bad_range();

    uint64_t m_s[4];
    uint64_t m_span = 0, m_limit = 0;  // the last span drawn from and its rejection limit
};

}  // namespace relab
