// The rules across a described struct's own fields, checked right after a file's read (each
// Described<S>::check). Rules that need the rest of the lab (an event's order among the lab's
// orders, an outbox row among its events) are the lab loader's (scenario/loader/).
#include <algorithm>
#include <cctype>
#include <limits>

#include <fmt/format.h>

#include "scenario/scenario.h"

namespace relab::desc {

using scenario_json::child;

FinalState Codec<FinalState>::read(const Reader& r, const json& v, const std::string& path, const Limits&, Read) {
    if (v.is_string()) return FinalState{r.string(v, path, true), std::nullopt};
    if (!v.is_object()) r.expected(path, "a status such as \"paid\", or {\"status\": \"paid\", \"amount\": 30}", v);
    const Object o(r, v, path, {"status", "amount"});
    FinalState f{o.req_string("status"), std::nullopt};
    if (o.has("amount")) f.amount = o.req_int("amount", 0);
    return f;
}

json Codec<FinalState>::write(const FinalState& f, Write) {
    if (!f.amount) return f.status;
    return json{{"status", f.status}, {"amount", *f.amount}};
}

void Described<OrderSpec>::check(const Object& o, OrderSpec& order) {
    if (!order.absent) return;
    for (const char* key : {"initial_status", "initial_version"})
        if (o.has(key))
            o.reader().fail(o.path(key), std::string("an absent order has no row before the trial, so no ") + key +
                                             "; drop it or \"absent\"");
}

void Described<WriteSpec>::check(const Object& o, WriteSpec& w) {
    if (o.has("serialization_retries") && w.isolation == WriteIsolation::none)
        o.reader().fail(o.path("serialization_retries"),
                        "retries a job's transaction refused with 40001; it needs \"isolation\": \"repeatable_read\", "
                        "\"serializable\" or \"read_committed\"");
    if (w.version_source == VersionSource::entry_id && !is_guarded_update(w.mode))
        o.reader().fail(o.path("version_source"), "\"entry_id\" is a CAS version and requires \"mode\": \"cas\", got mode \"" +
                                                      to_string(w.mode) + "\"");
}

void Described<PublishFailure>::check(const Object& o, PublishFailure& f) {
    if (!o.has("attempts") && !o.has("reply_lost"))
        o.reader().fail(o.path(), "a failure needs \"attempts\" (the publish fails before Redis) or \"reply_lost\" (the "
                                  "XADD runs, its reply never comes back)");
    for (int a : f.reply_lost)
        if (std::find(f.attempts.begin(), f.attempts.end(), a) != f.attempts.end())
            o.reader().fail(o.path("reply_lost"), fmt::format("attempt {} is also in \"attempts\": it fails before Redis "
                                                              "or loses its reply, not both", a));
}

void Described<ProducerSpec>::check(const Object& o, ProducerSpec& p) {
    for (size_t i = 0; i < p.failures.size(); ++i) {
        const std::string at = child(o.path("failures"), i);
        for (const auto& [key, list] : {std::pair{"attempts", &p.failures[i].attempts},
                                        std::pair{"reply_lost", &p.failures[i].reply_lost}})
            for (size_t k = 0; k < list->size(); ++k)
                if ((*list)[k] > p.max_attempts)
                    o.reader().fail(child(child(at, key), k), fmt::format("expected at most max_attempts ({}), got {}",
                                                                          p.max_attempts, (*list)[k]));
    }
}

void Described<DispatcherSpec>::check(const Object& o, DispatcherSpec& d) {
    if (d.claim == DispatchClaim::skip_locked && d.mark == DispatchMark::round)
        o.reader().fail(o.path("mark"), "\"skip_locked\" claims each row in its own transaction, held across its XADD "
                                        "and its mark; \"round\" (one transaction per round) does not apply");
}

// Every shard its own stream: the format must name the index, and differently for each.
void Described<ShardSpec>::check(const Object& o, ShardSpec& sh) {
    if (sh.reshard && sh.reshard->to == sh.streams)
        o.reader().fail(child(o.path("reshard"), "to"),
                        fmt::format("a reshard changes the number of shards; it is already {}", sh.streams));
    std::vector<std::string> keys;
    for (int i = 0; i < sh.shard_count(); ++i) {
        std::string key;
        try {
            key = shard_stream_key(sh, i);
        } catch (const std::exception& e) {
            o.reader().fail(o.path("key_format"),
                            std::string("expected a format with {i} for the shard index (literal braces doubled: "
                                        "\"orders:{{{i}}}\" gives orders:{0}), got an error: ") + e.what());
        }
        if (std::find(keys.begin(), keys.end(), key) != keys.end())
            o.reader().fail(o.path("key_format"), "every shard needs its own stream: the format gives \"" + key +
                                                      "\" twice (put {i} in it)");
        keys.push_back(key);
    }
}

void Described<ArrivalSpec>::check(const Object& o, ArrivalSpec& a) {
    if (1'000'000 / a.orders_per_s * a.orders_per_s != 1'000'000)
        o.reader().fail(o.path("orders_per_s"), "orders_per_s must divide 1,000,000 µs evenly (e.g. 250, 400, 500, 1000)");
}

void Described<JobCostSpec>::check(const Object& o, JobCostSpec& c) {
    const Reader& r = o.reader();
    auto need = [&](const char* key, const std::optional<double>& v) {
        if (!v) r.fail(o.path(key), "required field is missing");
    };
    switch (c.dist) {
        case JobCostSpec::Dist::fixed: need("ms", c.ms); break;
        case JobCostSpec::Dist::uniform:
            need("min_ms", c.min_ms);
            need("max_ms", c.max_ms);
            if (*c.max_ms < *c.min_ms) r.fail(o.path("max_ms"), "max_ms must be at least min_ms");
            break;
        case JobCostSpec::Dist::lognormal:
            need("p50_ms", c.p50_ms);
            need("p99_ms", c.p99_ms);
            if (std::llround(*c.p50_ms * 1000.0) <= 0) r.fail(o.path("p50_ms"), "a log-normal cost needs p50_ms > 0");
            if (*c.p99_ms < *c.p50_ms) r.fail(o.path("p99_ms"), "p99_ms must be at least p50_ms");
            break;
    }
}

void Described<GenerateSpec>::check(const Object& o, GenerateSpec& g) {
    const Reader& r = o.reader();
    if (o.has("arrival") && o.has("every_ms")) r.fail(o.path("arrival"), "give \"arrival\" or \"every_ms\", not both");
    if (g.first_id > std::numeric_limits<int64_t>::max() - g.orders)
        r.fail(o.path("first_id"), "the last order's id (first_id + orders - 1) would not fit in 64 bits");
    const int64_t last = g.first_id + g.orders - 1;
    for (size_t i = 0; i < g.slow_jobs.size(); ++i) {
        const SlowJob& j = g.slow_jobs[i];
        const std::string at = child(o.path("slow_jobs"), i);
        if (j.order < g.first_id || j.order > last)
            r.expected(child(at, "order"), scenario_json::integer_range_text(g.first_id, last), j.order);
        const bool has_type = std::any_of(g.events.begin(), g.events.end(),
                                          [&](const GeneratedEvent& e) { return e.type == j.type; });
        if (!has_type)
            r.fail(child(at, "type"),
                   "no generated event of order " + std::to_string(j.order) + " has type \"" + j.type + "\"");
    }
}

}  // namespace relab::desc

namespace relab::desc {

namespace {

// An environment variable's name as a shell takes it: what a program can read back.
bool env_name_ok(const std::string& name) {
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
    return std::all_of(name.begin(), name.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

}  // namespace

void Described<ExecSpec>::check(const Object& o, ExecSpec& e) {
    const Reader& r = o.reader();
    if (e.argv[0].empty()) r.expected(child(o.path("exec"), 0), "the program's name or path", o.at("exec")[0]);
    for (const auto& [name, value] : e.env) {
        if (!env_name_ok(name)) r.fail(child(o.path("env"), name), "expected a variable name of letters, digits and _");
        if (name.rfind("RELAB_", 0) == 0)
            r.fail(child(o.path("env"), name), "RELAB_* variables are relab's own (docs/your-code.md): rename it");
    }
}

}  // namespace relab::desc
