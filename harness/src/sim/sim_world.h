// One trial's simulated world: the scheduler, the servers' state (stream, keys, tables) and the
// network between the roles and the servers. A port call from a role's fiber costs one round trip:
// its request reaches the server model half a round trip later, runs there atomically at that
// virtual instant, and the reply reaches the fiber after the other half. A reader that blocks in
// XREADGROUP waits at the server in FIFO order, like Redis's blocked clients, and the process
// needs a wake-up delay once the reply is there. Every latency is drawn from the schedule's seeded
// generator.
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ports/link_mode.h"
#include "ports/ports.h"
#include "scenario/scenario.h"
#include "sim/kv_model.h"
#include "sim/outbox_model.h"
#include "sim/placed_orders_model.h"
#include "sim/scheduler.h"
#include "sim/stream_model.h"
#include "sim/table_model.h"

namespace relab::sim {

// A simulated server's error that has no Redis or SQL reply of its own (a barrier timeout...).
class SimError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The scenario's timing ranges in nanoseconds.
struct Latency {
    Nanos rtt_min{0}, rtt_max{0};
    Nanos wakeup_min{0}, wakeup_max{0};
    Nanos start_min{0}, start_max{0};
    static Latency from(const SimSpec& s);
};

// One role's connection to the Redis model, shared by its Stream and Kv ports (as a role process
// has one). A connection open when the server was killed is dead: its next call fails once with
// "server closed the connection", and the call after that connects again (RedisLink's behaviour).
// Its link (LinkMode) is what the real backend's proxy does to the role's bytes: a blackhole holds
// a call before it leaves and its reply before it reaches the role, until the heal lets both go on
// (the request then runs at the server at the heal, as the bytes a proxy held arrive then); a
// delay holds each reply that long.
struct SimConnection {
    uint64_t epoch = 0;  // the server incarnation it was opened on
    bool open = false;
    LinkMode link{};
};

class SimWorld {
public:
    explicit SimWorld(size_t stack_bytes = 256 * 1024);
    SimWorld(const SimWorld&) = delete;
    SimWorld& operator=(const SimWorld&) = delete;

    // A fresh world at virtual time `start`: empty models, no fibers, the schedule generator
    // seeded with schedule_seed.
    void reset(const Latency& latency, Nanos start, uint64_t schedule_seed);

    Scheduler& scheduler() { return m_sched; }
    Nanos now() const { return m_sched.now(); }
    StreamModel& streams() { return m_streams; }
    KvModel& kv() { return m_kv; }
    TableModel& orders() { return m_orders; }
    OutboxModel& outbox() { return m_outbox; }
    // The deduplicating consumer's tmp_inbox: the (aggregate, version) pairs it has applied.
    std::set<std::pair<int64_t, int64_t>>& inbox() { return m_inbox; }
    // A transaction on `conn` is still open at the server: the connection is open on this
    // incarnation of a running PostgreSQL (a killed role's or server's connections are not).
    bool postgres_connection_live(const SimConnection& conn) const {
        return m_pg_up && conn.open && conn.epoch == m_pg_epoch;
    }
    // The idempotency labs' orders table (reset empty, without layer 4).
    PlacedOrdersModel& placed_orders() { return m_placed_orders; }

    Nanos draw_rtt();
    Nanos draw_wakeup();
    Nanos draw_start();

    // --- from a role's fiber ---
    // Runs op() at the server half a round trip from now; its result (or exception) comes back
    // to the caller after the other half.
    // Over `link` (a role's connection), the call and its reply go through the connection's link.
    template <class Op>
    auto round_trip(Op op, SimConnection* link = nullptr) -> decltype(op());
    // Several statements one after another, each its own round trip (BEGIN; ...; COMMIT): the
    // first `idle_trips` do nothing at the server, the last runs op().
    template <class Op>
    auto round_trips(int idle_trips, Op op, SimConnection* link = nullptr) -> decltype(op());
    // A role's link as a link fault sets it: a heal (no blackhole) lets the calls it held go on;
    // returns how many it let go.
    int64_t set_link(SimConnection& conn, const LinkMode& mode);
    // XADD, each batch member in turn; after each one the stream's blocked readers are served.
    std::vector<std::string> xadd(const std::string& key, const std::vector<Fields>& batch, SimConnection* conn = nullptr);
    // XADD key IDMP producer_id iid * fields (Redis 8.6's model): a pair seen before adds nothing.
    std::string xadd_idmp(const std::string& key, const Fields& fields, const std::string& producer_id,
                          const std::string& iid, SimConnection* conn = nullptr);
    // XREADGROUP ... BLOCK block: blocks at the server while the group has nothing new; empty on
    // timeout or CLIENT UNBLOCK. block 0 waits forever, as in Redis.
    std::vector<StreamEntry> xreadgroup(const std::string& key, const std::string& group, const std::string& consumer,
                                        int count, Millis block, SimConnection* conn = nullptr);
    // Returns once `readers` readers are blocked in XREADGROUP; SimError after `timeout`.
    void wait_readers_blocked(int readers, Millis timeout);
    // A sleeping process: wakes after d plus a wake-up delay.
    void sleep(Nanos d);

