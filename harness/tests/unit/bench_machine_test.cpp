// The machine figures of `relab bench`: the memory reads must go through every slot of the buffer
// (a permutation with short cycles would stay in cache and time the cache, not the memory).
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "bench/measure/bench_machine.h"

namespace relab {

TEST(BenchMachineTest, one_cycle_visits_every_slot_before_it_comes_back) {
    for (size_t n : {1u, 2u, 3u, 10u, 1000u, 65536u}) {
        const std::vector<uint32_t> next = one_cycle(n, 13);
        ASSERT_EQ(next.size(), n);
        std::vector<bool> seen(n, false);
        uint32_t at = 0;
        for (size_t step = 0; step < n; ++step) {
            ASSERT_FALSE(seen[at]) << "slot " << at << " visited twice in a cycle of " << n;
            seen[at] = true;
            at = next[at];
        }
        EXPECT_EQ(at, 0u) << "n = " << n;
    }
}

TEST(BenchMachineTest, one_cycle_depends_on_its_seed_and_refuses_an_empty_buffer) {
    EXPECT_EQ(one_cycle(1000, 7), one_cycle(1000, 7));
    EXPECT_NE(one_cycle(1000, 7), one_cycle(1000, 8));
    EXPECT_THROW(one_cycle(0, 7), std::invalid_argument);
}

TEST(BenchMachineTest, the_probe_times_what_it_was_asked_to) {
    const MachineProbe p = probe_machine(1 << 20, 10000, 200);
    EXPECT_EQ(p.memory_bytes, size_t{1} << 20);
    EXPECT_EQ(p.reads, 10000);
    EXPECT_EQ(p.records, 200);
    EXPECT_GT(p.read_ns, 0);
    EXPECT_GT(p.record_ns, p.read_ns);  // a record is hundreds of allocations; a read one load
}

}  // namespace relab
