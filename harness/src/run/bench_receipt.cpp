// How long an XADD takes to reach a consumer blocked in XREADGROUP, against a PING round trip.
// A consumer thread stays blocked (BLOCK 1000, below its client's 5 s timeout: hiredis 0.14 fails
// a reply that outlasts the socket timeout and then refuses every call); the producer, on this
// thread and its own connection, waits until the server counts the consumer as blocked (INFO
// clients), notes the time and XADDs. The receipt is the time from just before the XADD is sent
// to the consumer's XREADGROUP reply being read, one clock, one process: the XADD's trip to the
// server, the server waking the reader, and the reply's trip back, about one round trip.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "ports/ports.h"  // HarnessError
#include "real/interrupt.h"
#include "real/redis_client.h"
#include "run/bench_redis.h"

namespace relab {

namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now().time_since_epoch()).count();
}

const char* const kStream = "bench:receipt";

// The consumer: blocks in XREADGROUP, notes each entry's receipt time minus its sent time.
struct Consumer {
    explicit Consumer(const RedisEndpoint& ep, int samples) : client(ep, milliseconds(5000)), target(samples) {
        latencies_us.reserve(static_cast<size_t>(samples));
    }
    void run() {
        try {
            const std::vector<std::string> argv = {"XREADGROUP", "GROUP", "g",  "c",     "COUNT",
                                                   "1",          "BLOCK", "1000", "STREAMS", kStream, ">"};
            while (static_cast<int>(latencies_us.size()) < target && !stop.load()) {
                const RedisReply r = client.call(argv);
                const int64_t received = now_ns();
                if (r.is_nil()) continue;  // BLOCK ran out: block again
                // [[stream, [[id, [field, value, ...]]]]]: the one field is the sent time.
                const RedisReply& fields = r.elements.at(0).elements.at(1).elements.at(0).elements.at(1);
                const int64_t sent = std::stoll(fields.elements.at(1).str);
                latencies_us.push_back(static_cast<double>(received - sent) / 1000.0);
                std::lock_guard<std::mutex> lock(mutex);
                received_count = static_cast<int>(latencies_us.size());
                changed.notify_one();
            }
        } catch (...) {
            std::lock_guard<std::mutex> lock(mutex);
            error = std::current_exception();
            failed = true;
            changed.notify_one();
        }
    }
    // Sleeps (no spinning: the consumer needs the core) until `count` entries were received or
    // the consumer failed; false after `timeout`.
    bool wait_received(int count, milliseconds timeout) {
        std::unique_lock<std::mutex> lock(mutex);
        return changed.wait_for(lock, timeout, [&] { return received_count >= count || failed; });
    }
    RedisClient client;
    int target;
    std::vector<double> latencies_us;  // read after join()
    std::atomic<bool> stop{false};
    std::mutex mutex;  // guards the three below
    std::condition_variable changed;
    int received_count = 0;
    bool failed = false;
    std::exception_ptr error;
};

// Waits until the consumer has read `received_before` entries and the server has it blocked again.
// False when the consumer failed (the caller rethrows its error after join()).
bool wait_blocked(RedisClient& c, Consumer& consumer, int received_before) {
    const auto deadline = SteadyClock::now() + milliseconds(5000);
    auto timed_out = [] {
        return HarnessError("relab bench: the receipt consumer did not read its entry and block again within 5 s");
    };
    while (!consumer.wait_received(received_before, milliseconds(20))) {
        throw_if_interrupted();
        if (SteadyClock::now() > deadline) throw timed_out();
    }
    {
        std::lock_guard<std::mutex> lock(consumer.mutex);
        if (consumer.failed) return false;
    }
    // INFO round trips until the consumer's next XREADGROUP has reached the server.
    while (true) {
        const auto info = parse_info(c.call({"INFO", "clients"}).str);
        auto it = info.find("blocked_clients");
        if (it != info.end() && std::stoi(it->second) >= 1) return true;
        throw_if_interrupted();
        if (SteadyClock::now() > deadline) throw timed_out();
    }
}

struct Percentiles {
    double p50 = 0, p99 = 0;
};
Percentiles p50_p99(const std::vector<double>& v) { return {percentile(v, 50), percentile(v, 99)}; }

}  // namespace