    // --- at the server, from the trial's supervisor (no network) ---
    // --- the Redis server model's faults (a lab's "redis" target) ---
    // SIGKILL: every blocked reader's connection closes (an error reply); calls are refused.
    void kill_redis();
    // Started again: with persistence (appendonly yes) it kept everything; without, it is empty.
    void start_redis(bool persistent);
    bool redis_up() const { return m_redis_up; }
    // The replica: it mirrors the primary at once while it is linked; paused (SIGSTOP) it keeps the
    // state of that moment, and a failover makes that state the server's. Resumed, it catches up
    // with a live primary; with the primary dead it stays as stale as it was.
    void pause_replica();
    void resume_replica();
    bool replica_paused() const { return m_replica_stopped; }
    // After kill_redis(): the replica becomes the primary, with what it had when it stopped.
    void promote_replica();
    // CLIENT KILL of one connection: a read blocked on it gets "connection closed" now; otherwise
    // its next call fails once, as a call on a connection the server closed does. False when it
    // was not open (nothing to close).
    bool drop_connection(SimConnection& conn);
    // A role's connection opened when its process starts (RedisLink connects in its constructor).
    void open_connection(SimConnection& conn) const {
        conn.open = true;
        conn.epoch = m_redis_epoch;
    }
    // Redis's side of a call: refused while the server is down, and a model's error reply as the
    // KvError (kind reply) a real client throws.
    template <class Op>
    auto at_redis(Op op, SimConnection* conn = nullptr) -> decltype(op());

    // --- the PostgreSQL model's faults (a lab's "postgres" target) ---
    // SIGKILL: every connection is closed (its next call fails once), calls are refused, and a
    // transaction not yet committed is gone with its connection.
    void kill_postgres();
    // Started again with every committed row: PostgreSQL replays its WAL (synchronous_commit on).
    void start_postgres();
    bool postgres_up() const { return m_pg_up; }
    // PostgreSQL's side of a statement: StoreUnavailable while the server is down or on a
    // connection it closed.
    template <class Op>
    auto at_postgres(Op op, SimConnection* conn) -> decltype(op());
    // A role's PostgreSQL connection, opened when its process starts (PgSession's constructor).
    void open_postgres_connection(SimConnection& conn) const {
        conn.open = true;
        conn.epoch = m_pg_epoch;
    }

    // A killed role's connection closing: its blocked XREADGROUP or barrier wait is dropped at
    // the server and the fiber woken, so it unwinds (Scheduler::kill).
    void drop_fiber(FiberId f);
    // CLIENT UNBLOCK of every blocked reader: each gets an empty reply.
    void unblock_all_readers();
    // Suspends the calling fiber until the next change to any stream or group.
    void wait_stream_change();
    // Counts a stream change (XADD, XACK, ...) and wakes whoever waits for one.
    void stream_changed();

private:
    struct BlockedRead;
    struct BarrierWait;

    static void blocked_read_at_server(void* ctx, uint64_t);
    static void blocked_read_timeout(void* ctx, uint64_t ticket);
    static void barrier_at_server(void* ctx, uint64_t);
    static void barrier_timeout(void* ctx, uint64_t);
    void serve_blocked(const std::string& key);
    void reply_blocked(BlockedRead& r, Nanos extra);
    void reader_blocked();
    Nanos uniform(Nanos lo, Nanos hi);
    // From a fiber: a call about to leave on `conn`, and its reply just back (SimConnection's link).
    void link_request(SimConnection* conn);
    void link_reply(SimConnection* conn);
    // From a fiber: `at_server` runs at the server `request_half` from now, and the fiber waits
    // until something (at_server itself, later) wakes it. With nothing else due before the
    // request arrives it runs at once, and with nothing due before the reply the fiber goes on
    // without a switch (Scheduler::run_next_here, Scheduler::suspend).
    void request(Nanos request_half, Scheduler::Action at_server, void* ctx) {
        m_sched.at(now() + request_half, at_server, ctx);
        m_sched.run_next_here(at_server, ctx);
        m_sched.suspend();
    }

