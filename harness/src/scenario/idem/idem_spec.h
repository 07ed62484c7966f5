// The idempotency-key labs (article 002) as plain data, each struct followed by its description
// (describe/describe.h): the middleware workload (clients and their requests, the middleware's
// settings), the claim benchmark, the Redis Cluster lab, and the Redis steps of scripted sessions.
// The loader (scenario/loader/), the role settings, scenarios/schema.json and a client written
// back to JSON all walk these descriptions: a new field is a member and its line in its struct's
// description. The lab's own servers and its faults are the top-level "servers" and "faults" every
// lab has (scenario/lab_servers.h, scenario/scenario.h); an IdemSpec is an idempotency lab's own
// data (Scenario::idem()).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "describe/describe.h"
#include "util/enum_names.h"

namespace relab {

// An integer reply (bytes per key) times a number of keys, printed under the reply: the article's
// "192 bytes/key × 10,000 orders/day ≈ 2 MB".
struct MemoryProjection {
    int64_t keys = 0;
    std::string label;     // "10,000 orders/day, TTL 24 h"
    std::string label_vi;
    std::string documented;  // the article's figure: "≈ 2 MB"
};

// One redis-cli command of a scripted Redis session. Keys are the lab's logical names; the runner
// prefixes them (found with COMMAND GETKEYS) and prints them back without the prefix.
struct RedisStep {
    std::vector<std::string> argv;            // "{pad:N}" inside an argument stands for N 'x'
    std::optional<std::string> expect_reply;  // redis-cli form: "(nil)", "OK", "(integer) 59",
                                              // or a string reply's value (quoted or not)
    std::optional<std::string> expect_error;  // the error reply starts with this: "WRONGTYPE"
    std::optional<int64_t> expect_min;        // an integer reply no smaller than this
    std::optional<int64_t> expect_max;        // an integer reply no larger than this
    std::string documented;                   // the article's reply, printed beside the measured one
    std::string note;                         // why this machine's reply differs, printed under it
    std::string note_vi;
    std::optional<MemoryProjection> project;
    // "via": "redis-cli": the command runs through the redis-cli binary itself and its printed
    // output is what expect_reply is compared with (what the article's reader would see).
    bool via_redis_cli = false;
};

// When a client resends a request after no (or a failed) answer. An answer whose body says a
// retry cannot help (layer 4's "the order exists", the owner check's refusal) ends the retries.
struct IdemRetry {
    std::vector<int> on_codes = {409, 500, 503};  // answers that make the client try again ("on")
    int64_t every_ms = 200;
    int max_attempts = 5;  // sends per scheduled send, the first included
    bool operator==(const IdemRetry&) const = default;
};

inline constexpr const char* k_idem_default_payload = "{\"sku\":\"A1\",\"qty\":1}";

// One request a client sends: POST /orders with an Idempotency-Key header.
struct IdemRequest {
    int64_t user_id = 7;
    std::string client_key;                     // the Idempotency-Key header
    std::string payload = k_idem_default_payload;  // the request body
    // When the client sends it, from the trial origin ("at_ms"). More than one: the client did not
    // get the first answer (a slow 4G network) and sends the same request again.
    desc::OneOrMany<int64_t> send_at_ms = {0};
    std::optional<std::string> key_format;  // the middleware's key format for this request (a deploy)
    std::vector<int> fail_attempts;         // the business logic throws on these attempts (1-based,
                                            // counted over every send of this request)
    std::optional<int64_t> work_ms;         // the business logic's duration for this request
    // The resends (every send after the first) also wait until the fault of this name is done:
    // "the client retries after the failover", whatever the machine's load.
    std::string resend_after_fault;
    bool operator==(const IdemRequest&) const = default;
};

// A client's requests made by rule instead of listed: `count` requests with keys "<client>-<i>",
// the i-th sent at start_ms + i × every_ms and resent after each delay of resend_after_ms.
struct IdemGenerate {
    int64_t count = 1;
    int64_t start_ms = 0;
    int64_t every_ms = 10;
    std::vector<int64_t> resend_after_ms;
    int64_t user_id = 7;
    std::string payload = k_idem_default_payload;
    std::string resend_after_fault;
    bool operator==(const IdemGenerate&) const = default;
};

// A client process: sends its requests in time order, each with retries. It keeps "generate" as
// the file gives it; idem_client_requests() makes the requests it stands for.
struct IdemClient {
    std::string name;  // the actor: "A", "B"
    std::vector<IdemRequest> requests;
    std::optional<IdemGenerate> generate;
    IdemRetry retry;
    // Each send comes up to this many µs after its at_ms, drawn from the client's seeded generator:
    // arrivals spread as traffic spreads them, different in every trial.
    int64_t arrival_jitter_us = 0;
    bool operator==(const IdemClient&) const = default;
};

// Every request `c` sends: those it lists, then those its "generate" makes.
std::vector<IdemRequest> idem_client_requests(const IdemClient& c);

// How the middleware claims a key: the article's one call, or Laravel's Cache::add() and then
// Cache::get() for the old value (article 002, section 1.3), two calls with a window between them.
enum class IdemClaim { set_nx_get, add_get };
inline constexpr EnumName<IdemClaim> k_idem_claims[] = {{IdemClaim::set_nx_get, "set_nx_get"},
                                                        {IdemClaim::add_get, "add_get"}};
constexpr const auto& enum_names(IdemClaim) { return k_idem_claims; }

// WAIT n timeout after the claim and after the store.
struct IdemWait {
    int64_t replicas = 1;
    int64_t timeout_ms = 100;
    bool fail_closed = false;  // the claim reached fewer replicas: release, answer 503
    bool operator==(const IdemWait&) const = default;
};

// The middleware of article 002, section 1.2.
struct IdemMiddlewareSpec {
    // {user_id}, {client_key} and {hash} (the payload's hash) are replaced.
    std::string key_format = "idem:v1:{user_id}:{client_key}";
    int64_t claim_ttl_ms = 60000;     // phase 1: SET ... NX GET EX 60
    int64_t done_ttl_ms = 86400000;   // phase 2: SET ... XX EX 86400
    bool done_keepttl = false;        // phase 2 with KEEPTTL (one-tier TTL: phase 1 already 24 h)
    bool check_owner = false;         // store user_id in the value; never replay to another user
    bool release_on_error = true;     // DEL the key when the business logic throws (the article's)
    int64_t work_ms = 50;             // the business logic's duration (before its INSERT)
    std::optional<IdemWait> wait;     // none: no WAIT
    IdemClaim claim = IdemClaim::set_nx_get;
    int64_t add_get_gap_ms = 0;       // add_get: the pause between add() and get() (forces the window)
    // Section 4.4's remedy: store the answer 202 Accepted at once, then run the business logic as a
    // queued job, so no request outlives phase 1's TTL.
    bool accept_async = false;
    int64_t wait_replicas() const { return wait ? wait->replicas : 0; }
    bool operator==(const IdemMiddlewareSpec&) const = default;
};

// Claim throughput, Redis vs PostgreSQL (article 002, section 3.1).
struct IdemBenchmark {
    int64_t duration_ms = 1000;            // each of relab's own measurements
    int64_t redis_benchmark_requests = 20000;
    int64_t pgbench_seconds = 2;
    bool tools = true;                     // also run redis-benchmark and pgbench on the same servers
    double documented_fsync_ratio = 200;   // PostgreSQL with fsync per commit, times slower
    double documented_async_ratio = 10;    // with synchronous_commit=off
    bool operator==(const IdemBenchmark&) const = default;
};

// Two or more keys one Lua script would touch together: the user's idempotency key and its lock.
struct ClusterKeyPair {
    std::string name;               // names the pair's records ("pair": name), for the expectation
    std::vector<std::string> keys;  // as the article writes them; used as they are, no run prefix
    std::string documented;         // the article's claim, shown beside the measured slots
    std::string note;
    std::string note_vi;
    bool operator==(const ClusterKeyPair&) const = default;
};

// One way to name a hot user's idempotency keys, every claim of the load under it.
struct ClusterLoad {
    std::string name;        // names the load's record ("load": name)
    std::string key_format;  // "{client_key}" is replaced; other braces are the key's own (a hash tag)
    std::string documented;
    std::string note;
    std::string note_vi;
    bool operator==(const ClusterLoad&) const = default;
};

// The hot user: `claims` claims (SET key {in_progress} NX GET EX 60) with fresh client keys, the
// same client keys under every load's key format; keys and SET calls counted per node.
struct ClusterHotUser {
    int64_t claims = 1;
    std::vector<ClusterLoad> loads;
    bool operator==(const ClusterHotUser&) const = default;
};

// Redis Cluster and hash tags (article 002, section 2.3), on a cluster the lab forms itself.
struct IdemCluster {
    int masters = 3;
    int64_t node_timeout_ms = 5000;       // cluster-node-timeout
    std::vector<ClusterKeyPair> pairs;    // CLUSTER KEYSLOT of each key, then the script over them
    std::string script;                   // EVAL'd over each pair's keys; empty: no EVAL
    std::vector<std::string> script_args;
    std::optional<ClusterHotUser> hot_user;
    bool operator==(const IdemCluster&) const = default;
};

// The idempotency labs' settings; which parts apply is the lab's kind (Scenario::kind), which the
// loader takes from what the section holds: idem_cluster with `cluster`, idem_benchmark with
// `benchmark`, idem_clients (the middleware, clients, servers and faults) otherwise.
struct IdemSpec {
    IdemMiddlewareSpec middleware;
    bool layer4 = false;  // CREATE UNIQUE INDEX ON orders (idem_key)
    std::vector<IdemClient> clients;
    std::optional<IdemBenchmark> benchmark;  // idem_benchmark
    std::optional<IdemCluster> cluster;      // idem_cluster
    // How the lab's times relate to production, printed in the report ("1 s here stands for 60 s").
    std::string scaling;
    std::string scaling_vi;
    // The article's count of duplicate orders ("5–10"), shown beside the measured count of trial 1,
    // with a note on how this lab's workload relates to the article's.
    std::string documented_duplicates;
    std::string documented_duplicates_note;
    std::string documented_duplicates_note_vi;
    bool operator==(const IdemSpec&) const = default;
};

namespace desc {

// A key format the middleware (or a cluster lab's load) fills in: it must name the client's key.
inline constexpr std::string_view k_client_key_pattern = R"(\{client_key\})";
inline constexpr std::string_view k_client_key_words = "a key format containing {client_key}";

template <>
struct Described<IdemRetry> {
    static constexpr auto fields = std::tuple{
        field("on", &IdemRetry::on_codes, "HTTP status codes that make the client try again.").in(100, 599),
        field("every_ms", &IdemRetry::every_ms, "The interval between tries, in milliseconds.").at_least(1).of(Unit::ms),
        field("max_attempts", &IdemRetry::max_attempts, "Sends per scheduled send, the first included.").in(1, 1000),
    };
};

template <>
struct Described<IdemRequest> {
    static constexpr std::string_view def = "idemRequest";
    static constexpr std::string_view doc = "One request a client sends: POST /orders with an Idempotency-Key header.";
    static constexpr auto fields = std::tuple{
        field("user_id", &IdemRequest::user_id, "The user sending it.").at_least(0),
        field("client_key", &IdemRequest::client_key, "The Idempotency-Key header (required).")
            .must()
            .example(R"(["order-123"])"),
        field("payload", &IdemRequest::payload, "The request body.").may_be_empty(),
        field("at_ms", &IdemRequest::send_at_ms,
              "When it is sent, in milliseconds from the trial origin: one time, or a list of times in increasing "
              "order (the same request sent again: the client never got the first answer).")
            .at_least(0)
            .of(Unit::ms)
            .example("[[0, 700]]"),
        field("key_format", &IdemRequest::key_format,
              "The middleware's key format for this request (a deploy that changes it); must contain {client_key}.")
            .matching(k_client_key_pattern)
            .expecting(k_client_key_words),
        field("fail_attempts", &IdemRequest::fail_attempts,
              "The business logic throws on these attempts (1-based, counted over every send of this request).")
            .at_least(1),
        field("work_ms", &IdemRequest::work_ms,
              "The business logic's duration for this request, in milliseconds. Default: the middleware's work_ms.")
            .at_least(0)
            .of(Unit::ms),
        field("resend_after_fault", &IdemRequest::resend_after_fault,
              "The resends (every send after the first) also wait until the fault of this name (a fault's \"name\") "
              "is done."),
    };
    static void check(const Object& o, IdemRequest& q);
};

template <>
struct Described<IdemGenerate> {
    static constexpr auto fields = std::tuple{
        field("count", &IdemGenerate::count, "How many requests (required).").in(1, 100000).must(),
        field("start_ms", &IdemGenerate::start_ms, "The first one's send time, in milliseconds.").at_least(0).of(Unit::ms),
        field("every_ms", &IdemGenerate::every_ms, "The interval between requests, in milliseconds.")
            .at_least(0)
            .of(Unit::ms),
        field("resend_after_ms", &IdemGenerate::resend_after_ms, "Resend each request after these delays, in milliseconds.")
            .at_least(1)
            .of(Unit::ms),
        field("user_id", &IdemGenerate::user_id, "The user sending them.").at_least(0),
        field("payload", &IdemGenerate::payload, "The request body.").may_be_empty(),
        field("resend_after_fault", &IdemGenerate::resend_after_fault,
              "The resends also wait until the fault of this name is done."),
    };
};

template <>
struct Described<IdemClient> {
    static constexpr std::string_view def = "idemClient";
    static constexpr std::string_view doc =
        "A client process: sends its requests in time order, each with retries. Needs \"requests\" or \"generate\" (or "
        "both).";
    static constexpr auto fields = std::tuple{
        field("name", &IdemClient::name,
              "The client's actor name, unique in the lab (\"A\", \"B\"); also a fault target (required).")
            .must(),
        field("requests", &IdemClient::requests, "Its requests.").at_least_items(1),
        field("generate", &IdemClient::generate,
              "count requests with keys \"<name>-<i>\", the i-th sent at start_ms + i × every_ms and resent after each "
              "delay of resend_after_ms. null or absent: none."),
        field("arrival_jitter_us", &IdemClient::arrival_jitter_us,
              "Each send comes up to this many microseconds after its at_ms, drawn from the client's seeded generator, "
              "so arrivals spread as traffic spreads them and differ from trial to trial.")
            .in(0, 60'000'000)
            .of(Unit::us)
            .example("[4000]"),
        field("retry", &IdemClient::retry, "When the client resends after no (or a failed) answer."),
    };
    static void check(const Object& o, IdemClient& c);
};

template <>
struct Described<IdemWait> {
    static constexpr auto fields = std::tuple{
        field("replicas", &IdemWait::replicas, "WAIT's numreplicas (required).").in(1, 100).must(),
        field("timeout_ms", &IdemWait::timeout_ms, "WAIT's timeout, in milliseconds.").at_least(1).of(Unit::ms),
        field("fail_closed", &IdemWait::fail_closed, "The claim reached fewer replicas: release it and answer 503."),
    };
};

template <>
struct Described<IdemMiddlewareSpec> {
    static constexpr std::string_view def = "middleware";
    static constexpr std::string_view doc = "The middleware of the idempotency article, section 1.2.";
    static constexpr auto fields = std::tuple{
        field("key_format", &IdemMiddlewareSpec::key_format,
              "The key: {user_id}, {client_key} and {hash} (the payload's hash) are replaced; must contain "
              "{client_key}.")
            .matching(k_client_key_pattern)
            .expecting(k_client_key_words),
        field("claim_ttl_ms", &IdemMiddlewareSpec::claim_ttl_ms, "Phase 1's TTL (SET … NX GET EX 60), in milliseconds.")
            .at_least(1)
            .of(Unit::ms),
        field("done_ttl_ms", &IdemMiddlewareSpec::done_ttl_ms, "Phase 2's TTL (SET … XX EX 86400), in milliseconds.")
            .at_least(1)
            .of(Unit::ms),
        field("done_keepttl", &IdemMiddlewareSpec::done_keepttl,
              "Phase 2 with KEEPTTL (a one-tier TTL: phase 1 already set 24 h)."),
        field("check_owner", &IdemMiddlewareSpec::check_owner,
              "Store user_id in the value and never replay to another user."),
        field("release_on_error", &IdemMiddlewareSpec::release_on_error,
              "DEL the key when the business logic throws (the article's); false leaves it in_progress until phase "
              "1's TTL."),
        field("work_ms", &IdemMiddlewareSpec::work_ms, "The business logic's duration before its INSERT, in milliseconds.")
            .at_least(0)
            .of(Unit::ms),
        field("claim", &IdemMiddlewareSpec::claim,
              "How phase 1 claims the key: set_nx_get, the article's one call (SET key {in_progress} NX GET EX), or "
              "add_get, Laravel's Cache::add() (relab sends SET NX EX, the same effect as its EXISTS-then-SETEX "
              "script) followed by Cache::get() for the old value: two calls, and a window between them in which the "
              "key can expire (article 002, section 1.3). A get that finds nothing is answered 500 and counted as "
              "vanished.")
            .example(R"(["add_get"])"),
        field("add_get_gap_ms", &IdemMiddlewareSpec::add_get_gap_ms,
              "With claim add_get: a pause between Cache::add() and Cache::get(), in milliseconds, so that a key "
              "expiring in between can be placed there on purpose (the window, forced).")
            .in(0, 3'600'000)
            .of(Unit::ms)
            .example("[100]"),
        field("accept_async", &IdemMiddlewareSpec::accept_async,
              "Article 002's remedy for a request that can outlive phase 1's TTL (section 4.4): the claim is followed "
              "at once by phase 2 storing 202 Accepted, and the business logic runs after it as the queue's job "
              "would, so a retry replays 202 instead of running the logic again. relab runs the job in the same "
              "client process after the answer is stored (relab's choice: no queue server)."),
        field("wait", &IdemMiddlewareSpec::wait, "WAIT for replicas after the claim and after the store. null or absent: no WAIT."),
    };
    static void check(const Object& o, IdemMiddlewareSpec& m);
};

template <>
struct Described<IdemBenchmark> {
    static constexpr std::string_view def = "benchmark";
    static constexpr std::string_view doc =
        "Claim throughput, Redis vs PostgreSQL (the idempotency article, §3.1): an idem_benchmark lab.";
    static constexpr auto fields = std::tuple{
        field("duration_ms", &IdemBenchmark::duration_ms, "Each of relab's own measurements, in milliseconds.")
            .in(100, 60000)
            .of(Unit::ms),
        field("redis_benchmark_requests", &IdemBenchmark::redis_benchmark_requests, "redis-benchmark's -n.")
            .in(100, 10'000'000),
        field("pgbench_seconds", &IdemBenchmark::pgbench_seconds, "pgbench's -T, in seconds.").in(1, 60),
        field("tools", &IdemBenchmark::tools, "Also run redis-benchmark and pgbench on the same servers."),
        field("documented_fsync_ratio", &IdemBenchmark::documented_fsync_ratio,
              "The article's ratio: PostgreSQL with fsync per commit, times slower than Redis.")
            .at_least(1),
        field("documented_async_ratio", &IdemBenchmark::documented_async_ratio,
              "The article's ratio with synchronous_commit=off.")
            .at_least(1),
    };
};

template <>
struct Described<ClusterKeyPair> {
    static constexpr std::string_view doc = "A pair (or more) of keys.";
    static constexpr auto fields = std::tuple{
        field("name", &ClusterKeyPair::name, "Names the pair's records (\"pair\": name), unique in the lab (required).")
            .must(),
        field("keys", &ClusterKeyPair::keys,
              "The key names as the article writes them, used as they are (at least two, required).")
            .must()
            .at_least_items(2)
            .expecting("at least two key names (a script over one key needs no hash tag)"),
        field("documented", &ClusterKeyPair::documented, "The article's claim, shown beside the measured figure.")
            .may_be_empty(),
        field("note", &ClusterKeyPair::note, "Why this machine's figure differs, printed under it.").may_be_empty(),
        field("note_vi", &ClusterKeyPair::note_vi, "The note in Vietnamese. Default: note.").may_be_empty(),
    };
    static void check(const Object& o, ClusterKeyPair& p);
};

template <>
struct Described<ClusterLoad> {
    static constexpr std::string_view doc = "One way to name the hot user's keys.";
    static constexpr auto fields = std::tuple{
        field("name", &ClusterLoad::name, "Names the load's record (\"load\": name), unique in the lab (required).")
            .must(),
        field("key_format", &ClusterLoad::key_format,
              "{client_key} is replaced; other braces are the key's own (a hash tag) (required).")
            .must()
            .matching(k_client_key_pattern)
            .expecting(k_client_key_words),
        field("documented", &ClusterLoad::documented, "The article's claim, shown beside the measured figure.")
            .may_be_empty(),
        field("note", &ClusterLoad::note, "Why this machine's figure differs, printed under it.").may_be_empty(),
        field("note_vi", &ClusterLoad::note_vi, "The note in Vietnamese. Default: note.").may_be_empty(),
    };
    static void check(const Object& o, ClusterLoad& l);
};

template <>
struct Described<ClusterHotUser> {
    static constexpr auto fields = std::tuple{
        field("claims", &ClusterHotUser::claims, "Claims with fresh client keys (required).").in(1, 1'000'000).must(),
        field("loads", &ClusterHotUser::loads, "The key formats to compare (required).").must().at_least_items(1),
    };
    static void check(const Object& o, ClusterHotUser& h);
};

template <>
struct Described<IdemCluster> {
    static constexpr std::string_view def = "cluster";
    static constexpr std::string_view doc =
        "Redis Cluster and hash tags (the idempotency article, §2.3), on a cluster the lab forms itself: an "
        "idem_cluster lab. Needs \"pairs\" or \"hot_user\" (or both).";
    static constexpr auto fields = std::tuple{
        field("masters", &IdemCluster::masters, "Masters of the cluster.").in(1, 16),
        field("node_timeout_ms", &IdemCluster::node_timeout_ms, "cluster-node-timeout, in milliseconds.")
            .in(100, 600'000)
            .of(Unit::ms),
        field("pairs", &IdemCluster::pairs,
              "Keys one Lua script would touch together: CLUSTER KEYSLOT of each, then the script over them.")
            .at_least_items(1),
        field("script", &IdemCluster::script, "A Lua script EVAL'd over each pair's keys (needs \"pairs\"). Default: none."),
        field("script_args", &IdemCluster::script_args, "The script's ARGV (needs \"script\").").may_be_empty(),
        field("hot_user", &IdemCluster::hot_user,
              "A hot user's claims under each load's key format; keys and SET calls counted per node. null or absent: "
              "none."),
    };
    static void check(const Object& o, IdemCluster& c);
};

template <>
struct Described<IdemSpec> {
    static constexpr std::string_view def = "idem";
    static constexpr std::string_view doc =
        "An idempotency-key lab (the idempotency article) instead of a stream. Its kind follows from what it holds: "
        "\"cluster\" → idem_cluster, \"benchmark\" → idem_benchmark, otherwise idem_clients (which needs \"clients\"). "
        "The lab's own servers and faults are the top-level \"servers\" and \"faults\".";
    static constexpr auto fields = std::tuple{
        field("middleware", &IdemSpec::middleware, ""),
        field("layer4", &IdemSpec::layer4,
              "CREATE UNIQUE INDEX ON orders (idem_key): the database refuses a second order of a key."),
        field("clients", &IdemSpec::clients,
              "The client processes (required unless the lab is a benchmark or a cluster lab).")
            .at_least_items(1),
        field("benchmark", &IdemSpec::benchmark, ""),
        field("cluster", &IdemSpec::cluster, ""),
        field("scaling", &IdemSpec::scaling,
              "How the lab's times relate to production, printed in the report (\"1 s here stands for 60 s\").")
            .may_be_empty(),
        field("scaling_vi", &IdemSpec::scaling_vi, "The same in Vietnamese. Default: scaling.").may_be_empty(),
        field("documented_duplicates", &IdemSpec::documented_duplicates,
              "The article's count of duplicate orders (\"5–10\"), shown beside trial 1's measured count.")
            .may_be_empty(),
        field("documented_duplicates_note", &IdemSpec::documented_duplicates_note,
              "How this lab's workload relates to the article's.")
            .may_be_empty(),
        field("documented_duplicates_note_vi", &IdemSpec::documented_duplicates_note_vi,
              "The note in Vietnamese. Default: documented_duplicates_note.")
            .may_be_empty(),
    };
    static void check(const Object& o, IdemSpec& idem);
};

}  // namespace desc

}  // namespace relab
