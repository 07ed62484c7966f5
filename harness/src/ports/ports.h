// The only surface role code (producer, consumer, ...) may touch. The real backend implements
// these over hiredis/libpqxx/steady_clock; the simulator implements them on virtual time. Role
// code that reaches around them cannot be replayed, so it must not.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ports/history_op.h"
#include "ports/write_mode.h"

namespace relab {

using Nanos = std::chrono::nanoseconds;
using Millis = std::chrono::milliseconds;
using Micros = std::chrono::microseconds;

// Monotonic time. now() is absolute on the backend's own scale; history times are rebased to the
// trial's origin afterwards, so roles never need to agree on an origin while they run.
class Clock {
public:
    virtual ~Clock() = default;
    virtual Nanos now() = 0;
    virtual void sleep_for(Nanos d) = 0;
};

// Every random choice a role makes. Seeded per trial and per actor, so a trial replays exactly.
class Rng {
public:
    virtual ~Rng() = default;
    // Uniform integer in [lo, hi], both inclusive.
    virtual int64_t uniform(int64_t lo, int64_t hi) = 0;
};

using Fields = std::vector<std::pair<std::string, std::string>>;

struct StreamEntry {
    std::string id;  // "1792591449272-0"
    Fields fields;
    int64_t deliveries = 0;  // the group's delivery count after this delivery (1: first); 0: not read by a group
    std::string field(const std::string& name) const;
};

// The Redis Streams commands the roles need. Key names are the lab's logical names ("orders");
// the backend maps them into the run's namespace.
class Stream {
public:
    virtual ~Stream() = default;
    // XADD stream * fields... for each batch member, sent back to back in one round trip.
    // Returns the entry IDs in order.
    virtual std::vector<std::string> xadd(const std::string& stream, const std::vector<Fields>& batch) = 0;
    // XADD stream IDMP producer_id iid * fields... (Redis 8.6): a (producer_id, iid) pair the stream
    // has seen adds nothing and answers the entry it added then. Default: std::logic_error.
    virtual std::string xadd_idmp(const std::string& stream, const Fields& fields, const std::string& producer_id,
                                  const std::string& iid);
    // XREADGROUP GROUP g c COUNT n BLOCK ms STREAMS s >. Empty when the block ran out or was
    // interrupted.
    virtual std::vector<StreamEntry> xreadgroup(const std::string& group, const std::string& consumer,
                                                const std::string& stream, int count, Millis block) = 0;
    // The recovery commands' defaults throw std::logic_error ("... not supported by this backend").
    // XREADGROUP GROUP g c COUNT n STREAMS s <after>: this consumer's own pending entries with IDs
    // after `after` ("0": all), oldest first, without blocking (a restarted worker's first read).
    // Redis counts each as delivered again.
    virtual std::vector<StreamEntry> xreadgroup_pending(const std::string& group, const std::string& consumer,
                                                        const std::string& stream, int count,
                                                        const std::string& after);
    // XAUTOCLAIM s g consumer min-idle start COUNT n: entries pending longer than min_idle, now
    // this consumer's, with their delivery counts. `next` is the cursor ("0-0": the scan ended).
    struct AutoClaimed {
        std::string next;
        std::vector<StreamEntry> claimed;
        std::vector<std::string> deleted;  // pending IDs no longer in the stream
    };
    virtual AutoClaimed xautoclaim(const std::string& stream, const std::string& group, const std::string& consumer,
                                   Millis min_idle, const std::string& start, int count);
    // XGROUP CREATE stream group start MKSTREAM: false when the group exists (BUSYGROUP).
    virtual bool create_group(const std::string& stream, const std::string& group, const std::string& start);
    // Every entry now in the stream delivered to the group and acknowledged (XINFO GROUPS: pending
    // 0, last-delivered-id at the stream's last entry); a missing stream has nothing left. What
    // S2's draining router waits for before it reshards.
    virtual bool group_drained(const std::string& stream, const std::string& group);
    virtual void xack(const std::string& stream, const std::string& group, const std::string& id) = 0;
    // XACK s g id1 id2 ...: one call for every entry of a read (stream.ack "batch"). Default: one
    // xack per ID.
    virtual void xack_all(const std::string& stream, const std::string& group, const std::vector<std::string>& ids);
    virtual std::vector<StreamEntry> xrange(const std::string& stream) = 0;
    // Start barrier: returns once `readers` consumers of this trial are blocked in XREADGROUP.
    virtual void wait_readers_blocked(int readers, Millis timeout) = 0;
};

// SET's options as the idempotency middleware uses them (SET key value [NX|XX] [GET] [EX|PX ttl | KEEPTTL]).
struct KvSetOptions {
    enum class Condition { always, nx, xx };
    Condition condition = Condition::always;
    Millis ttl{0};         // EX (whole seconds) or PX; zero: no expiry option
    bool keepttl = false;  // KEEPTTL: keep the key's current expiry
    bool get = false;      // GET: reply with the old value
};

struct KvSetResult {
    bool written = false;                 // the value was stored
    std::optional<std::string> previous;  // with get: the old value; nullopt when there was none
};

// A Kv call failed. What a lab may make of it depends on why: the caller decides by kind().
class KvError : public std::runtime_error {
public:
    enum class Kind {
        reply,        // the server answered with an error reply (OOM, READONLY, WRONGTYPE): its own answer
        unavailable,  // no answer: the connection was refused or lost, or the reply timed out
        unexpected,   // a reply relab cannot read, or relab's own misuse: a harness bug, never a result
    };
    KvError(Kind kind, const std::string& what) : std::runtime_error(what), m_kind(kind) {}
    Kind kind() const { return m_kind; }

private:
    Kind m_kind;
};

std::string to_string(KvError::Kind k);  // "reply" | "unavailable" | "unexpected"

// The harness itself failed: a client, store or server failure that no scheduled fault of the lab
// explains. The trial cannot be judged; the run ends with exit status 2 and this message, which
// names the failure and what to check. Never counted as a lab's result.
class HarnessError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// String keys with expiry: locks, control flags and idempotency keys. Calls throw KvError.
class Kv {
public:
    virtual ~Kv() = default;
    // SET key value NX PX ttl; true when the key was set.
    virtual bool set_nx_px(const std::string& key, const std::string& value, Millis ttl) = 0;
    // Deletes key only while it still holds token (DELEX IFEQ or the compare-and-delete script).
    // Returns the number of keys deleted: 1, or 0 when the key expired or belongs to someone else.
    virtual int64_t delete_if_equals(const std::string& key, const std::string& token) = 0;
    // How delete_if_equals is done on this server, for the report: "DELEX IFEQ" or
    // "compare-and-delete Lua script" (servers before 8.4).
    virtual std::string delete_if_equals_method() const = 0;
    virtual bool exists(const std::string& key) = 0;
    // The idempotency labs' commands. The defaults throw std::logic_error("... not supported by
    // this backend"), so a backend without them still compiles and fails loudly if a lab needs them.
    virtual KvSetResult set(const std::string& key, const std::string& value, const KvSetOptions& o);
    virtual std::optional<std::string> get(const std::string& key);
    virtual int64_t del(const std::string& key);  // keys removed: 0 or 1
    // WAIT numreplicas timeout: how many replicas acknowledged this connection's writes.
    virtual int64_t wait_replicas(int64_t replicas, Millis timeout);
};

// A state write to the consumer-side table tmp_orders.
struct OrderWrite {
    int64_t order = 0;
    std::string status;
    int64_t version = 0;
    WriteMode mode = WriteMode::plain;
    // Deduplicated by (order, event_version) through the inbox table tmp_inbox: BEGIN; INSERT INTO
    // tmp_inbox ... ON CONFLICT DO NOTHING; the UPDATE only when the insert added the row; COMMIT.
    bool dedupe = false;
    int64_t event_version = 0;  // the event's business version: the inbox key with `order`
    // P4: the event's change and the amount it carries (the order's amount after it), which the
    // mode's amount write applies (AmountWrite::add the delta, set the amount).
    int64_t delta = 0;
    int64_t amount = 0;
};

struct WriteResult {
    int64_t affected = 0;
    std::string sql;  // the statement as it would be typed in psql, for the timeline
    bool duplicate = false;  // dedupe: the inbox already had (order, event_version); nothing was written
    // upsert and insert_then_update: what happened to the row, "inserted", "updated" or "none"
    // (refused by the version guard, or no row); empty for plain and cas.
    std::string row_action;
    bool insert_conflict = false;  // insert_then_update: the INSERT failed with 23505 and the UPDATE ran
};

// A row of tmp_side_effects: one side effect (an email, a webhook) a consumer sent after its job,
// numbered by the table's bigserial in the order they were sent.
struct SideEffectRow {
    int64_t seq = 0;
    int64_t order = 0;
    std::string event_type;
    int64_t version = 0;
    bool operator==(const SideEffectRow&) const = default;
};

struct OrderRow {
    // A constructor, not an aggregate: the rows of every lab but P4's name only (id, status, version).
    OrderRow() = default;
    OrderRow(int64_t id_, std::string status_, int64_t version_, int64_t amount_ = 0)
        : id(id_), status(std::move(status_)), version(version_), amount(amount_) {}
    int64_t id = 0;
    std::string status;
    int64_t version = 0;
    int64_t amount = 0;  // P4's labs: the order's amount (0 where no write touches it)
};

// An OrderStore or Outbox call found no database: the connection was refused or lost (a killed
// or restarting PostgreSQL). The statement, or the transaction it was part of, did not happen,
// except that a COMMIT whose connection broke may have committed. The next call connects again.
// Any other database error is the backend's own exception: the harness's failure.
class StoreUnavailable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The database refused a statement or COMMIT of a job's transaction with SQLSTATE 40001: another
// transaction changed what this one read after its snapshot (write.isolation repeatable_read or
// serializable). The transaction is aborted; the caller rolls it back and may run it again.
class SerializationFailure : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The consumer side's PostgreSQL table, in the lab's vocabulary.
class OrderStore {
public:
    virtual ~OrderStore() = default;
    // write_state inside begin_job's transaction runs in it. Throws SerializationFailure (40001).
    virtual WriteResult write_state(const OrderWrite& w) = 0;
    // write.isolation: BEGIN ISOLATION LEVEL <level>; SELECT version FROM tmp_orders WHERE id = <order>,
    // which takes the transaction's snapshot. The version it read; nullopt: no such row. The
    // transaction lasts until commit_job (which may throw SerializationFailure) or rollback_job
    // (which never throws: a lost connection took the transaction with it). The defaults throw
    // std::logic_error ("... not supported by this backend").
    virtual std::optional<int64_t> begin_job(WriteIsolation level, int64_t order);
    virtual void commit_job();
    virtual void rollback_job();
    // write.commit "batch": the writes of one read (plain or CAS) in one transaction, sent as one
    // multi-statement query: one round trip, every write or none. A result per write, in order.
    // The default throws std::logic_error ("... not supported by this backend").
    virtual std::vector<WriteResult> write_states(const std::vector<OrderWrite>& ws);
    virtual std::vector<OrderRow> rows() = 0;
    // The job's side effect (write.side_effect): INSERT INTO tmp_side_effects ... RETURNING seq.
    // The defaults throw std::logic_error ("... not supported by this backend").
    virtual int64_t send_side_effect(int64_t order, const std::string& event_type, int64_t version);
    // Every side effect sent, by seq.
    virtual std::vector<SideEffectRow> side_effects();
};

// A row of the source system's outbox (tmp_outbox).
struct OutboxRow {
    int64_t id = 0;
    int64_t aggregate_id = 0;  // the order
    std::string type;
    int64_t version = 0;
    int attempts = 0;          // failed publish attempts so far
};

enum class OutboxOrder { by_id, by_aggregate_then_id };

// What one claim may take (Outbox::claim_next): any unpublished row, or only an aggregate's first
// unpublished row (per-key exclusion: while another dispatcher holds an aggregate's first row, the
// rows behind it are no one's to take).
enum class ClaimScope { row, aggregate_head };

// The source system's side in PostgreSQL: tmp_src_orders and tmp_outbox.
class Outbox {
public:
    virtual ~Outbox() = default;
    // UPDATE tmp_src_orders + INSERT INTO tmp_outbox in one transaction; returns the outbox id.
    virtual int64_t record_change(int64_t order, const std::string& status, int64_t version) = 0;
    // SELECT ... WHERE published_at IS NULL ORDER BY id (or aggregate_id, id).
    virtual std::vector<OutboxRow> unpublished(OutboxOrder order) = 0;
    virtual void mark_published(int64_t id, const std::string& entry_id) = 0;
    virtual void count_failed_attempt(int64_t id) = 0;
    // A dispatcher round as one transaction: BEGIN, then unpublished() locks the rows it returns
    // (FOR UPDATE), and the round's marks and counts commit together at commit_round(), or not at
    // all when the connection is lost first. The defaults throw std::logic_error.
    virtual void begin_round();
    virtual void commit_round();
    // Inside begin_round()'s transaction: the first unpublished row by id that no other open
    // transaction has locked, locked until commit_round() (SELECT ... ORDER BY id LIMIT 1 FOR UPDATE
    // SKIP LOCKED). ClaimScope::aggregate_head takes only rows with no earlier unpublished row of
    // their aggregate. Passed over: rows whose id (row) or aggregate (aggregate_head) is in `skip`.
    // nullopt: nothing to claim now. The default throws std::logic_error.
    virtual std::optional<OutboxRow> claim_next(ClaimScope scope, const std::vector<int64_t>& skip);
};

// A row of the idempotency labs' orders table: one per order the business logic placed.
struct PlacedOrder {
    int64_t id = 0;
    int64_t user_id = 0;
    std::string idem_key;  // "<user_id>:<client key>": the request's identity, as layer 4 indexes it
    std::string payload;
};

// Layer 4 (a unique index on orders(idem_key)) refused an insert: a duplicate was caught.
class DuplicateOrderError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The idempotency labs' orders table (article 002), in the lab's vocabulary.
class OrderTable {
public:
    virtual ~OrderTable() = default;
    // INSERT INTO orders ... RETURNING id. Throws DuplicateOrderError when layer 4 refuses it.
    virtual int64_t place_order(int64_t user_id, const std::string& idem_key, const std::string& payload) = 0;
    virtual std::vector<PlacedOrder> orders() = 0;
};

// A business event as carried in a stream entry: order, type, v (the version assigned when the
// event was created at the source). In a history record: {"order", "type", "v"}.
struct Event {
    // A constructor, not an aggregate: the many events without an amount name only (order, type, v).
    Event() = default;
    Event(int64_t order_, std::string type_, int64_t v_, std::optional<int64_t> delta_ = std::nullopt,
          std::optional<int64_t> amount_ = std::nullopt)
        : order(order_), type(std::move(type_)), v(v_), delta(delta_), amount(amount_) {}
    int64_t order = 0;
    std::string type;
    int64_t v = 0;
    // P4's labs: the change the event makes to the order's amount, and the amount after it (the
    // state it carries). Absent in every other lab; in an entry and a record only when present.
    std::optional<int64_t> delta;
    std::optional<int64_t> amount;
};

// One step of one actor. `data` carries the op's own fields (entry, event, affected, attempts...),
// the ones history_op.h lists for it.
//
// Two of them, "entry" and "event", most stream records carry, and the roles write them into
// `names` (RecordNames) rather than into `data`: a nested JSON object per record was the largest
// single cost of a simulated trial. Either place means the same field: read them with
// record_entry / record_event / record_field / record_has_fields, never from `data` alone. Every
// history that leaves the simulator (reports, timelines) has them in `data` again
// (fold_record_fields); to_json writes them from either place, so a role process's lines do too.
struct RecordNames {
    std::string entry;           // empty: none here
    std::optional<Event> event;  // nullopt: none here
};

struct HistoryRecord {
    HistoryRecord() = default;
    HistoryRecord(int trial_, int64_t t_ns_, std::string actor_, Op op_,
                  nlohmann::json data_ = nlohmann::json::object(), std::string entry_ = {},
                  std::optional<Event> event_ = std::nullopt)
        : trial(trial_), t_ns(t_ns_), actor(std::move(actor_)), op(op_), data(std::move(data_)) {
        if (!entry_.empty() || event_)
            names = std::make_shared<const RecordNames>(RecordNames{std::move(entry_), std::move(event_)});
    }

