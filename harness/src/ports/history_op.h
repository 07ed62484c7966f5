// Every kind of history record, defined once: the op's name in the JSON history (and in a
// scenario's expectations and fault triggers), the data fields it may carry, and what it means.
// Roles, the backends and the nemesis write these; the checker, the accounting and the reporters
// read them; the scenario loader rejects an op, or a field of an op, that is not in this table.
//
// Adding an op: add it to `Op` and a row at the same place in k_ops (a static_assert checks the
// order), then record it where it happens and read it where it matters. Readers that switch on an
// Op without `default:` make the compiler name every place that has to decide about it.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace relab {

enum class Op {
    // the trial
    start,
    // stream labs
    publish,
    mark,
    outbox_insert,
    receive,
    ack,
    claim,
    error,
    group_created,
    lock_acquire,
    write,
    lock_release,
    buffer_hold,
    buffer_release,
    late,
    side_effect,
    reshard,
    dispatch,
    take,
    job_fail,
    dead_letter,
    serialization_failure,
    // the nemesis and relab's own records
    fault,
    observe,
    figure,
    // idempotency labs
    send,
    answer,
    business_error,
    order,
    release,
    wait,
    store,  // the last op: k_ops has a row for each up to here
};

struct OpInfo {
    Op op;
    std::string_view name;     // as the JSON history and the scenario files write it
    std::string_view fields;   // the data fields it may carry, space-separated
    std::string_view meaning;  // one line
};

