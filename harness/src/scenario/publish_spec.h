// Who publishes a stream lab's events, as plain data with each struct's description
// (describe/describe.h): the producer (its retries, injected failures, IDMP and WAIT), the outbox
// dispatcher that replaces it, and S2's router over shards.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "describe/describe.h"
#include "util/enum_names.h"

namespace relab {

// Which attempts of one event's publication fail (1 = the first try), injected in the
// producer's publish path as the article does.
struct PublishFailure {
    int64_t order = 0;
    std::string type;
    std::vector<int> attempts;    // fail before anything reaches Redis (a network blip)
    std::vector<int> reply_lost;  // the XADD runs on the server, its reply never reaches the producer
    bool operator==(const PublishFailure&) const = default;
};

// WAIT replicas timeout_ms after each XADD: an entry fewer replicas acknowledged is not taken as
// published (recorded "not_replicated") and is sent again.
struct WaitSpec {
    int64_t replicas = 1;
    int64_t timeout_ms = 100;
    bool operator==(const WaitSpec&) const = default;
};

// The producer retries a failed publish asynchronously: after backoff_ms, then multiplied by
// backoff_multiplier for every further failure; at most max_attempts tries per event.
struct ProducerSpec {
    int64_t backoff_ms = 500;
    int64_t backoff_multiplier = 2;
    int max_attempts = 10;
    std::optional<WaitSpec> wait;  // none: no WAIT
    std::vector<PublishFailure> failures;
    // XADD ... IDMP producer <order>:<type>:v<version> (Redis 8.6): a resend of an event the
    // stream already has adds nothing and gets the first entry's ID back.
    bool idmp = false;
    int64_t wait_replicas() const { return wait ? wait->replicas : 0; }
    bool operator==(const ProducerSpec&) const = default;
};

enum class DispatchOrder {
    naive,   // ORDER BY id; a failed row stays in the outbox and later rows go ahead
    per_key  // ORDER BY aggregate_id, id; a failed row blocks later rows of its aggregate only
};
inline constexpr EnumName<DispatchOrder> k_dispatch_orders[] = {{DispatchOrder::naive, "naive"},
                                                                {DispatchOrder::per_key, "per_key"}};
constexpr const auto& enum_names(DispatchOrder) { return k_dispatch_orders; }

// When the dispatcher marks a row published.
enum class DispatchMark {
    row,    // UPDATE ... SET published_at right after the row's XADD, each in its own transaction
    round,  // the round is one transaction (BEGIN; SELECT ... FOR UPDATE; each XADD followed by its
            // UPDATE; COMMIT): a crash before the COMMIT loses every mark of the round
};
inline constexpr EnumName<DispatchMark> k_dispatch_marks[] = {{DispatchMark::row, "row"}, {DispatchMark::round, "round"}};
constexpr const auto& enum_names(DispatchMark) { return k_dispatch_marks; }

// How several dispatchers share the outbox.
enum class DispatchClaim {
    none,         // each reads every unpublished row and publishes it: no exclusion between dispatchers
    skip_locked,  // each row is claimed in its own transaction (SELECT ... LIMIT 1 FOR UPDATE SKIP LOCKED, held
                  // across the XADD and the mark): per_key claims only an aggregate's first unpublished row,
                  // naive any unpublished row (row-level exclusion only)
};
inline constexpr EnumName<DispatchClaim> k_dispatch_claims[] = {{DispatchClaim::none, "none"},
                                                                {DispatchClaim::skip_locked, "skip_locked"}};
constexpr const auto& enum_names(DispatchClaim) { return k_dispatch_claims; }

// Which publish attempts of one outbox row fail.
struct OutboxFailure {
    int64_t outbox_id = 0;
    std::vector<int> attempts;
    bool operator==(const OutboxFailure&) const = default;
};

// The transactional outbox: the source app records every event (UPDATE tmp_src_orders + INSERT
// tmp_outbox in one transaction) and a dispatcher polls the outbox and publishes to the stream.
// When enabled, the dispatcher replaces the producer.
struct DispatcherSpec {
    bool enabled = false;
    DispatchOrder ordering = DispatchOrder::per_key;
    int64_t poll_ms = 200;
    int max_rounds = 100;  // a safety stop for a row that never gets through
    std::vector<OutboxFailure> failures;
    DispatchMark mark = DispatchMark::row;
    int64_t publish_ms = 0;  // each publish's time after its XADD, before its mark (a broker's confirm)
    int count = 1;           // dispatchers polling the same outbox: actor "dispatcher", or dispatcher1..N
    DispatchClaim claim = DispatchClaim::none;
    bool operator==(const DispatcherSpec&) const = default;
};

// A change of the number of shards mid-run: N becomes `to` before event number after_events + 1
// (in publish order); with drain, the router first waits until every shard's group has delivered
// and acknowledged everything (the safe switch).
struct ShardReshard {
    int to = 1;
    int64_t after_events = 1;
    bool drain = false;
    int64_t drain_poll_ms = 5;  // how often the draining router asks
    bool operator==(const ShardReshard&) const = default;
};

// The lab's Redis Cluster: a replica per master or none, cluster-node-timeout, and
// cluster-require-full-coverage (no: the other masters keep serving while one shard is down).
struct ShardClusterSpec {
    int replicas = 0;
    int64_t node_timeout_ms = 5000;
    bool require_full_coverage = true;
    bool operator==(const ShardClusterSpec&) const = default;
};

// S2, sharding by key: the producer is a router that puts each event into stream
// key_format(i), i = shard_hash(order) % N, and consumer Ck reads shard k-1 alone (one consumer per
// shard). On the real backend the shards live on a 3-master Redis Cluster that relab forms; the key
// format's hash tag decides each shard's slot.
struct ShardSpec {
    bool enabled = false;
    int streams = 3;                             // N
    std::string key_format = "orders:{{{i}}}";   // fmt syntax: {i} is the shard index, {{ }} literal braces
    // What the router hashes: the order (S2: an order's events stay on one shard), or nothing at
    // all (round_robin: event k goes to shard k % N, the mistake of sharding by anything but the key).
    enum class By { order, round_robin };
    By by = By::order;
    std::optional<ShardReshard> reshard;
    ShardClusterSpec cluster;
    int shard_count() const { return reshard && reshard->to > streams ? reshard->to : streams; }  // consumers
    bool operator==(const ShardSpec&) const = default;
};
inline constexpr EnumName<ShardSpec::By> k_shard_bys[] = {{ShardSpec::By::order, "order"},
                                                          {ShardSpec::By::round_robin, "round_robin"}};
constexpr const auto& enum_names(ShardSpec::By) { return k_shard_bys; }

// The stream of shard i (0-based).
std::string shard_stream_key(const ShardSpec& s, int i);
// FNV-1a (32 bit) of the order's decimal id: the router's hash(order).
uint32_t shard_hash(int64_t order);
// The shard the router puts an event in while there are `n` shards: by order, hash % n; round
// robin, the event's place in publish order (0-based) % n.
int shard_of(const ShardSpec& s, int64_t order, int64_t event_index, int n);

std::string to_string(DispatchOrder o);
std::string to_string(DispatchMark m);
std::string to_string(DispatchClaim c);  // "none" | "skip_locked"
std::string to_string(ShardSpec::By b);  // "order" | "round_robin"
// The dispatchers' actor names: "dispatcher" for one (the existing labs' histories), else
// "dispatcher1".."dispatcherN".
std::vector<std::string> dispatcher_actors(const DispatcherSpec& d);

namespace desc {

template <>
struct Described<PublishFailure> {
    static constexpr std::string_view doc = "The failing attempts of one event (an event of the lab: its order and type).";
    static constexpr auto fields = std::tuple{
        field("order", &PublishFailure::order, "The event's order (required).").must(),
        field("type", &PublishFailure::type, "The event's type (required).").must(),
        field("attempts", &PublishFailure::attempts,
              "Attempt numbers (1 = the first try, each <= max_attempts) that fail before anything reaches Redis (a "
              "network blip).").at_least(1),
        field("reply_lost", &PublishFailure::reply_lost,
              "Attempt numbers whose XADD runs on the server but whose reply never reaches the producer; none of them "
              "also in \"attempts\".").at_least(1),
    };
    static constexpr std::string_view rules = R"({"allOf": [{"description": "A failure needs \"attempts\", \"reply_lost\" or both.",
        "anyOf": [{"required": ["attempts"]}, {"required": ["reply_lost"]}]}]})";
    static void check(const Object& o, PublishFailure& f);
};

