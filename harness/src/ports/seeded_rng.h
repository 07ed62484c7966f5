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
class SeededRng : public Rng {
public:
    explicit SeededRng(uint64_t seed);
    int64_t uniform(int64_t lo, int64_t hi) override;
    uint64_t next();

private:
    uint64_t m_s[4];
};

}  // namespace relab