inline constexpr std::array k_ops = {
    OpInfo{Op::start, "start", "",
           "the trial's origin (the producer, source app or runner after the start barrier); times count from it"},
    OpInfo{Op::publish, "publish",
           "event attempt result reason retry_in_ms entry round outbox_id stream shard reply_lost idmp idmp_known seen_by "
           "wait_acked wait_us not_replicated",
           "the producer or dispatcher tried an XADD of an event: result ok (entry), fail (reason) or wait; "
           "reply_lost: the XADD ran (entry) but its reply never came back; idmp: the XADD's IDMP iid, idmp_known: "
           "the stream answered an entry this event already had; seen_by: how relab knows of a program's publish "
           "(stream: its entry); wait_acked, wait_us: the replicas the WAIT after the XADD counted and its time; "
           "not_replicated: fewer than asked, so the XADD (entry) is not taken as published and is sent again"},
    OpInfo{Op::mark, "mark", "outbox_id entry round",
           "the dispatcher marked an outbox row published (UPDATE ... published_at) after its publish_ms; with "
           "mark \"round\" in the round's transaction, committed with it"},
    OpInfo{Op::outbox_insert, "outbox_insert", "outbox_id event",
           "the source app committed a state change and its outbox row in one transaction"},
    OpInfo{Op::receive, "receive", "entry event deliveries via deleted stream seen_by consumer",
           "a consumer got a stream entry (via new, pending or claim); deleted: the entry was gone; seen_by: how relab "
           "knows of a program's (pel: the group's pending list, trace: its own trace); consumer: its name in the "
           "group when not its actor (recovery.consumer_name \"per_process\")"},
    OpInfo{Op::ack, "ack", "entry stream batch seen_by",
           "a consumer XACKed an entry: its job is over (batch: the entries its one XACK acknowledged, with stream.ack "
           "\"batch\"; seen_by pel: the entry left a program's pending list, trace: its own trace)"},
    OpInfo{Op::claim, "claim", "claimed deleted deleted_count min_idle_ms key previous decision via ttl_ms error error_class",
           "stream: XAUTOCLAIM took over idle pending entries; idempotency: the middleware's SET NX GET claim of a key"},
    OpInfo{Op::error, "error", "error kind server round",
           "a role got a Redis or PostgreSQL error it rides out (a lab with a fault of that server; server: "
           "postgres, round: the dispatcher's)"},
    OpInfo{Op::group_created, "group_created", "group start",
           "a consumer created the consumer group again after NOGROUP (recovery.recreate_group)"},
    OpInfo{Op::lock_acquire, "lock_acquire", "key attempts ttl_ms event",
           "a consumer got the per-order lock (SET NX PX) after `attempts` tries"},
    OpInfo{Op::write, "write", "entry event status mode affected sql version delta amount row_action insert_conflict dedupe reason stream batch seen_by "
           "isolation attempts",
           "a consumer's state write to tmp_orders (plain, CAS, upsert or insert-then-update) and the rows it "
           "affected; delta (write mode delta): the change it added to the amount; amount (cas_state): the amount it set; row_action: inserted, updated or none; insert_conflict: the INSERT hit 23505 and an UPDATE "
           "followed; dedupe: applied, or skipped (reason) when tmp_inbox already had the event's (aggregate, version); "
           "batch (write.commit \"batch\"): the number of writes that committed with it in one transaction; seen_by trigger: "
           "a program's write, seen by relab's trigger on tmp_orders (sql: its statement); isolation (write.isolation): the "
           "level of the transaction that spanned the job, attempts: the tries it took to commit"},
    OpInfo{Op::lock_release, "lock_release", "key result method event held_ms ttl_ms",
           "a consumer's compare-and-delete of its lock: result 1, or 0 when it had expired or was taken"},
    OpInfo{Op::buffer_hold, "buffer_hold", "entry event waiting_for",
           "a consumer's reorder buffer (P3) held an event: its version is past the order's next (waiting_for)"},
    OpInfo{Op::buffer_release, "buffer_release", "entry event reason held_ms skipped",
           "the reorder buffer let a held event through: reason in_order (the gap was filled) or gap_timeout "
           "(it gave up on the versions in skipped)"},
    OpInfo{Op::late, "late", "entry event last_applied action",
           "the reorder buffer got an event older than what it applied (it gave up on it): action drop or apply"},
    OpInfo{Op::side_effect, "side_effect", "entry event order version seq applied",
           "a consumer sent its job's side effect (an email, a webhook) after the write, applied or not: a row of "
           "tmp_side_effects, seq its place in the table"},
    OpInfo{Op::reshard, "reshard", "from to at_event drain waited_ms moved_orders",
           "S2's router changed its number of shards from `from` to `to` before event at_event (1-based); with "
           "drain, after waiting waited_ms for every shard to drain; moved_orders: orders whose shard changed"},
    OpInfo{Op::dispatch, "dispatch", "entry event key ahead",
           "S3's reader put a received entry on an in-memory FIFO (key: the order, or 0 for the one shared FIFO); "
           "ahead: jobs before it on that FIFO, waiting or (per key) being run"},
    OpInfo{Op::take, "take", "entry event waited_ms",
           "an S3 worker (actor <reader>.w<n>) took a job off its FIFO after it waited waited_ms there; the job, its "
           "write and its XACK follow under the worker's name"},
    OpInfo{Op::job_fail, "job_fail", "entry event deliveries error stream",
           "a consumer's job failed (a poison entry, an event with \"fails\": true) on the entry's delivery "
           "`deliveries`: nothing written and no XACK, so the entry stays pending for the next claim"},
    OpInfo{Op::dead_letter, "dead_letter", "entry event deliveries dead_stream dead_entry stream",
           "a consumer gave up on a failing job at recovery.max_deliveries: it XADDed the entry's fields to the "
           "dead-letter stream (dead_stream, as dead_entry) and XACKed the entry"},
    OpInfo{Op::serialization_failure, "serialization_failure", "entry event attempt isolation snapshot_version error retry stream",
           "PostgreSQL refused the job's transaction (write.isolation) with SQLSTATE 40001 on its try `attempt`: "
           "another transaction changed the row after its snapshot (snapshot_version: the version it read). It was "
           "rolled back; retry true: the whole transaction, job and all, runs again before any XACK; false: "
           "write.serialization_retries ran out and the entry is acknowledged unwritten"},
    OpInfo{Op::fault, "fault",
           "action target fault name note phase text error key pttl_ms evicted_keys oom_errors policy db keys "
           "keys_before keys_after persistence restart_ms idem_keys_before idem_keys_after survived lost election primary_fault "
           "sentinels quorum down_after_ms new_primary switch_ms done_ms seen_by dropped killed consumer pending_dropped "
           "dropped_entries maxlen stream_len trimmed trimmed_entries shard slot node_timeout_ms old_master new_master",
           "a fault: the nemesis's invoke / ok / fail of a scheduled action, and what it did (the figures it "
           "left: keys a restart kept, keys a flood evicted, the key a killed client left; killed: a role's restart "
           "found it running and SIGKILLed it)"},
    OpInfo{Op::observe, "observe",
           "text key pttl_ms step masters cluster_state pair slots nodes same_slot same_node reply error_code load "
           "claims first "
           "errors keys_per_node set_calls_per_node nodes_used nodes_called busiest_node_pct streams consumer_group "
           "group pending undelivered drained deadline_passed deadline_ms error quiet_ms pel stream_deadline_ms shard "
           "killed outage_ms published failed_publishes applied_in_outage max_wait_ms max_gap_ms lost redelivered",
           "relab's own observation of the servers (a key a killed client left, a cluster's slots, a benchmark step; "
           "a soak lab's consumer_group at the trial's end: its pending entries, those never delivered, whether it "
           "drained and whether the soak's deadline passed first; group false: it was gone; error: unreadable; "
           "quiet_ms: a stream trial ended undrained after nothing moved for that long, pel: the IDs its group's "
           "pending entries list held then; stream_deadline_ms: it ended undrained at stream.deadline_ms; S2 under a "
           "shard_failover: each shard's figures across the outage, report/shard_facts.h)"},
    OpInfo{Op::figure, "figure", "name value unit tool ops_per_s fsync documented",
           "a measured figure of the benchmark (name, value, unit, the tool that measured it)"},
    OpInfo{Op::send, "send", "request user_id client_key payload attempt send",
           "a client sent a request (POST /orders with an Idempotency-Key)"},
    OpInfo{Op::answer, "answer", "request user_id attempt code body source branch",
           "a client got the middleware's answer: status code, body and where it came from (branch: a program "
           "middleware's own word on the branch it took, first or replay)"},
    OpInfo{Op::business_error, "business_error", "attempt reason", "the business logic threw (an injected failure)"},
    OpInfo{Op::order, "order", "order_id idem_key refused reason",
           "the business logic inserted an order, or layer 4 (the unique index) refused it"},
    OpInfo{Op::release, "release", "key deleted reason error error_class",
           "the middleware DELeted its claim after the business logic failed"},
    OpInfo{Op::wait, "wait", "after acked wanted timeout_ms key error error_class",
           "the middleware's WAIT for replicas after its claim or store"},
    OpInfo{Op::store, "store", "key written code body keepttl ttl_ms error error_class",
           "the middleware stored the answer (code, body) on its key (SET XX): phase 2"},
};

namespace history_op_detail {
constexpr bool rows_in_enum_order() {
    for (std::size_t i = 0; i < k_ops.size(); ++i)
        if (static_cast<std::size_t>(k_ops[i].op) != i) return false;
    return true;
}
}  // namespace history_op_detail
static_assert(history_op_detail::rows_in_enum_order(), "k_ops: one row per Op, in the enum's order");
static_assert(k_ops.size() == static_cast<std::size_t>(Op::store) + 1, "k_ops: a row for every Op");

inline const OpInfo& op_info(Op op) { return k_ops[static_cast<std::size_t>(op)]; }
std::string to_string(Op op);
// The op named `name` (as the history writes it), or nullopt.
std::optional<Op> op_named(std::string_view name);
// Every op's name, in the table's order: for error messages.
std::vector<std::string> op_names();
// The data fields `op` may carry, in the table's order.
std::vector<std::string> op_fields(Op op);
bool op_carries(Op op, std::string_view field);

}  // namespace relab