template <>
struct Described<WaitSpec> {
    static constexpr std::string_view doc =
        "WAIT replicas timeout_ms after each XADD (needs \"servers\": {\"replica\": true}): an entry fewer replicas "
        "acknowledged is not taken as published (its record says not_replicated) and the event is sent again, as an "
        "outage's error would be.";
    static constexpr auto fields = std::tuple{
        field("replicas", &WaitSpec::replicas, "Replicas that must acknowledge the XADD (required).").in(1, 100).must(),
        field("timeout_ms", &WaitSpec::timeout_ms, "How long WAIT waits for them, in milliseconds.")
            .in(1, 60000)
            .of(Unit::ms),
    };
};

template <>
struct Described<ProducerSpec> {
    static constexpr std::string_view def = "producer";
    static constexpr std::string_view doc =
        "The producer's retries of a failed publish (asynchronous, with backoff), the failures to inject, and XADD "
        "IDMP.";
    static constexpr auto fields = std::tuple{
        field("backoff_ms", &ProducerSpec::backoff_ms, "The first retry's delay, in milliseconds.").at_least(1).of(Unit::ms),
        field("backoff_multiplier", &ProducerSpec::backoff_multiplier,
              "Each further failure multiplies the delay by this.").in(1, 1000),
        field("max_attempts", &ProducerSpec::max_attempts, "Tries per event at most.").in(1, 1000),
        field("wait", &ProducerSpec::wait,
              "WAIT replicas timeout_ms after each XADD (needs \"servers\": {\"replica\": true}): an entry fewer "
              "replicas acknowledged is not taken as published (its record says not_replicated) and the event is sent "
              "again, as an outage's error would be.")
            .example(R"([{"replicas": 1, "timeout_ms": 100}])"),
        field("failures", &ProducerSpec::failures, "Which attempts of which event fail.")
            .example(R"([[{"order": 42, "type": "created", "attempts": [1, 2]}]])"),
        field("idmp", &ProducerSpec::idmp,
              "true: publish with XADD … IDMP producer <order>:<type>:v<version> (Redis 8.6); needs \"requires\": "
              "[\"XADD IDMP\"]."),
    };
    static void check(const Object& o, ProducerSpec& p);
};

