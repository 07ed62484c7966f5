#include "bench/measure/bench_machine.h"

#include <chrono>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace relab {

namespace {

uint64_t splitmix64(uint64_t& state) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

double ns_since(std::chrono::steady_clock::time_point start, int64_t count) {
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    return count > 0 ? ns / static_cast<double>(count) : 0;
}

}  // namespace

std::vector<uint32_t> one_cycle(size_t n, uint64_t seed) {
    if (n == 0 || n > UINT32_MAX) throw std::invalid_argument("one_cycle: n must be in 1..2^32-1");
    std::vector<uint32_t> next(n);
    std::iota(next.begin(), next.end(), 0u);
    uint64_t state = seed;
    // Sattolo: j < i (never i itself), which makes the permutation a single cycle.
    for (size_t i = n - 1; i > 0; --i) std::swap(next[i], next[splitmix64(state) % i]);
    return next;
}

MachineProbe probe_machine(size_t memory_bytes, int64_t reads, int64_t records) {
    MachineProbe p;
    p.memory_bytes = memory_bytes;
    p.reads = reads;
    p.records = records;

    const std::vector<uint32_t> next = one_cycle(std::max<size_t>(1, memory_bytes / sizeof(uint32_t)), 13);
    uint32_t at = 0;
    auto start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < reads; ++i) at = next[at];
    p.read_ns = ns_since(start, reads);
    volatile uint32_t sink = at;  // the reads' result is used
    (void)sink;

    size_t bytes = 0;
    start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < records; ++i) {
        nlohmann::json r = nlohmann::json::object();
        r["t_us"] = i * 250;
        r["role"] = "C1";
        r["op"] = "write";
        r["order"] = 42 + (i & 7);
        r["event"] = {{"type", "paid"}, {"v", 2}, {"id", std::to_string(i) + "-0"}};
        r["rows"] = 1;
        const std::string text = r.dump();
        bytes += nlohmann::json::parse(text).size() + text.size();
    }
    p.record_ns = ns_since(start, records);
    volatile size_t sink2 = bytes;
    (void)sink2;
    return p;
}

}  // namespace relab
