// The producer's publishing rate against redis-benchmark's XADD: RealStream::xadd, the Stream port
// the producer role publishes through, with the role's event fields (order, type, v), `pipeline`
// events per call, as fast as it goes; redis-benchmark sends the same XADD with -c 1 -P pipeline.
// The load lab's no-op job throughput beside it is load/noop_jobs (bench/measure/bench_parts.cpp).
#include <chrono>

#include <fmt/format.h>

#include "util/interrupt.h"
#include "clients/redis_client.h"
#include "bench/measure/bench_redis.h"

namespace relab {

namespace {

using SteadyClock = std::chrono::steady_clock;

// XADDs per second through the producer's port: `requests` events in calls of `pipeline`.
double producer_rate(RedisClient& c, const std::string& stream, int requests, int pipeline) {
    RealStream port(c, RedisNamespace{"bench:load:"}, "bench:load:reader:");
    const std::vector<Fields> batch(static_cast<size_t>(pipeline), Fields{{"order", "1"}, {"type", "paid"}, {"v", "1"}});
    const std::vector<Fields> last(static_cast<size_t>(requests % pipeline), batch.front());
    const auto start = SteadyClock::now();
    for (int sent = 0, calls = 0; sent < requests; ++calls) {
        const auto& b = requests - sent >= pipeline ? batch : last;
        port.xadd(stream, b);
        sent += static_cast<int>(b.size());
        if ((calls & 255) == 0) throw_if_interrupted();
    }
    return requests / std::chrono::duration<double>(SteadyClock::now() - start).count();
}

}  // namespace

std::vector<BenchFigure> bench_load(const RedisEndpoint& ep, RedisBenchmarkTool& tool, const RedisBenchOptions& o) {
    RedisClient c(ep);
    const std::string relab_key = "bench:load:relab", rb_key = "bench:load:redis-benchmark";
    std::vector<double> relab_rate, rb_rate;
    for (int rep = 0; rep < o.repetitions; ++rep) {
        c.call({"DEL", relab_key, rb_key});
        relab_rate.push_back(producer_rate(c, "relab", o.requests, o.pipeline));
        rb_rate.push_back(tool.run({"XADD", rb_key, "*", "order", "1", "type", "paid", "v", "1"}, o.requests, 1, o.pipeline)
                              .rps);
    }
    c.call({"DEL", relab_key, rb_key});
    const double relab = percentile(relab_rate, 50), rb = percentile(rb_rate, 50);
    BenchFigure f;
    f.name = o.pipeline == 1 ? "load/producer_xadd" : fmt::format("load/producer_xadd/pipeline:{}", o.pipeline);
    f.iterations = o.requests;
    f.real_time = 1e6 / relab;
    f.items_per_second = relab;
    f.ratio = safe_ratio(relab, rb);
    f.ratio_of = "relab_xadd_per_s / redis_benchmark_xadd_per_s";
    f.target = kLoadTarget;
    f.target_kind = TargetKind::at_least;
    f.label = fmt::format("relab {:.0f} XADD/s, redis-benchmark {:.0f} XADD/s", relab, rb);
    f.measured = fmt::format(
        "{} XADDs of an event (order, type, v) through the producer role's Stream port (RealStream::xadd, {} per "
        "call) on one connection, against `redis-benchmark -c 1 -P {} -n {} XADD <key> * order 1 type paid v 1`; "
        "median of {} alternating repetitions. No consumer: load/noop_jobs is the load lab's own pace.",
        o.requests, o.pipeline, o.pipeline, o.requests, o.repetitions);
    f.raw = {{"relab_xadd_per_s", relab},
             {"redis_benchmark_xadd_per_s", rb},
             {"clients", 1},
             {"pipeline", o.pipeline},
             {"relab_rate_repetitions", relab_rate},
             {"redis_benchmark_rate_repetitions", rb_rate}};
    return {f};
}

}  // namespace relab
