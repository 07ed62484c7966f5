// The simulated redis-server: its stream and key models, whether it is up, its incarnation (a
// connection opened on an earlier one is dead) and its replica. What waits at it (blocked
// XREADGROUP readers, the start barrier) is BlockedCalls'.
#pragma once

#include <cstdint>

#include "ports/ports.h"
#include "sim/kv_model.h"
#include "sim/sim_network.h"
#include "sim/stream_model.h"

namespace relab::sim {

class SimRedis {
public:
    // Up and empty, its first incarnation, the replica linked.
    void reset();

    StreamModel& streams() { return m_streams; }
    KvModel& kv() { return m_kv; }

    // A role's connection opened when its process starts (RedisLink connects in its constructor).
    void open_connection(SimConnection& conn) const {
        conn.open = true;
        conn.epoch = m_epoch;
    }
    // Redis's side of a call: refused while the server is down, and a model's error reply as the
    // KvError (kind reply) a real client throws.
    template <class Op>
    auto at(Op op, SimConnection* conn = nullptr) -> decltype(op());

    // SIGKILL: calls are refused, and every connection opened before is dead.
    void kill() {
        m_up = false;
        ++m_epoch;
    }
    // Started again: with persistence (appendonly yes) it kept everything; without, it is empty.
    void start(bool persistent);
    bool up() const { return m_up; }
    // CLIENT KILL of a connection no read is blocked on: its next call fails once, as a call on
    // a connection the server closed does. False when it was not open (nothing to close).
    bool close(SimConnection& conn);

    // The replica: it mirrors the primary at once while it is linked; paused (SIGSTOP) it keeps the
    // state of that moment, and a failover makes that state the server's. Resumed, it catches up
    // with a live primary; with the primary dead it stays as stale as it was.
    void pause_replica();
    void resume_replica();
    bool replica_paused() const { return m_replica_stopped; }
    // After a kill: the replica becomes the primary, with what it had when it stopped.
    void promote_replica();

private:
    StreamModel m_streams;
    KvModel m_kv;
    bool m_up = true;
    uint64_t m_epoch = 0;            // +1 on every kill: connections opened before are dead
    bool m_replica_frozen = false;   // it holds m_replica_streams/m_replica_kv, not the primary's state
    bool m_replica_stopped = false;  // SIGSTOP
    StreamModel m_replica_streams;
    KvModel m_replica_kv;
};

template <class Op>
auto SimRedis::at(Op op, SimConnection* conn) -> decltype(op()) {
    if (conn && conn->open && conn->epoch != m_epoch) {
        conn->open = false;
        throw relab::KvError(relab::KvError::Kind::unavailable, "server closed the connection");
    }
    if (!m_up) throw relab::KvError(relab::KvError::Kind::unavailable, "Connection refused: the simulated redis-server is down");
    if (conn && !conn->open) {
        conn->open = true;
        conn->epoch = m_epoch;
    }
    try {
        return op();
    } catch (const StreamError& e) {
        throw relab::KvError(relab::KvError::Kind::reply, e.what());
    }
}

}  // namespace relab::sim
