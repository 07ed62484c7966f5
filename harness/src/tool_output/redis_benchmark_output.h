// Reading redis-benchmark's --csv output. Redis 7's rows are
//   "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
//   "XADD bench:s * f v","26666.67","0.036","0.008","0.023","0.023","0.047","7.031"
// Redis 6.0's have only "test","rps". The test name is the command as typed, quotes included, so a
// row is read from its end.
#pragma once

#include <optional>
#include <string>

namespace relab {

struct RedisBenchmarkRow {
    std::string test;  // "PING_MBULK", "XADD bench:s * f v"
    double rps = 0;
    // In milliseconds, as printed; absent in Redis 6.0's output.
    std::optional<double> avg_ms, min_ms, p50_ms, p95_ms, p99_ms, max_ms;
    double us_per_request() const { return rps > 0 ? 1e6 / rps : 0; }
};

// The first data row of the output (the header and progress lines skipped), or nullopt when there
// is none or its rps is not a positive number.
std::optional<RedisBenchmarkRow> parse_redis_benchmark_row(const std::string& out);

// "7.0.15" from `redis-benchmark --version` ("redis-benchmark 7.0.15" or, on older releases,
// "redis-benchmark 6.0.16 (git:...)"); nullopt when the output says nothing of the kind.
std::optional<std::string> parse_redis_benchmark_version(const std::string& out);

}  // namespace relab
