// The Redis figures of `relab bench`, each against a reference measured by redis-benchmark on the
// same server in the same run: round trips of relab's client (bench_round_trips), the delivery of
// an XADD to a consumer blocked in XREADGROUP against a PING round trip (bench_receipt), and the
// producer's publishing rate (bench_load). The caller owns the server (its own throwaway one).
#pragma once

#include <vector>

#include "bench/figure.h"
#include "servers/servers.h"
#include "process/redis_benchmark_tool.h"

namespace relab {

struct RedisBenchOptions {
    int requests = 20000;  // sequential round trips per command and per tool
    int samples = 2000;    // XADD → blocked consumer receipts
    int repetitions = 3;   // relab and redis-benchmark alternate; the median repetition is kept
    // The load figure's pipelining: XADDs per write, for relab's producer port and for
    // redis-benchmark -P. One client on each side.
    int pipeline = 1;
};

// Targets: relab's client within 20% of redis-benchmark on a round trip, a receipt within 20% of
// a PING round trip, the producer at least half of redis-benchmark's XADD rate.
inline constexpr double kRoundTripTarget = 1.2;
inline constexpr double kReceiptTarget = 1.2;
inline constexpr double kLoadTarget = 0.5;

// redis/XADD, redis/XREADGROUP, redis/SET_NX_GET: µs per sequential round trip, relab ÷ redis-benchmark.
std::vector<BenchFigure> bench_round_trips(const RedisEndpoint& ep, RedisBenchmarkTool& tool, const RedisBenchOptions& o);
// ping/p50, ping/p99 (relab against redis-benchmark -t ping_mbulk) and receipt/p50, receipt/p99
// (XADD → a blocked XREADGROUP's reply, against relab's PING).
std::vector<BenchFigure> bench_receipt(const RedisEndpoint& ep, RedisBenchmarkTool& tool, const RedisBenchOptions& o);
// load/producer_xadd: the producer role's publish path (RealStream::xadd, the Stream port) as fast
// as it goes, against redis-benchmark XADD with the same clients and pipelining.
// The load lab's own no-op job throughput (load/noop_jobs) is measured by bench/measure/bench_parts.cpp, which
// runs `relab run` on load-s1 with free jobs, against redis-benchmark XADD with the same kLoadTarget.
std::vector<BenchFigure> bench_load(const RedisEndpoint& ep, RedisBenchmarkTool& tool, const RedisBenchOptions& o);

}  // namespace relab
