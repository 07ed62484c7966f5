// The stream labs' settings as plain data, each struct followed by its description
// (describe/describe.h): the stream and its group, the orders and events, how a consumer writes,
// its lock, reorder buffer and fan-out. The loader, the role settings, scenarios/schema.json and a
// scenario written back to JSON all walk these descriptions: a new field is a member and its line
// in its struct's description. The publishing side is publish_spec.h, a generated workload and
// the simulator's timing workload_spec.h.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "describe/describe.h"
#include "ports/ports.h"
#include "ports/write_mode.h"
#include "util/enum_names.h"

namespace relab {

// Where the consumer's CAS takes its version from.
enum class VersionSource { event, entry_id };
inline constexpr EnumName<VersionSource> k_version_sources[] = {{VersionSource::event, "event"},
                                                                {VersionSource::entry_id, "entry_id"}};
constexpr const auto& enum_names(VersionSource) { return k_version_sources; }

struct StreamSpec {
    std::string key = "orders";
    std::string group = "order-processor";
    int read_count = 1;       // XREADGROUP COUNT
    int64_t block_ms = 2000;  // XREADGROUP BLOCK; 0 is not allowed (would block forever)
    // When a consumer acknowledges: each entry once its job is over (XACK per entry), or every entry
    // of a read with one XACK once the read's last job is over (a consumer killed mid-read gets the
    // read's finished jobs again).
    enum class Ack { each, batch };
    Ack ack = Ack::each;
    // Once the publishing roles are done, the trial ends after this long with nothing moving (no
    // history record): what is still pending or never delivered is then the trial's result.
    int64_t quiet_ms = 10'000;
    // A trial whose group has not drained this long after its origin ends there, and what it left
    // pending or undelivered is its result (a poison entry claimed over and over keeps the trial
    // moving, so quiet_ms never ends it). 0: no such deadline.
    int64_t deadline_ms = 0;
    bool operator==(const StreamSpec&) const = default;
};
inline constexpr EnumName<StreamSpec::Ack> k_stream_acks[] = {{StreamSpec::Ack::each, "each"},
                                                              {StreamSpec::Ack::batch, "batch"}};
constexpr const auto& enum_names(StreamSpec::Ack) { return k_stream_acks; }

// The state an order must end in: its status and, where a lab states it (P4's labs), its amount.
// Scenario files write it as "paid" or {"status": "paid", "amount": 30}.
struct FinalState {
    std::string status;
    std::optional<int64_t> amount = std::nullopt;
    bool matches(const OrderRow& row) const { return row.status == status && (!amount || row.amount == *amount); }
    std::string describe() const;  // "paid", or "paid, amount 30"
    bool operator==(const FinalState&) const = default;
};
// A row as a final state reads: "paid", or "paid, amount 30" when `with_amount`.
std::string row_state_text(const OrderRow& row, bool with_amount);

struct OrderSpec {
    int64_t id = 42;
    std::string initial_status = "new";
    int64_t initial_version = 0;
    FinalState expected_final{"paid"};  // a trial whose final state differs is wrong
    // No row for this order before the trial ("absent": true): its first write must create it
    // (write mode upsert or insert_then_update); initial_status and initial_version do not apply.
    bool absent = false;
    bool operator==(const OrderSpec&) const = default;
};

struct EventSpec {
    int64_t order = 42;
    std::string type;     // "created", "paid", ...
    int64_t version = 0;  // the business version assigned when the event was created
    int64_t at_ms = 0;    // when the producer publishes it, from the trial origin; events due at
                          // the same time go out back to back (one XADD after the other)
    // This event's job cost in µs, drawn by a generated workload ("generate": {"job_cost": ...});
    // -1: the lab's job_cost_ms for its type.
    int64_t cost_us = -1;
    // P4's labs: the change the event makes to its order's amount, as the scenario gives it, and the
    // amount after it, which the loader computes by adding the order's changes in version order (the
    // state the event carries). Both absent in every other lab.
    std::optional<int64_t> delta = std::nullopt;
    std::optional<int64_t> amount = std::nullopt;
    // A poison entry: the job of this event fails on every delivery (the consumer records a
    // job_fail, does not write and does not acknowledge it).
    bool fails = false;
    bool operator==(const EventSpec&) const = default;
};

struct LockSpec {
    bool enabled = false;
    std::string key = "lock:order:{order}";  // {order} is replaced by the event's order id
    int64_t ttl_ms = 5000;                   // SET ... NX PX ttl_ms
    int64_t retry_ms = 20;                   // sleep between failed attempts
    desc::Range skew_ms;                 // a delay before the first attempt, drawn uniformly; [0, 0]: none
    bool operator==(const LockSpec&) const = default;
};

// P3, a reorder buffer in the consumer: an event is applied only when its version is the order's
// last applied version + 1; a later one is held (not acknowledged) until the gap is filled, or
// until it has waited gap_timeout_ms, when the buffer gives up on the gap and applies it.
struct BufferSpec {
    bool enabled = false;
    int64_t gap_timeout_ms = 0;  // 0: wait for the gap forever
    // An event older than what was applied (it arrives after the buffer gave up on it): dropped
    // (acknowledged, never applied) or applied anyway (and the order goes back to it).
    enum class Late { drop, apply };
    Late late = Late::drop;
    bool operator==(const BufferSpec&) const = default;
};
inline constexpr EnumName<BufferSpec::Late> k_buffer_lates[] = {{BufferSpec::Late::drop, "drop"},
                                                                {BufferSpec::Late::apply, "apply"}};
constexpr const auto& enum_names(BufferSpec::Late) { return k_buffer_lates; }

// S3, worker per key (article 000, solution 3: "đọc tuần tự rồi fan-out trong RAM theo khoá"): the
// consumer process is one reader and `workers` worker tasks. The reader XREADGROUPs and puts each
// entry on an in-memory FIFO; a worker takes a job, runs it (cost, write) and XACKs it only then.
// per_key: one FIFO per order, and an order is worked on by one worker at a time, so its events
// run in stream order while other orders run beside it. any_worker: one FIFO for every order,
// any free worker takes its head (no per-key exclusion: what per-key order rests on).
struct FanoutSpec {
    enum class Dispatch { per_key, any_worker };
    bool enabled = false;
    int workers = 0;
    int64_t poll_ms = 1;  // an idle worker looks at the FIFOs again after this long
    Dispatch dispatch = Dispatch::per_key;
    bool operator==(const FanoutSpec&) const = default;
};
inline constexpr EnumName<FanoutSpec::Dispatch> k_fanout_dispatches[] = {{FanoutSpec::Dispatch::per_key, "per_key"},
                                                                         {FanoutSpec::Dispatch::any_worker, "any_worker"}};
constexpr const auto& enum_names(FanoutSpec::Dispatch) { return k_fanout_dispatches; }

// Whether the consumer deduplicates the events it applies.
enum class WriteDedupe {
    none,               // every entry's write is applied
    aggregate_version,  // an inbox table keyed by (aggregate, version): INSERT ... ON CONFLICT DO NOTHING in
                        // the write's transaction; an event already applied is skipped (a republished row)
};
inline constexpr EnumName<WriteDedupe> k_write_dedupes[] = {{WriteDedupe::none, "none"},
                                                            {WriteDedupe::aggregate_version, "aggregate_version"}};
constexpr const auto& enum_names(WriteDedupe) { return k_write_dedupes; }

struct WriteSpec {
    WriteMode mode = WriteMode::plain;
    VersionSource version_source = VersionSource::event;
    // After each job's write, applied or not, the consumer sends the event's side effect (an email,
    // a webhook): a row of tmp_side_effects (seq bigserial, order_id, event_type, version, sent_at).
    bool side_effect = false;
    WriteDedupe dedupe = WriteDedupe::none;
    // each: every write its own autocommit statement, one round trip per event (the articles'
    // consumers). batch: the writes of one read in one transaction, sent as one multi-statement
    // query after the read's jobs ran: one round trip per read, and every write of the read or none.
    enum class Commit { each, batch };
    Commit commit = Commit::each;
    // The transaction the job runs in (ports/write_mode.h): none, or BEGIN ISOLATION LEVEL …, the
    // row's version read, the job, the UPDATE, COMMIT.
    WriteIsolation isolation = WriteIsolation::none;
    // How many times a job's transaction refused with 40001 runs again (job and all) before the
    // consumer gives up and acknowledges the entry unwritten; only with an isolation.
    int serialization_retries = 3;
    bool operator==(const WriteSpec&) const = default;
};
inline constexpr EnumName<WriteSpec::Commit> k_write_commits[] = {{WriteSpec::Commit::each, "each"},
                                                                  {WriteSpec::Commit::batch, "batch"}};
constexpr const auto& enum_names(WriteSpec::Commit) { return k_write_commits; }

std::string to_string(VersionSource v);      // "event" | "entry_id"
std::string to_string(WriteSpec::Commit c);  // "each" | "batch"
std::string to_string(WriteDedupe d);        // "none" | "aggregate_version"

namespace desc {

template <>
struct Described<StreamSpec> {
    static constexpr std::string_view def = "stream";
    static constexpr std::string_view doc = "The Redis stream and consumer group the lab uses.";
    static constexpr auto fields = std::tuple{
        field("key", &StreamSpec::key,
              "The stream's key (under the run's prefix). A sharded lab names its streams with /shard/key_format instead."),
        field("group", &StreamSpec::group, "The consumer group."),
        field("read_count", &StreamSpec::read_count, "XREADGROUP COUNT: entries per read.").at_least(1),
        field("block_ms", &StreamSpec::block_ms,
              "XREADGROUP BLOCK, in milliseconds; 0 is not allowed (it would block forever).").at_least(1).of(Unit::ms),
        field("quiet_ms", &StreamSpec::quiet_ms,
              "The trial ends when nothing has moved for this long (no history record from any role, no ack) once "
              "the publishing roles are done, even with entries still pending or never delivered: they are then "
              "counted in the accounting (`pending`, `never_delivered`) and judged by the expectation, a result and "
              "not relab's failure. It must exceed the longest quiet stretch of a run that goes on (a job's cost, a "
              "claim's wait): one no longer than `recovery.autoclaim`'s min_idle_ms + every_ms is refused.")
            .in(1, 50'000).of(Unit::ms),
        field("deadline_ms", &StreamSpec::deadline_ms,
              "A trial whose group has not drained this long after its origin ends there, and what it left pending "
              "or never delivered is counted in the accounting and judged by the expectation (a poison entry claimed "
              "over and over keeps the trial moving, so quiet_ms never ends it). 0 (default): no deadline.")
            .in(0, 60'000).of(Unit::ms),
        field("ack", &StreamSpec::ack,
              "When a consumer acknowledges: \"each\" (default) sends XACK for an entry once its job is over; "
              "\"batch\" sends one XACK for every entry of a read once the read's last job is over (a consumer killed "
              "mid-read gets the read's finished jobs again). Not with fanout."),
    };
};

// "paid", or {"status": "paid", "amount": 30}.
template <>
struct Codec<FinalState> {
    static FinalState read(const Reader& r, const json& v, const std::string& path, const Limits&, Read);
    static json write(const FinalState& f, Write);
    static void schema(ordered_json& p, const Limits&) { p["$ref"] = "#/$defs/finalState"; }
    static constexpr bool has_default = true;
};

template <>
struct Described<OrderSpec> {
    static constexpr std::string_view def = "order";
    static constexpr std::string_view doc = "One order row of tmp_orders.";
    static constexpr auto fields = std::tuple{
        field("id", &OrderSpec::id, "The order's id (required, unique within the lab).").at_least(0).must().example("[42]"),
        field("initial_status", &OrderSpec::initial_status, "The row's status before the trial. Not with \"absent\": true."),
        field("initial_version", &OrderSpec::initial_version,
              "The row's version before the trial. Not with \"absent\": true.").at_least(0),
        field("expected_final", &OrderSpec::expected_final,
              "The state the order must end in; a trial whose final state differs is wrong. A status (\"paid\"), or "
              "{\"status\", \"amount\"} to check the order's amount too (P4's labs)."),
        field("absent", &OrderSpec::absent,
              "true: no row before the trial; its first write creates it (needs \"write\": {\"mode\": \"upsert\"} or "
              "\"insert_then_update\", and no dispatcher)."),
    };
    static void check(const Object& o, OrderSpec& order);
};

template <>
struct Described<EventSpec> {
    static constexpr std::string_view def = "event";
    static constexpr std::string_view doc = "One event the producer (or the outbox's source app) publishes.";
    static constexpr auto fields = std::tuple{
        field("order", &EventSpec::order, "The order it belongs to: one of /orders' ids (required).").must(),
        field("type", &EventSpec::type, "The event's type, e.g. \"created\", \"paid\" (required).")
            .must()
            .example(R"(["paid"])"),
        field("version", &EventSpec::version,
              "The business version assigned when the event was created (required).").at_least(0).must(),
        field("at_ms", &EventSpec::at_ms,
              "When it is published, in milliseconds from the trial origin; events due at the same time go out back "
              "to back, in file order.").at_least(0).of(Unit::ms),
        field("cost_us", &EventSpec::cost_us, "The job's cost drawn by a generated workload; -1: job_cost_ms's.")
            .of(Unit::us)
            .derived(),
        field("delta", &EventSpec::delta,
              "P4's labs: the change the event makes to its order's amount (negative: a removal). If one event has "
              "it, every event must (0 for none), and an order's versions must be distinct. The entry then carries it "
              "and the order's amount after it (the deltas added up in version order from 0, never below 0): write "
              "mode delta applies the change, cas_state the amount.")
            .in(-k_int_max, k_int_max)
            .example("[30, -30]"),
        field("amount", &EventSpec::amount, "The order's amount after this event (the loader adds the deltas up).")
            .derived(),
        field("fails", &EventSpec::fails,
              "A poison entry: this event's job fails on every delivery (the consumer records job_fail, writes nothing "
              "and does not acknowledge it; with recovery.max_deliveries it is dead-lettered at the cap)."),
    };
};

template <>
struct Described<WriteSpec> {
    static constexpr std::string_view def = "write";
    static constexpr std::string_view doc = "How a consumer writes the event to tmp_orders.";
    static constexpr auto fields = std::tuple{
        field("mode", &WriteSpec::mode,
              "plain (UPDATE status, version), cas (S5: UPDATE … WHERE version < $v), upsert (INSERT … ON CONFLICT (id) "
              "DO UPDATE … WHERE tmp_orders.version < EXCLUDED.version), insert_then_update (INSERT, and on 23505 a "
              "plain UPDATE), delta (P4's contrast: UPDATE status, amount = amount + the event's delta, a removal "
              "refused when the amount is smaller) or cas_state (P4: UPDATE status, amount = the amount the event "
              "carries, version … WHERE version < $v). delta and cas_state need events with a delta."),
        field("version_source", &WriteSpec::version_source,
              "Where the CAS takes its version from: the event's business version (event, the default) or the stream "
              "entry ID (entry_id, needs mode cas)."),
        field("side_effect", &WriteSpec::side_effect,
              "true: after each job's write, applied or not, the consumer sends the event's side effect (a row of "
              "tmp_side_effects)."),
        field("dedupe", &WriteSpec::dedupe,
              "none (default) or aggregate_version: an inbox table keyed by (aggregate, version), INSERT … ON CONFLICT "
              "DO NOTHING in the write's transaction; plain or cas writes only."),
        field("commit", &WriteSpec::commit,
              "each (default): every write its own autocommit statement, one round trip per event. batch: the writes "
              "of one read in one transaction, sent as one multi-statement query once the read's jobs ran (one round "
              "trip per read; every write of the read or none); plain or cas writes, no dedupe, side effect, lock, "
              "buffer or fanout. Each write record then has \"batch\": the number of writes in its transaction."),
        field("isolation", &WriteSpec::isolation,
              "The transaction each job runs in. Absent (or none): every statement its own autocommit transaction, as "
              "the articles' consumers. read_committed, repeatable_read, serializable: BEGIN ISOLATION LEVEL …; SELECT "
              "version FROM tmp_orders WHERE id = $id (the snapshot); the job; the UPDATE; COMMIT, as application code "
              "that reads then writes does. Under repeatable_read and serializable PostgreSQL refuses the UPDATE (or "
              "COMMIT) of a row another consumer changed after the snapshot with SQLSTATE 40001 (a "
              "serialization_failure record): the transaction rolls back and runs again, job and all, before the "
              "XACK. An UPDATE mode only, no dedupe, batch commit or side effect. The simulator skips such labs."),
        field("serialization_retries", &WriteSpec::serialization_retries,
              "How many times a job's transaction refused with 40001 runs again before the consumer gives up and "
              "acknowledges the entry unwritten (lost: a consumer that logs the error and moves on). Needs isolation.")
            .in(0, 100),
    };
    static void check(const Object& o, WriteSpec& w);
};

template <>
struct Described<LockSpec> {
    static constexpr std::string_view def = "lock";
    static constexpr std::string_view doc =
        "A per-order lock around each job (S4): SET key token NX PX ttl_ms, released by compare-and-delete. null or "
        "absent: no lock.";
    static constexpr auto presence = &LockSpec::enabled;
    static constexpr auto fields = std::tuple{
        field("key", &LockSpec::key, "The lock's key; {order} is replaced by the event's order id."),
        field("ttl_ms", &LockSpec::ttl_ms, "The lock's TTL (SET … PX), in milliseconds.").at_least(1).of(Unit::ms),
        field("retry_ms", &LockSpec::retry_ms, "Sleep between failed attempts, in milliseconds.").at_least(1).of(Unit::ms),
        field("skew_ms", &LockSpec::skew_ms,
              "[min, max]: a random delay before the first attempt, drawn uniformly, in milliseconds; [0, 0] is none.")
            .at_least(0)
            .of(Unit::ms),
    };
};

template <>
struct Described<BufferSpec> {
    static constexpr std::string_view def = "buffer";
    static constexpr std::string_view doc =
        "P3, a reorder buffer in the consumer: an event is applied only when its version is the order's last applied "
        "version + 1; a later one is held until the gap is filled. Needs \"consumers\": 1; not with \"fanout\". null or "
        "absent: no buffer; {} a buffer with the defaults.";
    static constexpr auto presence = &BufferSpec::enabled;
    static constexpr auto fields = std::tuple{
        field("gap_timeout_ms", &BufferSpec::gap_timeout_ms,
              "How long a held event waits for the gap, in milliseconds; then the buffer gives up on it and applies "
              "the event. 0: wait forever.").at_least(0).of(Unit::ms),
        field("late", &BufferSpec::late,
              "An event older than what was applied (it came after the buffer gave up on it): drop (the default: "
              "acknowledged, never applied) or apply."),
    };
};

template <>
struct Described<FanoutSpec> {
    static constexpr std::string_view def = "fanout";
    static constexpr std::string_view doc =
        "S3, worker per key: each consumer process is one reader and `workers` worker tasks fed by in-memory FIFOs. "
        "Not with \"buffer\". null or absent: none.";
    static constexpr auto presence = &FanoutSpec::enabled;
    static constexpr auto fields = std::tuple{
        field("workers", &FanoutSpec::workers, "Worker tasks per consumer (required).").in(1, 64).must(),
        field("poll_ms", &FanoutSpec::poll_ms,
              "An idle worker looks at the FIFOs again after this many milliseconds.").in(1, 1000).of(Unit::ms),
        field("dispatch", &FanoutSpec::dispatch,
              "per_key (the default: a FIFO per order, one worker on an order at a time) or any_worker (one FIFO, any "
              "free worker takes its head)."),
    };
};

}  // namespace desc

}  // namespace relab
