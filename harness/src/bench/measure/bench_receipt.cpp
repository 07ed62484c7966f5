// How long an XADD takes to reach a consumer blocked in XREADGROUP, against a PING round trip.
// A consumer thread stays blocked (BLOCK 1000, below its client's 5 s timeout: hiredis 0.14 fails
// a reply that outlasts the socket timeout and then refuses every call); the producer, on this
// thread and its own connection, waits until the server counts the consumer as blocked (INFO
// clients), notes the time and XADDs. The receipt is the time from just before the XADD is sent
// to the consumer's XREADGROUP reply being read, one clock, one process: the XADD's trip to the
// server, the server waking the reader, and the reply's trip back, about one round trip.
// The same receipts taken with bare hiredis calls (redisCommandArgv on a connection of its own, no
// RedisClient), alternating with relab's, are the floor the server and the machine set: what is
// above it is relab's client.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "ports/ports.h"  // HarnessError
#include "clients/hiredis_handles.h"
#include "util/interrupt.h"
#include "clients/redis_client.h"
#include "bench/measure/bench_redis.h"

namespace relab {

namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now().time_since_epoch()).count();
}

const char* const kStream = "bench:receipt";

const std::vector<std::string> kReadArgv = {"XREADGROUP", "GROUP", "g",       "c",     "COUNT", "1",
                                            "BLOCK",      "1000",  "STREAMS", kStream, ">"};

// A bare hiredis connection (no RedisClient): the floor's consumer and producer. The bench's
// server is its own throwaway one (no password, database 0).
struct BareConnection {
    explicit BareConnection(const RedisEndpoint& ep) {
        const timeval tv{5, 0};  // as RedisClient's 5 s: above the BLOCK 1000
        ctx.reset(redisConnectWithTimeout(ep.host.c_str(), ep.port, tv));
        if (!ctx || ctx->err)
            throw HarnessError(fmt::format("relab bench: cannot connect to {}:{}: {}", ep.host, ep.port,
                                           ctx ? ctx->errstr : "out of memory"));
        redisSetTimeout(ctx.get(), tv);
    }
    RedisReplyPtr call(const std::vector<std::string>& argv) {
        RedisReplyPtr r = command_argv(ctx.get(), argv);
        if (!r)
            throw HarnessError(
                fmt::format("relab bench: {} failed on a bare hiredis connection: {}", argv.at(0), ctx->errstr));
        if (r->type == REDIS_REPLY_ERROR) throw HarnessError(fmt::format("relab bench: {}: {}", argv.at(0), r->str));
        return r;
    }
    RedisContextPtr ctx;
};