template <>
struct Described<OutboxFailure> {
    static constexpr std::string_view doc = "The failing attempts of one outbox row.";
    static constexpr auto fields = std::tuple{
        field("outbox_id", &OutboxFailure::outbox_id,
              "The outbox row: 1..N in the order of the events, one row per event (required).").at_least(1).must(),
        field("attempts", &OutboxFailure::attempts, "Attempt numbers (1 = the first) that fail (required).")
            .at_least(1)
            .must(),
    };
};

template <>
struct Described<DispatcherSpec> {
    static constexpr std::string_view def = "dispatcher";
    static constexpr std::string_view doc =
        "The transactional outbox: the source app records each event (UPDATE tmp_src_orders + INSERT tmp_outbox in "
        "one transaction) and dispatchers poll the outbox and publish to the stream, replacing the producer. null or "
        "absent: no dispatcher.";
    static constexpr auto presence = &DispatcherSpec::enabled;
    static constexpr auto fields = std::tuple{
        field("ordering", &DispatcherSpec::ordering,
              "naive (ORDER BY id; a failed row stays and later rows go ahead) or per_key (the default: ORDER BY "
              "aggregate_id, id; a failed row blocks its aggregate's later rows only)."),
        field("poll_ms", &DispatcherSpec::poll_ms, "The dispatcher's poll interval, in milliseconds.")
            .at_least(1)
            .of(Unit::ms),
        field("max_rounds", &DispatcherSpec::max_rounds,
              "The rounds a dispatcher polls at most (a round a PostgreSQL error interrupted is not counted); then it "
              "stops with what is still unpublished: a safety stop for a row that never gets through.")
            .in(1, 100000),
        field("failures", &DispatcherSpec::failures, "Which publish attempts of which outbox rows fail.")
            .example(R"([[{"outbox_id": 1, "attempts": [1]}]])"),
        field("mark", &DispatcherSpec::mark,
              "When a row is marked published: row (the default: its UPDATE commits right after its XADD) or round "
              "(the round is one transaction; a crash before COMMIT loses every mark of the round)."),
        field("publish_ms", &DispatcherSpec::publish_ms,
              "Each publish's time after its XADD, before its mark (a broker's confirm), in milliseconds.")
            .in(0, 60000)
            .of(Unit::ms),
        field("count", &DispatcherSpec::count,
              "Dispatchers polling the same outbox (actors dispatcher1..N; one keeps the name dispatcher).").in(1, 8),
        field("claim", &DispatcherSpec::claim,
              "How several dispatchers share the outbox: none (the default: each reads every unpublished row) or "
              "skip_locked (each row claimed in its own transaction with FOR UPDATE SKIP LOCKED; not with mark round)."),
    };
    static void check(const Object& o, DispatcherSpec& d);
};