std::vector<BenchFigure> bench_receipt(const RedisEndpoint& ep, RedisBenchmarkTool& tool, const RedisBenchOptions& o) {
    RedisClient c(ep);

    // PING, each round trip timed on its own, then redis-benchmark's PING (multibulk, as relab sends it).
    std::vector<double> ping_us;
    ping_us.reserve(static_cast<size_t>(o.requests));
    const std::vector<std::string> ping = {"PING"};
    for (int i = 0; i < o.requests; ++i) {
        const auto start = SteadyClock::now();
        c.call(ping);
        ping_us.push_back(std::chrono::duration<double, std::micro>(SteadyClock::now() - start).count());
        if ((i & 1023) == 0) throw_if_interrupted();
    }
    const Percentiles relab_ping = p50_p99(ping_us);
    const RedisBenchmarkRow rb_row = tool.run({"-t", "ping_mbulk"}, o.requests);
    if (!rb_row.p50_ms || !rb_row.p99_ms)
        throw HarnessError("relab bench: this redis-benchmark prints no latency percentiles in --csv (Redis 7's does); "
                           "the PING comparison needs them");
    const Percentiles rb_ping{*rb_row.p50_ms * 1000.0, *rb_row.p99_ms * 1000.0};

    // The receipts.
    c.call({"DEL", kStream});
    c.call({"XGROUP", "CREATE", kStream, "g", "$", "MKSTREAM"});
    Consumer consumer(ep, o.samples);
    std::thread reader([&] { consumer.run(); });
    // The producer's own XADD round trips, for the reader of a high ratio: when these are as slow
    // as the receipts, the machine (two threads waking at once) is the cost, not the delivery.
    std::vector<double> xadd_us;
    xadd_us.reserve(static_cast<size_t>(o.samples));
    try {
        for (int i = 0; i < o.samples; ++i) {
            if (!wait_blocked(c, consumer, i)) break;
            const int64_t sent = now_ns();
            c.call({"XADD", kStream, "*", "t", std::to_string(sent)});
            xadd_us.push_back(static_cast<double>(now_ns() - sent) / 1000.0);
        }
    } catch (...) {
        consumer.stop.store(true);  // its BLOCK ends within a second
        reader.join();
        throw;
    }
    reader.join();
    if (consumer.error) std::rethrow_exception(consumer.error);
    c.call({"DEL", kStream});
    const Percentiles receipt = p50_p99(consumer.latencies_us);
    const Percentiles xadd = p50_p99(xadd_us);

    std::vector<BenchFigure> out;
    for (const bool p99 : {false, true}) {
        const char* pct = p99 ? "p99" : "p50";
        const double relab_v = p99 ? relab_ping.p99 : relab_ping.p50;
        const double rb_v = p99 ? rb_ping.p99 : rb_ping.p50;
        BenchFigure f;
        f.name = fmt::format("ping/{}", pct);
        f.iterations = o.requests;
        f.real_time = relab_v;
        f.ratio = safe_ratio(relab_v, rb_v);
        f.ratio_of = fmt::format("relab_{}_us / redis_benchmark_{}_us", pct, pct);
        f.target = kRoundTripTarget;
        f.label = fmt::format("relab {:.1f} µs, redis-benchmark {:.1f} µs", relab_v, rb_v);
        f.measured = fmt::format(
            "{} of {} sequential PING round trips, each timed by relab around its RedisClient call, and of "
            "`redis-benchmark -t ping_mbulk -c 1 -n {}` (its histogram's {}, printed in ms with 3 decimals).",
            pct, o.requests, o.requests, pct);
        f.raw = {{"relab_us", relab_v}, {"redis_benchmark_us", rb_v}, {"redis_benchmark_rps", rb_row.rps}};
        out.push_back(std::move(f));
    }
    for (const bool p99 : {false, true}) {
        const char* pct = p99 ? "p99" : "p50";
        const double r = p99 ? receipt.p99 : receipt.p50;
        const double ping_v = p99 ? relab_ping.p99 : relab_ping.p50;
        const double rb_v = p99 ? rb_ping.p99 : rb_ping.p50;
        BenchFigure f;
        f.name = fmt::format("receipt/{}", pct);
        f.iterations = o.samples;
        f.real_time = r;
        f.ratio = safe_ratio(r, ping_v);
        f.ratio_of = fmt::format("receipt_{}_us / relab_ping_{}_us", pct, pct);
        f.target = kReceiptTarget;
        f.label = fmt::format(
            "receipt {:.1f} µs; PING relab {:.1f} µs, redis-benchmark {:.1f} µs ({:.2f}×); the producer's XADD call "
            "{:.1f} µs",
            r, ping_v, rb_v, safe_ratio(r, rb_v).value_or(0), p99 ? xadd.p99 : xadd.p50);
        f.measured = fmt::format(
            "{} of {} receipts: the time from just before one connection sends XADD to another connection, blocked "
            "in XREADGROUP GROUP g c COUNT 1 BLOCK 1000, reading the entry (the producer waits for the server to "
            "count the consumer as blocked before each XADD).",
            pct, o.samples);
        f.raw = {{"receipt_us", r},
                 {"producer_xadd_call_us", p99 ? xadd.p99 : xadd.p50},
                 {"relab_ping_us", ping_v},
                 {"redis_benchmark_ping_us", rb_v},
                 {"ratio_vs_redis_benchmark_ping", safe_ratio(r, rb_v) ? nlohmann::json(*safe_ratio(r, rb_v))
                                                                       : nlohmann::json(nullptr)}};
        out.push_back(std::move(f));
    }
    return out;
}

}  // namespace relab
