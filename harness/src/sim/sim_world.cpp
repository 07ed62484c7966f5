#include "sim/sim_world.h"

namespace relab::sim {

SimWorld::SimWorld(size_t stack_bytes) : m_sched(stack_bytes) {}

void SimWorld::reset(const Latency& latency, Nanos start, uint64_t schedule_seed) {
    m_sched.reset(start, schedule_seed);
    m_net.reset(latency);
    m_redis.reset();
    m_postgres.reset();
    m_blocked.reset();
}

void SimWorld::kill_redis() {
    m_redis.kill();
    m_blocked.close_all_reads();
}

bool SimWorld::drop_connection(SimConnection& conn) {
    const bool closed = m_blocked.close_reads(conn);
    return m_redis.close(conn) || closed;
}

void SimWorld::drop_fiber(FiberId f) {
    // Only a fiber parked here waits on nothing else; one in a round trip or a sleep has an event
    // of its own coming (its stack still in use by it), and unwinds when that event wakes it.
    const bool blocked = m_blocked.drop_fiber(f);
    const bool held = m_net.drop_held(f);
    if (blocked || held) m_sched.wake(f, now());
}

std::vector<std::string> SimWorld::xadd(const std::string& key, const std::vector<Fields>& batch, SimConnection* conn) {
    return round_trip([&] {
        return at_redis([&] {
            std::vector<std::string> ids;
            ids.reserve(batch.size());
            for (const Fields& fields : batch) {
                ids.push_back(m_redis.streams().xadd(key, fields, now()));
                m_blocked.serve(key);
            }
            m_blocked.stream_changed();
            return ids;
        }, conn);
    }, conn);
}

std::string SimWorld::xadd_idmp(const std::string& key, const Fields& fields, const std::string& producer_id,
                                const std::string& iid, SimConnection* conn) {
    return round_trip([&] {
        return at_redis([&] {
            const auto [id, added] = m_redis.streams().xadd_idmp(key, fields, producer_id, iid, now());
            if (added) {
                m_blocked.serve(key);
                m_blocked.stream_changed();
            }
            return id;
        }, conn);
    }, conn);
}

}  // namespace relab::sim