template <>
struct Described<ShardReshard> {
    static constexpr std::string_view doc = "Change the number of shards mid-run. null or absent: no reshard.";
    static constexpr auto fields = std::tuple{
        field("to", &ShardReshard::to, "The new number of shards (required; not the current one).").in(1, 16).must(),
        field("after_events", &ShardReshard::after_events,
              "The switch comes before event number after_events + 1, in publish order (required; the lab needs "
              "events on both sides).").at_least(1).must(),
        field("drain", &ShardReshard::drain,
              "true: wait for every shard to drain before the switch (the safe switch)."),
        field("drain_poll_ms", &ShardReshard::drain_poll_ms,
              "With drain: how often the router asks whether every shard's group has delivered and acknowledged "
              "everything, in milliseconds.").in(1, 10000).of(Unit::ms),
    };
};

template <>
struct Described<ShardClusterSpec> {
    static constexpr std::string_view doc =
        "The lab's Redis Cluster. null or absent: 3 masters, no replica, cluster-node-timeout 5000 ms.";
    static constexpr bool nullable = true;
    static constexpr auto fields = std::tuple{
        field("replicas", &ShardClusterSpec::replicas,
              "Replicas per master (0 or 1); 1 lets a fault kill a shard's master (shard_failover).").in(0, 1),
        field("node_timeout_ms", &ShardClusterSpec::node_timeout_ms,
              "cluster-node-timeout: how long a node is unreachable before it is flagged failing and its replica may "
              "take over.").in(100, 60000).of(Unit::ms),
        field("require_full_coverage", &ShardClusterSpec::require_full_coverage,
              "cluster-require-full-coverage: true (Redis's default) makes every node refuse queries while a slot has "
              "no live master; false lets the other shards go on."),
    };
};

template <>
struct Described<ShardSpec> {
    static constexpr std::string_view def = "shard";
    static constexpr std::string_view doc =
        "S2, sharding by key: the producer is a router that puts each event into stream key_format(i), i = hash(order) "
        "% streams, with one consumer per shard, on a 3-master Redis Cluster relab forms (with \"cluster\": a replica "
        "per master). Not with dispatcher, lock, buffer, fanout, a reaper (recovery.autoclaim in \"consumers\" only) "
        "or producer failures; \"consumers\" is the shard count. null or absent: none.";
    static constexpr auto presence = &ShardSpec::enabled;
    static constexpr auto fields = std::tuple{
        field("streams", &ShardSpec::streams, "N, the number of shards.").in(1, 16),
        field("key_format", &ShardSpec::key_format,
              "The shard streams' key, fmt syntax: {i} is the shard index, literal braces doubled; the default gives "
              "orders:{0}, orders:{1}, … (each its own hash tag)."),
        field("by", &ShardSpec::by,
              "What the router hashes: order (the default: an order's events stay on one shard) or round_robin (event "
              "k goes to shard k % N)."),
        field("reshard", &ShardSpec::reshard, "Change the number of shards mid-run. null or absent: no reshard.")
            .example(R"([{"to": 4, "after_events": 300, "drain": true}])"),
        field("cluster", &ShardSpec::cluster,
              "The lab's Redis Cluster. null or absent: 3 masters, no replica, cluster-node-timeout 5000 ms."),
    };
    static void check(const Object& o, ShardSpec& s);
};

}  // namespace desc

}  // namespace relab
