// One trial's simulated world: the scheduler, the network between the roles and the servers
// (SimNetwork), the Redis and PostgreSQL servers' models and faults (SimRedis, SimPostgres), and
// the calls that wait at Redis (BlockedCalls). The simulator's ports (sim_ports.h) call the world;
// the trial's supervisor reaches the servers and the links through it.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ports/ports.h"
#include "sim/blocked_calls.h"
#include "sim/kv_model.h"
#include "sim/outbox_model.h"
#include "sim/placed_orders_model.h"
#include "sim/scheduler.h"
#include "sim/sim_error.h"
#include "sim/sim_network.h"
#include "sim/sim_postgres.h"
#include "sim/sim_redis.h"
#include "sim/stream_model.h"
#include "sim/table_model.h"

namespace relab::sim {

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
    SimNetwork& network() { return m_net; }
    SimRedis& redis() { return m_redis; }
    SimPostgres& postgres() { return m_postgres; }
    // The servers' models, as the ports reach them.
    StreamModel& streams() { return m_redis.streams(); }
    KvModel& kv() { return m_redis.kv(); }
    TableModel& orders() { return m_postgres.orders(); }
    OutboxModel& outbox() { return m_postgres.outbox(); }
    std::set<std::pair<int64_t, int64_t>>& inbox() { return m_postgres.inbox(); }
    PlacedOrdersModel& placed_orders() { return m_postgres.placed_orders(); }

    // --- from a role's fiber ---
    // A call to a server (SimNetwork::round_trip), and at the server its side (SimRedis::at,
    // SimPostgres::at).
    template <class Op>
    auto round_trip(Op op, SimConnection* link = nullptr) -> decltype(op()) {
        return m_net.round_trip(std::move(op), link);
    }
    template <class Op>
    auto round_trips(int idle_trips, Op op, SimConnection* link = nullptr) -> decltype(op()) {
        return m_net.round_trips(idle_trips, std::move(op), link);
    }
    template <class Op>
    auto at_redis(Op op, SimConnection* conn = nullptr) -> decltype(op()) {
        return m_redis.at(std::move(op), conn);
    }
    template <class Op>
    auto at_postgres(Op op, SimConnection* conn) -> decltype(op()) {
        return m_postgres.at(std::move(op), conn);
    }
    // XADD, each batch member in turn; after each one the stream's blocked readers are served.
    std::vector<std::string> xadd(const std::string& key, const std::vector<Fields>& batch, SimConnection* conn = nullptr);
    // XADD key IDMP producer_id iid * fields (Redis 8.6's model): a pair seen before adds nothing.
    std::string xadd_idmp(const std::string& key, const Fields& fields, const std::string& producer_id,
                          const std::string& iid, SimConnection* conn = nullptr);
    // XREADGROUP ... BLOCK and the start barrier's wait: calls that wait at the server (BlockedCalls).
    std::vector<StreamEntry> xreadgroup(const std::string& key, const std::string& group, const std::string& consumer,
                                        int count, Millis block, SimConnection* conn = nullptr) {
        return m_blocked.xreadgroup(key, group, consumer, count, block, conn);
    }
    void wait_readers_blocked(int readers, Millis timeout) { m_blocked.wait_readers_blocked(readers, timeout); }
    // A sleeping process: wakes after d plus a wake-up delay.
    void sleep(Nanos d) { m_net.sleep(d); }

    // --- at the server, from the trial's supervisor (no network) ---
    // SIGKILL of the Redis server: every blocked reader's connection closes (an error reply);
    // calls are refused.
    void kill_redis();
    // CLIENT KILL of one connection: a read blocked on it gets "connection closed" now; otherwise
    // its next call fails once, as a call on a connection the server closed does. False when it
    // was not open (nothing to close).
    bool drop_connection(SimConnection& conn);
    // A killed role's connection closing: its blocked XREADGROUP, barrier wait or call held by a
    // link is dropped and the fiber woken, so it unwinds (Scheduler::kill).
    void drop_fiber(FiberId f);
    // CLIENT UNBLOCK of every blocked reader: each gets an empty reply.
    void unblock_all_readers() { m_blocked.unblock_all_readers(); }
    // Suspends the calling fiber until the next change to any stream or group.
    void wait_stream_change() { m_blocked.wait_stream_change(); }
    // Counts a stream change (XADD, XACK, ...) and wakes whoever waits for one.
    void stream_changed() { m_blocked.stream_changed(); }

private:
    Scheduler m_sched;
    SimNetwork m_net{m_sched};
    SimRedis m_redis;
    SimPostgres m_postgres;
    BlockedCalls m_blocked{m_sched, m_net, m_redis};
};

}  // namespace relab::sim
