// relab's client against redis-benchmark, one sequential round trip at a time, same command, same
// server. Each repetition runs relab's loop, then redis-benchmark, on keys of their own, so neither
// finds the other's data; the median repetition of each side is kept, which a stray scheduling
// hiccup on a shared machine does not move.
#include <chrono>

#include <fmt/format.h>

#include "ports/ports.h"  // HarnessError
#include "util/interrupt.h"
#include "clients/redis_client.h"
#include "bench/measure/bench_redis.h"

namespace relab {

namespace {

using SteadyClock = std::chrono::steady_clock;

struct RoundTrip {
    std::string name;      // the figure's name after "redis/"
    std::string typed;     // the command as the output shows it
    std::string measured;  // what one call did
    // The command for a key; relab and redis-benchmark each get their own key.
    std::vector<std::string> (*argv)(const std::string& key);
    // Sets the key up before each repetition (the stream and group XREADGROUP reads).
    void (*prepare)(RedisClient& c, const std::string& key, int requests);
    // After redis-benchmark's run: checks that its calls did what relab's did.
    void (*check)(RedisClient& c, const std::string& key, int requests);
};

void just_delete(RedisClient& c, const std::string& key, int) { c.call({"DEL", key}); }
void no_check(RedisClient&, const std::string&, int) {}

// A stream of `requests` entries and a group at its start, so each XREADGROUP ... > of the
// repetition gets one new entry: none comes back empty.
void prefill_stream(RedisClient& c, const std::string& key, int requests) {
    c.call({"DEL", key});
    std::vector<std::vector<std::string>> batch;
    for (int i = 0; i < requests; ++i) {
        batch.push_back({"XADD", key, "*", "f", "v"});
        if (batch.size() == 1000 || i + 1 == requests) {
            for (const auto& r : c.pipeline(batch))
                if (r.is_error()) throw HarnessError("relab bench: prefilling " + key + ": " + r.str);
            batch.clear();
        }
    }
    c.call({"XGROUP", "CREATE", key, "g", "0"});
}

// XPENDING's summary: as many entries delivered to the group as redis-benchmark sent requests.
void check_all_delivered(RedisClient& c, const std::string& key, int requests) {
    const RedisReply r = c.call({"XPENDING", key, "g"});
    const long long pending = r.elements.empty() ? -1 : r.elements[0].integer;
    if (pending != requests)
        throw HarnessError(fmt::format("relab bench: redis-benchmark's {} XREADGROUP calls delivered {} entries, "
                                       "not one each; its figure would not time the same work as relab's",
                                       requests, pending));
}

const std::vector<RoundTrip>& round_trips() {
    static const std::vector<RoundTrip> all = {
        {"XADD", "XADD <key> * f v", "XADD of one two-field entry to a growing stream, one call at a time.",
         [](const std::string& k) { return std::vector<std::string>{"XADD", k, "*", "f", "v"}; }, just_delete,
         no_check},
        {"XREADGROUP", "XREADGROUP GROUP g c COUNT 1 STREAMS <key> >",
         "XREADGROUP of one new entry (the stream is prefilled with one entry per call, so no call comes back "
         "empty), no BLOCK.",
         [](const std::string& k) {
             return std::vector<std::string>{"XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", k, ">"};
         },
         prefill_stream, check_all_delivered},
        {"SET_NX_GET", "SET <key> v NX GET",
         "SET key v NX GET on one key: the first call sets it, every later one finds it and returns its value.",
         [](const std::string& k) { return std::vector<std::string>{"SET", k, "v", "NX", "GET"}; }, just_delete,
         no_check},
    };
    return all;
}

// µs per call of relab's client over `requests` sequential calls.
double relab_us_per_call(RedisClient& c, const RoundTrip& rt, const std::string& key, int requests) {
    const std::vector<std::string> argv = rt.argv(key);
    int empty = 0;
    const auto start = SteadyClock::now();
    for (int i = 0; i < requests; ++i) {
        const RedisReply r = c.call(argv);
        if (r.is_nil()) ++empty;
        if ((i & 1023) == 0) throw_if_interrupted();
    }
    const double us = std::chrono::duration<double, std::micro>(SteadyClock::now() - start).count() / requests;
    if (rt.name == "XREADGROUP" && empty > 0)
        throw HarnessError(fmt::format("relab bench: {} of relab's {} XREADGROUP calls came back empty", empty, requests));
    return us;
}

}  // namespace

std::vector<BenchFigure> bench_round_trips(const RedisEndpoint& ep, RedisBenchmarkTool& tool, const RedisBenchOptions& o) {
    RedisClient c(ep);
    std::vector<BenchFigure> out;
    for (const RoundTrip& rt : round_trips()) {
        const std::string relab_key = "bench:" + rt.name + ":relab";
        const std::string rb_key = "bench:" + rt.name + ":redis-benchmark";
        std::vector<double> relab_us, rb_us;
        for (int rep = 0; rep < o.repetitions; ++rep) {
            rt.prepare(c, relab_key, o.requests);
            relab_us.push_back(relab_us_per_call(c, rt, relab_key, o.requests));
            rt.prepare(c, rb_key, o.requests);
            rb_us.push_back(tool.run(rt.argv(rb_key), o.requests).us_per_request());
            rt.check(c, rb_key, o.requests);
        }
        c.call({"DEL", relab_key, rb_key});
        BenchFigure f;
        f.name = "redis/" + rt.name;
        f.iterations = o.requests;
        f.real_time = percentile(relab_us, 50);
        const double rb = percentile(rb_us, 50);
        f.ratio = safe_ratio(f.real_time, rb);
        f.ratio_of = "relab_us / redis_benchmark_us";
        f.target = kRoundTripTarget;
        f.target_kind = TargetKind::at_most;
        f.items_per_second = 1e6 / f.real_time;
        f.label = fmt::format("relab {:.1f} µs/op, redis-benchmark {:.1f} µs/op", f.real_time, rb);
        f.measured = fmt::format(
            "{} {} sequential calls of `{}` by relab's RedisClient (hiredis) and by `redis-benchmark -c 1 -n {} -P 1` "
            "(its requests/s inverted), median of {} alternating repetitions.",
            rt.measured, o.requests, rt.typed, o.requests, o.repetitions);
        f.raw = {{"relab_us", f.real_time},
                 {"redis_benchmark_us", rb},
                 {"redis_benchmark_rps", 1e6 / rb},
                 {"relab_us_repetitions", relab_us},
                 {"redis_benchmark_us_repetitions", rb_us},
                 {"command", rt.typed}};
        out.push_back(std::move(f));
    }
    return out;
}

}  // namespace relab
