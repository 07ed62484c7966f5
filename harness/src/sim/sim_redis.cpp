#include "sim/sim_redis.h"

namespace relab::sim {

void SimRedis::reset() {
    m_streams.clear();
    m_kv.clear();
    m_up = true;
    m_epoch = 0;
    m_replica_frozen = false;
    m_replica_stopped = false;
}

void SimRedis::start(bool persistent) {
    if (!persistent) {
        m_streams.clear();
        m_kv.clear();
    }
    m_up = true;
}

bool SimRedis::close(SimConnection& conn) {
    if (!conn.open || conn.epoch != m_epoch) return false;  // closed already, or dead with its server
    conn.epoch = ~uint64_t{0};  // no server incarnation has it: the next call fails once
    return true;
}

void SimRedis::pause_replica() {
    m_replica_streams = m_streams;
    m_replica_streams.drop_waiters();
    m_replica_kv = m_kv;
    m_replica_frozen = true;
    m_replica_stopped = true;
}

void SimRedis::resume_replica() {
    m_replica_stopped = false;
    if (m_up) m_replica_frozen = false;
}

void SimRedis::promote_replica() {
    if (m_replica_frozen) {
        m_streams = m_replica_streams;
        m_kv = m_replica_kv;
        m_replica_frozen = false;
    }
    m_replica_stopped = false;
    m_streams.drop_waiters();
    m_up = true;
}

}  // namespace relab::sim
