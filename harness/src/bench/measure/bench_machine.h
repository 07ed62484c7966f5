// What the machine itself gives, timed by `relab bench` beside relab's figures: one dependent
// random memory read, and one history-shaped JSON record built, written and read back. They are
// not relab's speed. They say how fast the machine was, so two bench files from different machines
// (or one machine under different loads) can be told apart before their other figures are compared:
// every CPU-bound figure (the simulator's trials/s, a build) moves with them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace relab {

struct MachineProbe {
    size_t memory_bytes = 0;
    int64_t reads = 0;
    double read_ns = 0;  // per dependent read
    int64_t records = 0;
    double record_ns = 0;  // per record: built, dumped, parsed
};

// A permutation of 0..n-1 that is one cycle through every slot (Sattolo's shuffle, seeded):
// following next[i] from 0 visits all n slots before it comes back, so no read can be skipped or
// served by a short loop that stays in cache.
std::vector<uint32_t> one_cycle(size_t n, uint64_t seed);

// Times `reads` dependent reads over `memory_bytes`, then `records` JSON records.
MachineProbe probe_machine(size_t memory_bytes, int64_t reads, int64_t records);

}  // namespace relab
