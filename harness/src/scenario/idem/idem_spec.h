// The idempotency-key labs (article 002) as plain data: Redis steps of scripted sessions, and the
// middleware workload (clients, the middleware's settings). The lab's own servers and its faults
// are the top-level "servers" and "faults" every lab has (lab_servers.h, scenario.h).
// Loaded by idem_loader.cpp; part of Scenario (scenario.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ports/history_op.h"

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
    std::vector<int> on_codes = {409, 500, 503};  // answers that make the client try again
    int64_t every_ms = 200;
    int max_attempts = 5;  // sends per scheduled send, the first included
    bool operator==(const IdemRetry&) const = default;
};

// One request a client sends: POST /orders with an Idempotency-Key header.
struct IdemRequest {
    int64_t user_id = 7;
    std::string client_key;                                  // the Idempotency-Key header
    std::string payload = "{\"sku\":\"A1\",\"qty\":1}";      // the request body
    // When the client sends it, from the trial origin. More than one: the client did not get the
    // first answer (a slow 4G network) and sends the same request again.
    std::vector<int64_t> send_at_ms = {0};
    std::optional<std::string> key_format;  // the middleware's key format for this request (a deploy)
    std::vector<int> fail_attempts;         // the business logic throws on these attempts (1-based,
                                            // counted over every send of this request)
    std::optional<int64_t> work_ms;         // the business logic's duration for this request
    // The resends (every send after the first) also wait until the fault of this name is done:
    // "the client retries after the failover", whatever the machine's load.
    std::string resend_after_fault;
    bool operator==(const IdemRequest&) const = default;
};

// A client process: sends its requests in time order, each with retries.
struct IdemClient {
    std::string name;  // the actor: "A", "B"
    std::vector<IdemRequest> requests;
    IdemRetry retry;
    // Each send comes up to this many µs after its at_ms, drawn from the client's seeded generator:
    // arrivals spread as traffic spreads them, different in every trial.
    int64_t arrival_jitter_us = 0;
    bool operator==(const IdemClient&) const = default;
};

// How the middleware claims a key: the article's one call, or Laravel's Cache::add() and then
// Cache::get() for the old value (article 002, section 1.3), two calls with a window between them.
enum class IdemClaim { set_nx_get, add_get };
// Each claim's name in a scenario file and a role's settings, in IdemClaim order.
inline constexpr const char* k_idem_claim_names[] = {"set_nx_get", "add_get"};

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
    int64_t wait_replicas = 0;        // WAIT n timeout after the claim and after the store; 0: none
    int64_t wait_timeout_ms = 100;
    bool wait_fail_closed = false;    // the claim reached fewer replicas: release, answer 503
    IdemClaim claim = IdemClaim::set_nx_get;
    int64_t add_get_gap_ms = 0;       // add_get: the pause between add() and get() (forces the window)
    // Section 4.4's remedy: store the answer 202 Accepted at once, then run the business logic as a
    // queued job, so no request outlives phase 1's TTL.
    bool accept_async = false;
    bool operator==(const IdemMiddlewareSpec&) const = default;
};

// Claim throughput, Redis vs PostgreSQL (article 002, section 3.1).
struct IdemBenchmark {
    int64_t duration_ms = 1000;            // each of relab's own measurements
    int64_t redis_benchmark_requests = 20000;
    int64_t pgbench_seconds = 2;
    double documented_fsync_ratio = 200;   // PostgreSQL with fsync per commit, times slower
    double documented_async_ratio = 10;    // with synchronous_commit=off
    bool tools = true;                     // also run redis-benchmark and pgbench on the same servers
};

// Two or more keys one Lua script would touch together: the user's idempotency key and its lock.
struct ClusterKeyPair {
    std::string name;               // names the pair's records ("pair": name), for the expectation
    std::vector<std::string> keys;  // as the article writes them; used as they are, no run prefix
    std::string documented;         // the article's claim, shown beside the measured slots
    std::string note;
    std::string note_vi;
};

// One way to name a hot user's idempotency keys, every claim of the load under it.
struct ClusterLoad {
    std::string name;        // names the load's record ("load": name)
    std::string key_format;  // "{client_key}" is replaced; other braces are the key's own (a hash tag)
    std::string documented;
    std::string note;
    std::string note_vi;
};

// Redis Cluster and hash tags (article 002, section 2.3), on a cluster the lab forms itself.
struct IdemCluster {
    int masters = 3;
    int64_t node_timeout_ms = 5000;       // cluster-node-timeout
    std::vector<ClusterKeyPair> pairs;    // CLUSTER KEYSLOT of each key, then the script over them
    std::string script;                   // EVAL'd over each pair's keys; empty: no EVAL
    std::vector<std::string> script_args;
    // The hot user: `claims` claims (SET key {in_progress} NX GET EX 60) with fresh client keys,
    // the same client keys under every load's key format; keys and SET calls counted per node.
    int64_t claims = 0;
    std::vector<ClusterLoad> loads;
};

// The idempotency labs' settings; which parts apply is the lab's kind (Scenario::kind):
// idem_clients the middleware, clients, servers and faults; idem_benchmark `benchmark`;
// idem_cluster `cluster`.
struct IdemSpec {
    IdemMiddlewareSpec middleware;
    bool layer4 = false;  // CREATE UNIQUE INDEX ON orders (idem_key)
    std::vector<IdemClient> clients;
    IdemBenchmark benchmark;  // idem_benchmark
    IdemCluster cluster;      // idem_cluster
    // How the lab's times relate to production, printed in the report ("1 s here stands for 60 s").
    std::string scaling;
    std::string scaling_vi;
    // The article's count of duplicate orders ("5–10"), shown beside the measured count of trial 1,
    // with a note on how this lab's workload relates to the article's.
    std::string documented_duplicates;
    std::string documented_duplicates_note;
    std::string documented_duplicates_note_vi;
};


}  // namespace relab
