// The calls that wait at the simulated Redis server instead of coming straight back. A reader that
// blocks in XREADGROUP waits at the server in FIFO order, like Redis's blocked clients, until an
// XADD serves it, its BLOCK runs out, CLIENT UNBLOCK, or its connection or the server dies; the
// process needs a wake-up delay once the reply is there. Beside them, the start barrier's wait for
// enough blocked readers, and the supervisor's wait for the next stream change.
#pragma once

#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "ports/ports.h"
#include "sim/scheduler.h"
#include "sim/sim_network.h"
#include "sim/sim_redis.h"

namespace relab::sim {

class BlockedCalls {
public:
    BlockedCalls(Scheduler& sched, SimNetwork& net, SimRedis& redis) : m_sched(sched), m_net(net), m_redis(redis) {}
    BlockedCalls(const BlockedCalls&) = delete;
    BlockedCalls& operator=(const BlockedCalls&) = delete;

    // Nothing waits.
    void reset();

    // --- from a role's fiber ---
    // XREADGROUP ... BLOCK block: blocks at the server while the group has nothing new; empty on
    // timeout or CLIENT UNBLOCK. block 0 waits forever, as in Redis.
    std::vector<StreamEntry> xreadgroup(const std::string& key, const std::string& group, const std::string& consumer,
                                        int count, Millis block, SimConnection* conn);
    // Returns once `readers` readers are blocked in XREADGROUP; SimError after `timeout`.
    void wait_readers_blocked(int readers, Millis timeout);
    // Suspends the calling fiber until the next change to any stream or group.
    void wait_stream_change();

    // --- at the server ---
    // After an XADD to `key`: its blocked readers that now have entries get them.
    void serve(const std::string& key);
    // Counts a stream change (XADD, XACK, ...) and wakes whoever waits for one.
    void stream_changed();
    // CLIENT UNBLOCK of every blocked reader: each gets an empty reply.
    void unblock_all_readers();
    // The server died: every blocked reader's connection closes (an error reply).
    void close_all_reads();
    // CLIENT KILL of `conn`: a read blocked on it gets "connection closed" now. Whether one was.
    bool close_reads(SimConnection& conn);
    // A killed role's fiber: a blocked read, barrier wait or change wait of it is dropped at the
    // server. Whether it waited here (it must be woken to unwind).
    bool drop_fiber(FiberId f);

private:
    struct BlockedRead;
    struct BarrierWait;

    static void blocked_read_at_server(void* ctx, uint64_t);
    static void blocked_read_timeout(void* ctx, uint64_t ticket);
    static void barrier_at_server(void* ctx, uint64_t);
    static void barrier_timeout(void* ctx, uint64_t);
    void reply(BlockedRead& r, Nanos extra);
    void reader_blocked();
    Nanos now() const { return m_sched.now(); }

    Scheduler& m_sched;
    SimNetwork& m_net;
    SimRedis& m_redis;
    std::vector<std::pair<uint64_t, BlockedRead*>> m_reads;     // ticket -> the parked call
    std::vector<std::pair<uint64_t, BarrierWait*>> m_barriers;  // id -> the waiting call
    uint64_t m_next_barrier = 1;
    std::vector<FiberId> m_change_waiters;
};

}  // namespace relab::sim