    int trial = 0;
    int64_t t_ns = 0;
    std::string actor;
    Op op = Op::start;
    nlohmann::json data = nlohmann::json::object();
    // The entry and event when not in data; null when both are in data or absent. Shared and
    // immutable: a copy of the record costs no copy of them, and a record read from JSON (the real
    // backend's every record) carries 16 bytes for them, not the 88 of the fields inline.
    std::shared_ptr<const RecordNames> names;
};

// {"trial", "t_us", "t_ns", "actor", "op": its name, and the data fields beside them}.
nlohmann::json to_json(const HistoryRecord& r);
// Throws std::invalid_argument for an op the table does not know. Every field lands in `data`.
HistoryRecord history_record_from_json(const nlohmann::json& j);

// The record's "entry" (a stream entry ID), wherever it is; empty when it has none or it is not text.
std::string_view record_entry(const HistoryRecord& r);
bool has_entry(const HistoryRecord& r);  // an "entry" field of any kind
// The record's "event" as (order, type, v), its type a view into the record: nullopt when it has
// none or it is not an object. An object lacking a member reads it as 0 or "" (a malformed record
// counts as "not that").
struct EventView {
    int64_t order = 0;
    std::string_view type;
    int64_t v = 0;
};
std::optional<EventView> record_event(const HistoryRecord& r);
nlohmann::json event_json(const Event& e);
// Any field by name as JSON, wherever it is; null when absent.
nlohmann::json record_field(const HistoryRecord& r, std::string_view key);
// `pattern` holds in the record's fields: objects key by key (recursively: a record's event may be
// named by its type alone), anything else by equality.
bool record_has_fields(const HistoryRecord& r, const nlohmann::json& pattern);
// Moves `entry` and `event` into `data`, as a history read from JSON has them.
void fold_record_fields(HistoryRecord& r);
void fold_record_fields(std::vector<HistoryRecord>& history);

class History {
public:
    virtual ~History() = default;
    virtual void record(HistoryRecord r) = 0;
};

struct RolePorts;

// Concurrency inside one role: S3's reader and its workers, one process. Each task runs `body` on
// ports of its own (its own Redis and PostgreSQL connections: a connection serves one task at a
// time), the role's clock and its history; its records name it by its actor name. The real
// backend runs a task as a thread of the role process (a SIGKILL of the role kills its tasks with
// it); the simulator as a fiber of the same scheduler (the nemesis kills it with its role). State
// the tasks share is the role's own, guarded by a mutex never held across a port call.
class Tasks {
public:
    using Body = std::function<void(RolePorts&)>;
    virtual ~Tasks() = default;
    // Starts `body` as a new task; `actor` names it in the history and on its connections ("C1.w2").
    virtual void spawn(const std::string& actor, Body body) = 0;
    // Waits until every task spawned has ended; then rethrows the first exception a task threw.
    virtual void join_all() = 0;
    // Whether a task has ended by an exception (join_all will rethrow it): the role should stop.
    virtual bool failed() = 0;
};

// Everything one role gets. Roles are plain functions of this.
struct RolePorts {
    Clock& clock;
    Rng& rng;
    Stream& stream;
    Kv& kv;
    OrderStore& orders;
    Outbox& outbox;
    History& history;
    OrderTable* order_table = nullptr;  // the idempotency labs' orders; null where no lab needs it
    Tasks* tasks = nullptr;             // tasks inside the role (S3's workers); null where none can be spawned
};

}  // namespace relab
