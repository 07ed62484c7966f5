// Faults as data, Jepsen's nemesis for relab: what a scenario's "faults" list says, and how a
// stream lab's consumers recover. One vocabulary for every lab family and both backends; the
// supervisor (engine/supervisor.cpp) fires them through the Control port.
//
// Adding a fault action touches two files: this header lists it in FaultAction, and
// fault/faults.cpp gives it its row (name, the targets it may act on, whose errors the roles then
// see, whether the simulator injects it) and its composition of the Control port's primitives
// (ports/control.h), which both backends implement. Adding a consumer recovery mode touches two
// files: its member in RecoverySpec and its line in RecoverySpec's description below (the loader,
// the role settings sent to a role process and scenarios/schema.json all walk it), and what the
// consumer does with it, roles/consumer/ (delivery.cpp, consumer.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "describe/describe.h"
#include "describe/ports_codecs.h"
#include "ports/history_op.h"
#include "ports/link_mode.h"
#include "ports/target.h"
#include "util/enum_names.h"

namespace relab {

enum class FaultAction {
    kill,     // SIGKILL the target (a role's process, or redis-server as `docker kill` does; a fiber
              // that never runs again, or a server model that answers nothing, in the sim)
    pause,    // SIGSTOP: the target stays connected but runs nothing until resumed
    resume,   // SIGCONT
    restart,  // kill if still running, then start the role again under the same name (a server:
              // again on its port and data directory, keeping what its persistence kept; "redis-replica"
              // after a failover: the old primary comes back empty and Sentinel makes it a replica)
    failover,   // "redis": SIGKILL the primary, Sentinel's election promotes the replica
    drop_link,  // "redis-replica": the primary drops the replication link (CLIENT KILL TYPE replica);
                // "clients": every Redis connection of the trial's roles is closed (CLIENT KILL ID);
                // a role: that role's Redis connections are closed
    flood,      // "redis": writes `bytes` of cache keys (`value_bytes` each, EX 3600) into the server,
                // as a peak of cache traffic does; counts evicted keys and OOM refusals
    snapshot,   // "redis": BGSAVE, and waits for it (the RDB snapshot `save` would take on its schedule)
    observe,    // "redis": changes nothing; records what the lab's keys look like now (a probe)
    delay,      // a role's link to `link` (its Redis or its PostgreSQL): every reply reaches it `ms` later
    blackhole,  // a role's link to `link` hangs: its bytes are taken and neither forwarded nor answered;
                // the role keeps running, its call waits (a TCP link that stops carrying, not a reset)
    heal,       // a role's link to `link` carries again at once: what a blackhole held flows, in order
    reset_peer,  // a role's link to `link`: each connection is reset (TCP RST) in place of the server's
                 // next reply, so the role cannot tell whether its last statement ran; until a heal
    delete_consumer,  // a role: XGROUP DELCONSUMER of its consumer name (a scale-down); its pending
                      // entries leave the group's PEL with it, and no claim finds them any more
    trim,       // "redis": XTRIM the lab's stream to `maxlen` entries (MAXLEN, exact), whatever the
                // group has not been given or has pending; records the IDs it trimmed
    shard_failover,  // "redis-cluster-master" with "shard": k: SIGKILL the master serving shard k's stream;
                     // the cluster's own failover promotes its replica (never by hand), waited for
};

// Whether the action takes a server away or cuts it off (clients see errors while it lasts).
bool disrupts(FaultAction a);

// Whose errors the lab's roles ride out when a fault is scheduled (an `error` record, a wait, a
// retry on a new connection); in any other lab such an error is the harness's failure (exit 2).
// `link`: the server of the fault's own link (a link fault that cuts the connection).
enum class FaultOutage { none, redis, postgres, link };

// When a fault fires. The first firing is due at `at_ms` after the trial origin (a stream lab's
// publishing role's start; an idempotency lab's go signal) or, with `after`, `delay_ms` after the
// first history record that matches it (the nemesis's own records included: "1500 ms after fault
// 1"); with both, at whichever comes later ("at 900 ms, once B has its answer"). With every_ms, it
// fires `count` times, every_ms apart from the first firing; with until_published as well, the
// repeats end once the stream lab's publishing roles have finished, whatever is left of `count`
// (Jepsen's nemesis running beside the workload's generator: a soak's kills).
struct FaultTrigger {
    std::optional<int64_t> at_ms;
    // A history record to wait for: op, actor ("" any), fields matched subset-wise (objects
    // recursively), e.g. {"op": "receive", "fields": {"event": {"type": "created"}}}.
    struct After {
        Op op = Op::start;
        std::string actor;
        nlohmann::json fields = nlohmann::json::object();
        bool operator==(const After&) const = default;
    };
    std::optional<After> after;
    int64_t delay_ms = 0;
    int64_t every_ms = 0;
    int count = 1;
    bool until_published = false;  // "until": "published"
    bool operator==(const FaultTrigger&) const = default;
};

// A repeated fault's count when "until": "published" bounds it and the file gives none.
inline constexpr int k_fault_count_until_published = 100000;

struct FaultSpec {
    FaultAction action = FaultAction::kill;
    // What it acts on, resolved from the file's name by the loader: a role ("C1", "reaper",
    // "producer", ...), a server the lab has ("redis", "redis-replica", "postgres", ...) or
    // "clients". Unset (a role without an actor) with `matched` or target_of.
    Target target;
    // "matched": the actor of the record the `after` trigger matched ("the consumer that received
    // created"), known once it fires.
    bool matched = false;
    int target_of = 0;  // 1-based: the same target fault N resolved to (resume what fault 1 paused)
    FaultTrigger trigger;
    std::string note;     // why, in words, printed beside the fault (and, with `documented`, why
    std::string note_vi;  // this machine's figure must differ from the article's)
    // Roles may wait for a fault by name (an idempotency client's resend_after_fault): the
    // nemesis raises the name's flag once the fault is done.
    std::string name;
    // flood: how much to write, in values of value_bytes.
    int64_t bytes = 0;
    int64_t value_bytes = 1024;
    int64_t db = -1;  // flood: the database the cache keys go to (SELECT); -1: the lab's own
    // delay, blackhole, reset_peer, heal: which of the role's links (to the lab's Redis or its PostgreSQL).
    LinkServer link = LinkServer::redis;
    int64_t ms = 0;  // delay: how much later each reply arrives
    int64_t maxlen = 0;  // trim: XTRIM ... MAXLEN maxlen
    // The lab's stream and consumer group (delete_consumer, trim): set by the loader from "stream".
    std::string stream = "orders";
    std::string group = "order-processor";
    // What the article documented for this fault, shown beside the figure relab measures.
    std::string documented;
    bool operator==(const FaultSpec&) const = default;
};

namespace desc {

// The long words of a fault's action and target, kept apart from the field list they belong to.
inline constexpr std::string_view k_action_doc =
    "kill (SIGKILL), pause (SIGSTOP), resume (SIGCONT), restart (kill if running, start again under the "
    "same name; a server keeps what its persistence kept), failover (\"redis\": SIGKILL the primary, "
    "Sentinel promotes the replica; needs \"servers\": {\"replica\": true}), drop_link "
    "(\"redis-replica\": the primary drops the replication link; \"redis-cluster-replica\": shard k's "
    "master drops its replica's; \"clients\" or a role: its Redis connections are closed), flood "
    "(\"redis\" or \"redis-cache\": writes `bytes` of cache keys), snapshot (\"redis\": BGSAVE, waited "
    "for), observe (\"redis\": changes nothing, records what the lab's keys look like), delay (a role's "
    "link to \"link\": every reply arrives \"ms\" later), blackhole (a role's link to \"link\" hangs: "
    "its bytes are taken, neither forwarded nor answered, and its calls wait), heal (a role's link "
    "carries again: what a blackhole held flows on, in order), reset_peer (a role's link to \"link\": "
    "each connection is reset with a TCP RST in place of the server's next reply, until a heal), shard_failover (\"redis-cluster-master\" "
    "with \"shard\": k: SIGKILL the master serving shard k; the cluster's own failover promotes its "
    "replica, waited for).";
inline constexpr std::string_view k_target_doc =
    "A role of the lab (\"C1\"…\"Cn\", \"reaper\", \"producer\", \"app\", \"dispatcher\", an idempotency "
    "client's name), a server of the lab (\"redis\", \"redis-replica\", \"redis-cache\", \"postgres\": "
    "each needs its \"servers\" entry; \"redis-cluster-master\" with \"shard\": a sharded lab's master "
    "of that shard, with shard.cluster.replicas 1; \"redis-cluster-replica\" with \"shard\": that "
    "master's replica, for pause, resume and drop_link), \"clients\" (every Redis connection of the "
    "trial's roles), or \"matched\" (the actor of the record the \"after\" trigger matched).";

// An action by its name in fault/faults.cpp's table.
template <>
struct Codec<FaultAction> {
    static FaultAction read(const Reader& r, const json& v, const std::string& path, const Limits&, Read);
    static json write(FaultAction a, Write);
    static void schema(ordered_json& p, const Limits&);
    static constexpr bool has_default = false;
};

template <>
struct Described<FaultTrigger::After> {
    static void after_fields_read(const Reader& r, const json& v, const std::string& path, FaultTrigger::After& a);
    static json after_fields_write(const FaultTrigger::After& a) { return a.fields.empty() ? json() : a.fields; }
    static constexpr auto fields = std::tuple{
        field("op", &FaultTrigger::After::op, "").must(),
        field("actor", &FaultTrigger::After::actor,
              "The record's actor (\"C1\", \"producer\", \"relab\", a client's name…). Default: any."),
        CustomField<FaultTrigger::After, json>{
            "fields",
            "Fields the record's data must hold, matched subset-wise (objects recursively), e.g. {\"event\": {\"type\": "
            "\"created\"}}; only fields the op carries.",
            after_fields_read, after_fields_write, R"({"examples": [{"event": {"type": "created"}}], "type": "object"})"},
    };
    static constexpr std::string_view rules = R"({"$ref": "#/$defs/opFields"})";
};

template <>
struct Described<FaultTrigger> {
    static void until_read(const Reader& r, const json& v, const std::string& path, FaultTrigger& t);
    static json until_write(const FaultTrigger& t) { return t.until_published ? json("published") : json(); }
    static constexpr auto fields = std::tuple{
        field("at_ms", &FaultTrigger::at_ms, "Fire at this time, in milliseconds from the trial origin.").at_least(0).of(Unit::ms),
        field("after", &FaultTrigger::after,
              "Fire delay_ms after the first history record that matches (the nemesis's own records included).")
            .example(R"([{"op": "receive", "actor": "C1", "fields": {"event": {"type": "created"}}}])"),
        field("delay_ms", &FaultTrigger::delay_ms, "With \"after\": the delay after the matched record, in milliseconds.")
            .at_least(0)
            .of(Unit::ms),
        field("every_ms", &FaultTrigger::every_ms,
              "Repeat every this many milliseconds (needs \"count\" or \"until\"; one trigger only).").at_least(1).of(Unit::ms),
        field("count", &FaultTrigger::count,
              "How many times it fires (with \"until\": up to this many, 100000 when not given); more than 1 needs "
              "\"every_ms\".").in(1, k_fault_count_until_published),
        CustomField<FaultTrigger, json>{
            "until",
            "\"published\": a repeated fault (with \"every_ms\") fires until the lab's publishing roles are done; "
            "\"count\" then only caps it. Stream labs only.",
            until_read, until_write, R"({"enum": ["published"]})"},
    };
    static void check(const Object& o, FaultTrigger& t);
};

template <>
struct Described<FaultSpec> {
    static constexpr std::string_view def = "fault";
    static constexpr std::string_view doc =
        "One fault of the nemesis's schedule. A trigger (\"at_ms\", \"after\" or both: whichever comes later) and "
        "exactly one of \"target\" or \"target_of\".";
    static void target_read(const Reader& r, const json& v, const std::string& path, FaultSpec& f);
    static json target_write(const FaultSpec& f);
    static void shard_read(const Reader& r, const json& v, const std::string& path, FaultSpec& f);
    static json shard_write(const FaultSpec& f) { return f.target.shard >= 0 ? json(f.target.shard) : json(); }
    static void db_read(const Reader& r, const json& v, const std::string& path, FaultSpec& f);
    static json db_write(const FaultSpec& f) { return f.db >= 0 ? json(f.db) : json(); }
    static constexpr auto fields = std::tuple{
        field("action", &FaultSpec::action, k_action_doc).must(),
        CustomField<FaultSpec, json>{"target", k_target_doc, target_read, target_write, R"({"type": "string", "minLength": 1})"},
        CustomField<FaultSpec, json>{"shard",
                                     "shard_failover on \"redis-cluster-master\": the shard (0-based) whose master is "
                                     "killed; pause, resume or drop_link on \"redis-cluster-replica\": the shard whose "
                                     "master's replica it is (required on both, refused elsewhere).",
                                     shard_read, shard_write, R"({"type": "integer", "minimum": 0, "maximum": 15})"},
        field("target_of", &FaultSpec::target_of,
              "1-based index of an earlier fault whose target this one acts on (resume what fault 1 paused).").at_least(1),
        flat(&FaultSpec::trigger),
        field("note", &FaultSpec::note, "Why, in words, printed beside the fault."),
        field("note_vi", &FaultSpec::note_vi, "The note in Vietnamese. Default: note."),
        field("name", &FaultSpec::name, "A name (unique in the lab) that an idempotency client's resend_after_fault waits for."),
        field("bytes", &FaultSpec::bytes, "flood: how many bytes of cache keys to write (required for a flood).")
            .at_least(1)
            .of(Unit::bytes),
        field("value_bytes", &FaultSpec::value_bytes, "flood: each value's size, in bytes.").in(1, 1 << 24).of(Unit::bytes),
        CustomField<FaultSpec, json>{"db", "flood: the database the cache keys go to (SELECT). Default: the lab's own.",
                                     db_read, db_write, R"({"type": "integer", "minimum": 0, "maximum": 15})"},
        field("link", &FaultSpec::link,
              "delay, blackhole, reset_peer, heal: which of the role's links, the one to the lab's Redis or to its PostgreSQL (on "
              "the real backend a TCP proxy relab puts in front of each server for every role of the lab)."),
        field("ms", &FaultSpec::ms, "delay: how many milliseconds later each reply reaches the role (required for a delay).")
            .in(1, 600000)
            .of(Unit::ms),
        field("maxlen", &FaultSpec::maxlen, "trim: XTRIM … MAXLEN maxlen, exact (required for a trim).").at_least(0),
        field("documented", &FaultSpec::documented,
              "What the article documented for this fault, shown beside the figure relab measures."),
        field("stream", &FaultSpec::stream, "The lab's stream (delete_consumer, trim), from its \"stream\".").derived(),
        field("group", &FaultSpec::group, "The lab's consumer group, from its \"stream\".").derived(),
    };
    static void check(const Object& o, FaultSpec& f);
};

}  // namespace desc

// How consumers get back entries a crashed or stalled consumer left pending.
struct RecoverySpec {
    // On start, a consumer first reads its own pending entries (XREADGROUP ... 0), then new ones.
    bool pending_first = false;
    // A NOGROUP error (the group vanished with a restarted server) makes the consumer create the
    // group again (XGROUP CREATE ... 0 MKSTREAM) instead of retrying its read forever.
    bool recreate_group = false;
    struct Autoclaim {
        // Who claims: a separate "reaper" role, or every consumer in its loop.
        enum class In { reaper, consumers };
        bool enabled = false;
        int64_t min_idle_ms = 1000;  // XAUTOCLAIM ... min-idle-time
        int64_t every_ms = 100;      // how often the claimer scans
        int count = 10;              // XAUTOCLAIM ... COUNT
        In in = In::reaper;
        bool in_reaper() const { return in == In::reaper; }
        bool operator==(const Autoclaim&) const = default;
    } autoclaim;
    // The name a consumer reads under in the group: its actor, or (per_process) its actor and an ID
    // drawn at its start ("C1~4821"), as a pod-named consumer does: a restart (a redeploy) is a new
    // consumer of the group.
    enum class ConsumerName { actor, per_process };
    ConsumerName consumer_name = ConsumerName::actor;
    // A delivery-count cap: a job that fails on its max_deliveries-th delivery (or later) is
    // XADDed to the dead-letter stream (the lab's stream key + ":dead") and acknowledged, instead of
    // being left pending for the next claim. 0: no cap.
    int64_t max_deliveries = 0;
    bool name_per_process() const { return consumer_name == ConsumerName::per_process; }
    bool any() const { return pending_first || autoclaim.enabled; }
    bool operator==(const RecoverySpec&) const = default;
};
inline constexpr EnumName<RecoverySpec::Autoclaim::In> k_autoclaim_ins[] = {
    {RecoverySpec::Autoclaim::In::reaper, "reaper"}, {RecoverySpec::Autoclaim::In::consumers, "consumers"}};
constexpr const auto& enum_names(RecoverySpec::Autoclaim::In) { return k_autoclaim_ins; }
inline constexpr EnumName<RecoverySpec::ConsumerName> k_consumer_names[] = {
    {RecoverySpec::ConsumerName::actor, "actor"}, {RecoverySpec::ConsumerName::per_process, "per_process"}};
constexpr const auto& enum_names(RecoverySpec::ConsumerName) { return k_consumer_names; }

namespace desc {

template <>
struct Described<RecoverySpec::Autoclaim> {
    static constexpr std::string_view doc =
        "XAUTOCLAIM entries idle for min_idle_ms, every every_ms, count at a time, in a reaper or the consumers. null "
        "or absent: off; {} on with the defaults.";
    static constexpr auto presence = &RecoverySpec::Autoclaim::enabled;
    static constexpr auto fields = std::tuple{
        field("min_idle_ms", &RecoverySpec::Autoclaim::min_idle_ms, "XAUTOCLAIM's min-idle-time, in milliseconds.")
            .at_least(0)
            .of(Unit::ms),
        field("every_ms", &RecoverySpec::Autoclaim::every_ms, "How often the claimer scans, in milliseconds.")
            .at_least(1)
            .of(Unit::ms),
        field("count", &RecoverySpec::Autoclaim::count, "XAUTOCLAIM's COUNT.").in(1, 10000),
        field("in", &RecoverySpec::Autoclaim::in,
              "Who claims: a separate \"reaper\" role (the default) or every consumer in its loop (\"consumers\")."),
    };
};

template <>
struct Described<RecoverySpec> {
    static constexpr std::string_view def = "recovery";
    static constexpr std::string_view doc =
        "How consumers get back entries a crashed or stalled consumer left pending. Stream labs only.";
    static constexpr auto fields = std::tuple{
        field("pending_first", &RecoverySpec::pending_first,
              "On start, a consumer first reads its own pending entries (XREADGROUP … 0), then new ones."),
        field("recreate_group", &RecoverySpec::recreate_group,
              "A consumer that meets NOGROUP creates the group again from the stream's start (XGROUP CREATE … 0 "
              "MKSTREAM)."),
        field("autoclaim", &RecoverySpec::autoclaim,
              "XAUTOCLAIM entries idle for min_idle_ms, every every_ms, count at a time, in a reaper or the consumers. "
              "null or absent: off; {} on with the defaults."),
        field("consumer_name", &RecoverySpec::consumer_name,
              "The name a consumer reads under in the group: \"actor\" (default, \"C1\"), or \"per_process\": its "
              "actor and an ID drawn when its process starts (\"C1~4821\"), as a pod-named consumer's is, so that a "
              "restart (a redeploy) is a new consumer and the old name's pending entries are orphaned until a claim."),
        field("max_deliveries", &RecoverySpec::max_deliveries,
              "A delivery-count cap: a job that fails on this delivery or a later one is XADDed to the dead-letter "
              "stream (the lab's stream key + \":dead\") and acknowledged, and counted dead_lettered. 0 (default): no "
              "cap, the entry stays pending.")
            .in(0, 1000),
    };
};

}  // namespace desc

std::string to_string(FaultAction a);
// The action named `name`, or nullopt.
std::optional<FaultAction> fault_action_named(const std::string& name);
// Every action's name, for error messages and the schema's test.
std::vector<std::string> fault_action_names();
// Why the simulator cannot inject `action` on a target of this kind (in an idempotency lab when
// `idempotency_lab`), in words for the lab's skip reason; nullopt: it can.
std::optional<std::string> fault_sim_refusal(FaultAction action, FaultTarget target, bool idempotency_lab);

// A kind of target in an error message: "\"redis\"", ..., "a role".
std::string to_string(FaultTarget t);
// The kind of target `name` names: "redis", "redis-replica", "postgres", "clients", else a role.
FaultTarget fault_target_kind(const std::string& name);
// The target `name` names (a role: that actor), and back: the name the records and reports show.
Target fault_target_named(const std::string& name);
std::string target_name(const Target& t);
// A lab's server ("redis", "redis-replica", "redis-cache") rather than a role, PostgreSQL or "clients".
bool is_redis_server(FaultTarget t);
// Why `action` cannot act on a target of this kind ("failover acts on \"redis\""), or nullopt.
std::optional<std::string> fault_target_refusal(FaultAction action, FaultTarget target);
// A target the lab must also have for `action` (redis_replica for failover), or nullopt.
std::optional<FaultTarget> fault_action_needs(FaultAction action);
// The action acts on a role's link to a server (delay, blackhole, heal): the real backend puts a
// TCP proxy between every role of such a lab and its servers.
bool acts_on_link(FaultAction action);
bool faults_act_on_links(const std::vector<FaultSpec>& faults);
// Whose errors the roles see when `action` hits a target of this kind.
FaultOutage fault_outage(FaultAction action, FaultTarget target);
// The kind of target faults[index] acts on: its own, or through target_of that of an earlier fault.
FaultTarget fault_target_of(const std::vector<FaultSpec>& faults, size_t index);
// Some fault of the schedule makes the roles see this server's errors.
bool faults_cause(const std::vector<FaultSpec>& faults, FaultOutage outage);

}  // namespace relab