// The consumer: blocks in XREADGROUP, notes each entry's receipt time minus its sent time. Through
// relab's RedisClient, or (bare) through hiredis itself.
struct Consumer {
    Consumer(const RedisEndpoint& ep, int samples, bool bare) : target(samples) {
        if (bare)
            bare_client = std::make_unique<BareConnection>(ep);
        else
            client = std::make_unique<RedisClient>(ep, milliseconds(5000));
        latencies_us.reserve(static_cast<size_t>(samples));
    }
    // One XREADGROUP: the entry's sent time, or nullopt when BLOCK ran out; `received` is taken as
    // the call returns, the reply parsed (and, through RedisClient, copied) but not yet read.
    std::optional<int64_t> read_one(int64_t& received) {
        if (bare_client) {
            const RedisReplyPtr r = bare_client->call(kReadArgv);
            received = now_ns();
            if (r->type == REDIS_REPLY_NIL) return std::nullopt;
            // [[stream, [[id, [field, value, ...]]]]]: the one field is the sent time.
            const redisReply* fields = r->element[0]->element[1]->element[0]->element[1];
            if (fields->elements < 2) throw HarnessError("relab bench: a receipt entry without its field");
            return std::stoll(std::string(fields->element[1]->str, fields->element[1]->len));
        }
        const RedisReply r = client->call(kReadArgv);
        received = now_ns();
        if (r.is_nil()) return std::nullopt;
        const RedisReply& fields = r.elements.at(0).elements.at(1).elements.at(0).elements.at(1);
        return std::stoll(fields.elements.at(1).str);
    }
    void run() {
        try {
            while (static_cast<int>(latencies_us.size()) < target && !stop.load()) {
                int64_t received = 0;
                const std::optional<int64_t> sent = read_one(received);
                if (!sent) continue;  // BLOCK ran out: block again
                latencies_us.push_back(static_cast<double>(received - *sent) / 1000.0);
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
    std::unique_ptr<RedisClient> client;
    std::unique_ptr<BareConnection> bare_client;
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

struct ReceiptRun {
    Percentiles receipt, xadd, ping;
};

// `samples` receipts on a fresh stream: the consumer through RedisClient, or both its XREADGROUP
// and the producer's XADD through bare hiredis; `c` only waits for the consumer to block.
ReceiptRun measure_receipts(const RedisEndpoint& ep, RedisClient& c, int samples, bool bare) {
    c.call({"DEL", kStream});
    c.call({"XGROUP", "CREATE", kStream, "g", "$", "MKSTREAM"});
    Consumer consumer(ep, samples, bare);
    std::unique_ptr<BareConnection> bare_producer = bare ? std::make_unique<BareConnection>(ep) : nullptr;
    std::thread reader([&] { consumer.run(); });
    // The producer's own XADD round trips, for the reader of a high ratio: when these are as slow
    // as the receipts, the machine (two threads waking at once) is the cost, not the delivery.
    std::vector<double> xadd_us, ping_us;
    xadd_us.reserve(static_cast<size_t>(samples));
    ping_us.reserve(static_cast<size_t>(samples));
    auto producer_call = [&](const std::vector<std::string>& argv) {
        if (bare_producer)
            bare_producer->call(argv);
        else
            c.call(argv);
    };
    try {
        for (int i = 0; i < samples; ++i) {
            if (!wait_blocked(c, consumer, i)) break;
            // The paired PING: a round trip on the producer's connection, with the consumer blocked,
            // just before its receipt, so both see the machine in the same state.
            const int64_t ping_start = now_ns();
            producer_call({"PING"});
            ping_us.push_back(static_cast<double>(now_ns() - ping_start) / 1000.0);
            const int64_t sent = now_ns();
            producer_call({"XADD", kStream, "*", "t", std::to_string(sent)});
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
    return {p50_p99(consumer.latencies_us), p50_p99(xadd_us), p50_p99(ping_us)};
}

// The median repetition of each percentile, taken separately.
Percentiles median_of(const std::vector<Percentiles>& runs) {
    std::vector<double> p50, p99;
    for (const auto& r : runs) {
        p50.push_back(r.p50);
        p99.push_back(r.p99);
    }
    return {percentile(p50, 50), percentile(p99, 50)};
}

// The PING round trips, relab's against redis-benchmark's.
struct PingFigures {
    Percentiles relab, redis_benchmark;
    double redis_benchmark_rps = 0;
};

// PING, each round trip timed on its own, then redis-benchmark's PING (multibulk, as relab sends it).
PingFigures measure_pings(RedisClient& c, RedisBenchmarkTool& tool, int requests) {
    std::vector<double> ping_us;
    ping_us.reserve(static_cast<size_t>(requests));
    const std::vector<std::string> ping = {"PING"};
    for (int i = 0; i < requests; ++i) {
        const auto start = SteadyClock::now();
        c.call(ping);
        ping_us.push_back(std::chrono::duration<double, std::micro>(SteadyClock::now() - start).count());
        if ((i & 1023) == 0) throw_if_interrupted();
    }
    const Percentiles relab_ping = p50_p99(ping_us);
    const RedisBenchmarkRow rb_row = tool.run({"-t", "ping_mbulk"}, requests);
    if (!rb_row.p50_ms || !rb_row.p99_ms)
        throw HarnessError("relab bench: this redis-benchmark prints no latency percentiles in --csv (Redis 7's does); "
                           "the PING comparison needs them");
    return {relab_ping, {*rb_row.p50_ms * 1000.0, *rb_row.p99_ms * 1000.0}, rb_row.rps};
}

// The median repetition of each kind of receipt figure.
struct ReceiptFigures {
    Percentiles receipt, bare, xadd, paired;
};

// The receipts: relab's and the bare ones alternating, the median repetition of each kept.
ReceiptFigures measure_receipt_medians(const RedisEndpoint& ep, RedisClient& c, const RedisBenchOptions& o) {
    std::vector<Percentiles> relab_runs, bare_runs, xadd_runs, paired_runs;
    for (int rep = 0; rep < std::max(1, o.repetitions); ++rep) {
        const ReceiptRun relab_run = measure_receipts(ep, c, o.samples, false);
        relab_runs.push_back(relab_run.receipt);
        xadd_runs.push_back(relab_run.xadd);
        paired_runs.push_back(relab_run.ping);
        bare_runs.push_back(measure_receipts(ep, c, o.samples, true).receipt);
    }
    return {median_of(relab_runs), median_of(bare_runs), median_of(xadd_runs), median_of(paired_runs)};
}

double percentile_of(const Percentiles& x, bool p99) { return p99 ? x.p99 : x.p50; }

// ping/p50, ping/p99: relab's PING round trip against redis-benchmark's.
BenchFigure ping_figure(bool p99, const PingFigures& ping, const RedisBenchOptions& o) {
    const char* pct = p99 ? "p99" : "p50";
    const double relab_v = percentile_of(ping.relab, p99);
    const double rb_v = percentile_of(ping.redis_benchmark, p99);
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
    f.raw = {{"relab_us", relab_v}, {"redis_benchmark_us", rb_v}, {"redis_benchmark_rps", ping.redis_benchmark_rps}};
    return f;
}

// receipt/p50, receipt/p99: the receipt against the paired PING.
BenchFigure receipt_figure(bool p99, const ReceiptFigures& m, const PingFigures& ping, const RedisBenchOptions& o) {
    const char* pct = p99 ? "p99" : "p50";
    const double r = percentile_of(m.receipt, p99), b = percentile_of(m.bare, p99), paired_v = percentile_of(m.paired, p99),
                 ping_v = percentile_of(ping.relab, p99), rb_v = percentile_of(ping.redis_benchmark, p99);
    BenchFigure f;
    f.name = fmt::format("receipt/{}", pct);
    f.iterations = o.samples;
    f.real_time = r;
    f.ratio = safe_ratio(r, paired_v);
    f.ratio_of = fmt::format("receipt_{}_us / paired_ping_{}_us", pct, pct);
    f.target = kReceiptTarget;
    f.label = fmt::format(
        "receipt {:.1f} µs; PING paired {:.1f} µs, relab {:.1f} µs, redis-benchmark {:.1f} µs ({:.2f}×); the "
        "producer's XADD call {:.1f} µs",
        r, paired_v, ping_v, rb_v, safe_ratio(r, rb_v).value_or(0), percentile_of(m.xadd, p99));
    f.measured = fmt::format(
        "{} of {} receipts: the time from just before one connection sends XADD to another connection, blocked "
        "in XREADGROUP GROUP g c COUNT 1 BLOCK 1000, reading the entry (the producer waits for the server to "
        "count the consumer as blocked before each XADD), against the {} of the PING round trips the producer "
        "timed on its connection just before each XADD (paired: the same moments, the same machine); the "
        "median of {} repetitions, alternating with the bare hiredis receipts of receipt/client.",
        pct, o.samples, pct, std::max(1, o.repetitions));
    f.raw = {{"receipt_us", r},
             {"producer_xadd_call_us", percentile_of(m.xadd, p99)},
             {"paired_ping_us", paired_v},
             {"relab_ping_us", ping_v},
             {"redis_benchmark_ping_us", rb_v},
             {"ratio_vs_redis_benchmark_ping", safe_ratio(r, rb_v) ? nlohmann::json(*safe_ratio(r, rb_v))
                                                                   : nlohmann::json(nullptr)},
             {"bare_hiredis_receipt_us", b}};
    return f;
}

// receipt/client/p50, /p99: what relab's client adds, relab's receipts against the bare ones.
BenchFigure client_figure(bool p99, const ReceiptFigures& m, const RedisBenchOptions& o) {
    const char* pct = p99 ? "p99" : "p50";
    const double r = percentile_of(m.receipt, p99), b = percentile_of(m.bare, p99), paired_v = percentile_of(m.paired, p99);
    BenchFigure cf;
    cf.name = fmt::format("receipt/client/{}", pct);
    cf.iterations = o.samples;
    cf.real_time = r;
    cf.ratio = safe_ratio(r, b);
    cf.ratio_of = fmt::format("receipt_{}_us / bare_hiredis_receipt_{}_us", pct, pct);
    cf.label = fmt::format("relab {:.1f} µs, bare hiredis {:.1f} µs ({:.2f}× the paired PING: the server's and "
                           "the machine's part)",
                           r, b, safe_ratio(b, paired_v).value_or(0));
    cf.measured = fmt::format(
        "{} of {} receipts through relab's RedisClient (receipt/{}) against {} taken the same way with bare "
        "hiredis calls (redisCommandArgv on connections of their own, for the XREADGROUP and the XADD); the "
        "median of {} alternating repetitions of each. No target: it shows what relab's client adds.",
        pct, o.samples, pct, o.samples, std::max(1, o.repetitions));
    cf.raw = {{"receipt_us", r}, {"bare_hiredis_receipt_us", b}, {"paired_ping_us", paired_v}};
    return cf;
}

}  // namespace

std::vector<BenchFigure> bench_receipt(const RedisEndpoint& ep, RedisBenchmarkTool& tool, const RedisBenchOptions& o) {
    RedisClient c(ep);
    const PingFigures ping = measure_pings(c, tool, o.requests);
    const ReceiptFigures receipts = measure_receipt_medians(ep, c, o);
    // ping/ first; then receipt/, against the paired PING; then receipt/client/, what relab's client
    // adds. The rest of receipt/ is the server's and the machine's.
    std::vector<BenchFigure> out;
    for (const bool p99 : {false, true}) out.push_back(ping_figure(p99, ping, o));
    for (const bool p99 : {false, true}) out.push_back(receipt_figure(p99, receipts, ping, o));
    for (const bool p99 : {false, true}) out.push_back(client_figure(p99, receipts, o));
    return out;
}

}  // namespace relab