    Scheduler m_sched;
    Latency m_latency;
    StreamModel m_streams;
    KvModel m_kv;
    TableModel m_orders;
    OutboxModel m_outbox;
    std::set<std::pair<int64_t, int64_t>> m_inbox;
    PlacedOrdersModel m_placed_orders;
    std::vector<std::pair<uint64_t, BlockedRead*>> m_blocked;  // ticket -> the parked call
    std::vector<std::pair<uint64_t, BarrierWait*>> m_barriers;  // id -> the waiting call
    uint64_t m_next_barrier = 1;
    std::vector<FiberId> m_change_waiters;
    std::vector<std::pair<FiberId, SimConnection*>> m_link_held;  // calls a blackholed link holds
    bool m_redis_up = true;
    uint64_t m_redis_epoch = 0;  // +1 on every kill: connections opened before are dead
    bool m_pg_up = true;
    uint64_t m_pg_epoch = 0;  // +1 on every kill: connections opened before are dead
    bool m_replica_frozen = false;   // it holds m_replica_streams/m_replica_kv, not the primary's state
    bool m_replica_stopped = false;  // SIGSTOP
    StreamModel m_replica_streams;
    KvModel m_replica_kv;
};

template <class Op>
auto SimWorld::at_redis(Op op, SimConnection* conn) -> decltype(op()) {
    if (conn && conn->open && conn->epoch != m_redis_epoch) {
        conn->open = false;
        throw relab::KvError(relab::KvError::Kind::unavailable, "server closed the connection");
    }
    if (!m_redis_up) throw relab::KvError(relab::KvError::Kind::unavailable, "Connection refused: the simulated redis-server is down");
    if (conn && !conn->open) {
        conn->open = true;
        conn->epoch = m_redis_epoch;
    }
    try {
        return op();
    } catch (const StreamError& e) {
        throw relab::KvError(relab::KvError::Kind::reply, e.what());
    }
}

template <class Op>
auto SimWorld::at_postgres(Op op, SimConnection* conn) -> decltype(op()) {
    if (conn && conn->open && conn->epoch != m_pg_epoch) {
        conn->open = false;
        throw relab::StoreUnavailable("server closed the connection unexpectedly");
    }
    if (!m_pg_up) throw relab::StoreUnavailable("Connection refused: the simulated PostgreSQL is down");
    if (conn && !conn->open) {
        conn->open = true;
        conn->epoch = m_pg_epoch;
    }
    return op();
}

template <class Op>
auto SimWorld::round_trip(Op op, SimConnection* link) -> decltype(op()) {
    using Result = decltype(op());
    struct Call {
        SimWorld* world;
        Op* op;
        FiberId fiber;
        Nanos reply_half;
        std::conditional_t<std::is_void_v<Result>, bool, std::optional<Result>> result{};
        std::exception_ptr error;

        static void at_server(void* ctx, uint64_t) {
            auto* c = static_cast<Call*>(ctx);
            try {
                if constexpr (std::is_void_v<Result>)
                    (*c->op)();
                else
                    c->result.emplace((*c->op)());
            } catch (...) {
                c->error = std::current_exception();
            }
            c->world->m_sched.wake(c->fiber, c->world->now() + c->reply_half);
        }
    };
    const Nanos rtt = draw_rtt();
    const Nanos request_half = rtt / 2;
    link_request(link);
    Call call{this, &op, m_sched.current(), rtt - request_half, {}, nullptr};
    request(request_half, &Call::at_server, &call);
    link_reply(link);
    if (call.error) std::rethrow_exception(call.error);
    if constexpr (!std::is_void_v<Result>) return std::move(*call.result);
}

template <class Op>
auto SimWorld::round_trips(int idle_trips, Op op, SimConnection* link) -> decltype(op()) {
    for (int i = 0; i < idle_trips; ++i) round_trip([] {}, link);
    return round_trip(std::move(op), link);
}

}  // namespace relab::sim
