#include "sim/sim_world.h"

#include <algorithm>

#include <fmt/format.h>

namespace relab::sim {

struct SimWorld::BlockedRead {
    SimWorld* world;
    FiberId fiber;
    Nanos reply_half;
    const std::string* key;
    const std::string* group;
    const std::string* consumer;
    int count;
    Millis block;
    SimConnection* conn;
    std::vector<StreamEntry> result;
    std::exception_ptr error;
};

struct SimWorld::BarrierWait {
    SimWorld* world;
    uint64_t id;
    FiberId fiber;
    Nanos reply_half;
    int readers;
    Millis timeout;
    bool answered = false;
    std::exception_ptr error;
};

Latency Latency::from(const SimSpec& s) {
    auto us = [](int64_t v) { return Nanos{v * 1000}; };
    return Latency{us(s.rtt_us.min),    us(s.rtt_us.max),   us(s.wakeup_us.min),
                   us(s.wakeup_us.max), us(s.start_us.min), us(s.start_us.max)};
}

SimWorld::SimWorld(size_t stack_bytes) : m_sched(stack_bytes) {}

void SimWorld::reset(const Latency& latency, Nanos start, uint64_t schedule_seed) {
    m_sched.reset(start, schedule_seed);
    m_latency = latency;
    m_streams.clear();
    m_kv.clear();
    m_orders.reset({});
    m_outbox.reset({});
    m_inbox.clear();
    m_placed_orders.reset(false);
    m_blocked.clear();
    m_barriers.clear();
    m_change_waiters.clear();
    m_link_held.clear();
    m_redis_up = true;
    m_redis_epoch = 0;
    m_pg_up = true;
    m_pg_epoch = 0;
    m_replica_frozen = false;
    m_replica_stopped = false;
}

void SimWorld::link_request(SimConnection* conn) {
    // A wake-up of a fiber held here is its heal (or its kill, which unwinds it in suspend()).
    while (conn && conn->link.blackhole) {
        m_link_held.emplace_back(m_sched.current(), conn);
        m_sched.suspend();
    }
}

void SimWorld::link_reply(SimConnection* conn) {
    if (!conn) return;
    link_request(conn);  // a reply that meets a blackhole is held as a request is
    if (conn->link.reset) {
        // The statement ran at the server; the role gets the RST in place of its reply, and its
        // next call opens a new connection (through the same link).
        conn->open = false;
        if (*conn->link.reset == LinkServer::postgres) throw relab::StoreUnavailable("Connection reset by peer");
        throw relab::KvError(relab::KvError::Kind::unavailable, "Connection reset by peer");
    }
    if (conn->link.delay.count() > 0) m_sched.sleep_for(conn->link.delay);
}

int64_t SimWorld::set_link(SimConnection& conn, const LinkMode& mode) {
    conn.link = mode;
    if (mode.blackhole) return 0;
    int64_t released = 0;
    std::erase_if(m_link_held, [&](const std::pair<FiberId, SimConnection*>& h) {
        if (h.second != &conn) return false;
        m_sched.wake(h.first, now());
        ++released;
        return true;
    });
    return released;
}

void SimWorld::kill_postgres() {
    m_pg_up = false;
    ++m_pg_epoch;
}

void SimWorld::start_postgres() { m_pg_up = true; }

void SimWorld::kill_redis() {
    m_redis_up = false;
    ++m_redis_epoch;
    for (auto& [ticket, r] : m_blocked) {
        m_streams.unblock(ticket);
        if (r->conn) r->conn->open = false;  // the error closed it: the next call connects again
        r->error = std::make_exception_ptr(relab::KvError(relab::KvError::Kind::unavailable, "server closed the connection"));
        reply_blocked(*r, draw_wakeup());
    }
    m_blocked.clear();
}

bool SimWorld::drop_connection(SimConnection& conn) {
    bool closed = false;
    for (auto it = m_blocked.begin(); it != m_blocked.end();) {
        BlockedRead& r = *it->second;
        if (r.conn != &conn) {
            ++it;
            continue;
        }
        m_streams.unblock(it->first);
        r.error = std::make_exception_ptr(relab::KvError(relab::KvError::Kind::unavailable, "server closed the connection"));
        reply_blocked(r, draw_wakeup());
        it = m_blocked.erase(it);
        conn.open = false;  // the error closed it: the next call connects again
        closed = true;
    }
    if (!conn.open || conn.epoch != m_redis_epoch) return closed;  // closed already, or dead with its server
    conn.epoch = ~uint64_t{0};  // no server incarnation has it: the next call fails once
    return true;
}

void SimWorld::pause_replica() {
    m_replica_streams = m_streams;
    m_replica_streams.drop_waiters();
    m_replica_kv = m_kv;
    m_replica_frozen = true;
    m_replica_stopped = true;
}

void SimWorld::resume_replica() {
    m_replica_stopped = false;
    if (m_redis_up) m_replica_frozen = false;
}

void SimWorld::promote_replica() {
    if (m_replica_frozen) {
        m_streams = m_replica_streams;
        m_kv = m_replica_kv;
        m_replica_frozen = false;
    }
    m_replica_stopped = false;
    m_streams.drop_waiters();
    m_redis_up = true;
}

void SimWorld::start_redis(bool persistent) {
    if (!persistent) {
        m_streams.clear();
        m_kv.clear();
    }
    m_redis_up = true;
}

Nanos SimWorld::uniform(Nanos lo, Nanos hi) {
    if (hi <= lo) return lo;
    return Nanos{m_sched.rng().uniform(lo.count(), hi.count())};
}

Nanos SimWorld::draw_rtt() { return uniform(m_latency.rtt_min, m_latency.rtt_max); }
Nanos SimWorld::draw_wakeup() { return uniform(m_latency.wakeup_min, m_latency.wakeup_max); }
Nanos SimWorld::draw_start() { return uniform(m_latency.start_min, m_latency.start_max); }

void SimWorld::sleep(Nanos d) {
    // A zero or negative sleep still yields, so a role polling without sleeping cannot starve
    // the others (it would spin forever in virtual time otherwise).
    if (d.count() <= 0) {
        m_sched.sleep_until(now());
        return;
    }
    m_sched.sleep_until(now() + d + draw_wakeup());
}

void SimWorld::stream_changed() {
    for (FiberId f : m_change_waiters) m_sched.wake(f, now());
    m_change_waiters.clear();
}

void SimWorld::wait_stream_change() {
    m_change_waiters.push_back(m_sched.current());
    m_sched.suspend();
}

void SimWorld::reply_blocked(BlockedRead& r, Nanos extra) {
    m_sched.wake(r.fiber, now() + r.reply_half + extra);
}

void SimWorld::serve_blocked(const std::string& key) {
    if (m_blocked.empty()) return;
    for (auto& served : m_streams.serve_blocked(key, now())) {
        auto it = std::find_if(m_blocked.begin(), m_blocked.end(),
                               [&](const auto& b) { return b.first == served.ticket; });
        if (it == m_blocked.end()) continue;
        BlockedRead& r = *it->second;
        m_blocked.erase(it);
        r.result = std::move(served.entries);
        reply_blocked(r, draw_wakeup());
    }
}

std::vector<std::string> SimWorld::xadd(const std::string& key, const std::vector<Fields>& batch, SimConnection* conn) {
    return round_trip([&] {
        return at_redis([&] {
            std::vector<std::string> ids;
            ids.reserve(batch.size());
            for (const Fields& fields : batch) {
                ids.push_back(m_streams.xadd(key, fields, now()));
                serve_blocked(key);
            }
            stream_changed();
            return ids;
        }, conn);
    }, conn);
}

std::string SimWorld::xadd_idmp(const std::string& key, const Fields& fields, const std::string& producer_id,
                                const std::string& iid, SimConnection* conn) {
    return round_trip([&] {
        return at_redis([&] {
            const auto [id, added] = m_streams.xadd_idmp(key, fields, producer_id, iid, now());
            if (added) {
                serve_blocked(key);
                stream_changed();
            }
            return id;
        }, conn);
    }, conn);
}

void SimWorld::blocked_read_at_server(void* ctx, uint64_t) {
    auto& r = *static_cast<BlockedRead*>(ctx);
    SimWorld& w = *r.world;
    try {
        r.result = w.at_redis([&] { return w.m_streams.xreadgroup(*r.key, *r.group, *r.consumer, r.count, w.now()); },
                              r.conn);
        if (!r.result.empty()) {
            w.stream_changed();
            w.reply_blocked(r, Nanos{0});
            return;
        }
        const uint64_t ticket = w.at_redis([&] { return w.m_streams.block(*r.key, *r.group, *r.consumer, r.count); });
        w.m_blocked.emplace_back(ticket, &r);
        if (r.block.count() > 0) w.m_sched.at(w.now() + r.block, &SimWorld::blocked_read_timeout, &w, ticket);
        w.reader_blocked();
    } catch (...) {
        r.error = std::current_exception();
        w.reply_blocked(r, Nanos{0});
    }
}

void SimWorld::blocked_read_timeout(void* ctx, uint64_t ticket) {
    auto& w = *static_cast<SimWorld*>(ctx);
    if (!w.m_streams.unblock(ticket)) return;  // served meanwhile
    auto it = std::find_if(w.m_blocked.begin(), w.m_blocked.end(), [&](const auto& b) { return b.first == ticket; });
    if (it == w.m_blocked.end()) return;
    BlockedRead& r = *it->second;
    w.m_blocked.erase(it);
    w.reply_blocked(r, w.draw_wakeup());
}

std::vector<StreamEntry> SimWorld::xreadgroup(const std::string& key, const std::string& group,
                                              const std::string& consumer, int count, Millis block, SimConnection* conn) {
    const Nanos rtt = draw_rtt();
    const Nanos request_half = rtt / 2;
    link_request(conn);
    BlockedRead r{this, m_sched.current(), rtt - request_half, &key, &group, &consumer, count, block, conn, {}, nullptr};
    request(request_half, &SimWorld::blocked_read_at_server, &r);
    link_reply(conn);
    if (r.error) std::rethrow_exception(r.error);
    return std::move(r.result);
}

void SimWorld::drop_fiber(FiberId f) {
    // Only a fiber parked here waits on nothing else; one in a round trip or a sleep has an event
    // of its own coming (its stack still in use by it), and unwinds when that event wakes it.
    bool parked = false;
    for (auto it = m_blocked.begin(); it != m_blocked.end();) {
        if (it->second->fiber != f) {
            ++it;
            continue;
        }
        m_streams.unblock(it->first);
        it = m_blocked.erase(it);
        parked = true;
    }
    parked = std::erase_if(m_barriers, [&](const auto& b) { return b.second->fiber == f; }) > 0 || parked;
    parked = std::erase(m_change_waiters, f) > 0 || parked;
    parked = std::erase_if(m_link_held, [&](const auto& h) { return h.first == f; }) > 0 || parked;
    if (parked) m_sched.wake(f, now());
}

void SimWorld::unblock_all_readers() {
    for (uint64_t ticket : m_streams.blocked_tickets()) blocked_read_timeout(this, ticket);
}

void SimWorld::reader_blocked() {
    const int blocked = m_streams.blocked_readers();
    for (auto it = m_barriers.begin(); it != m_barriers.end();) {
        BarrierWait& b = *it->second;
        if (blocked < b.readers) {
            ++it;
            continue;
        }
        b.answered = true;
        m_sched.wake(b.fiber, now() + b.reply_half);
        it = m_barriers.erase(it);
    }
}

void SimWorld::barrier_at_server(void* ctx, uint64_t) {
    auto& b = *static_cast<BarrierWait*>(ctx);
    SimWorld& w = *b.world;
    w.m_barriers.emplace_back(b.id, &b);
    w.reader_blocked();
    // The timeout names the wait by id: once answered, the waiter's frame is gone.
    if (!b.answered) w.m_sched.at(w.now() + b.timeout, &SimWorld::barrier_timeout, &w, b.id);
}

void SimWorld::barrier_timeout(void* ctx, uint64_t id) {
    auto& w = *static_cast<SimWorld*>(ctx);
    auto it = std::find_if(w.m_barriers.begin(), w.m_barriers.end(), [&](const auto& p) { return p.first == id; });
    if (it == w.m_barriers.end()) return;
    BarrierWait& b = *it->second;
    w.m_barriers.erase(it);
    b.answered = true;
    b.error = std::make_exception_ptr(SimError(fmt::format("wait_readers_blocked: only {} of {} readers blocked after {} ms",
                                                           w.m_streams.blocked_readers(), b.readers, b.timeout.count())));
    w.m_sched.wake(b.fiber, w.now() + b.reply_half);
}

void SimWorld::wait_readers_blocked(int readers, Millis timeout) {
    const Nanos rtt = draw_rtt();
    const Nanos request_half = rtt / 2;
    BarrierWait b{this, m_next_barrier++, m_sched.current(), rtt - request_half, readers, timeout, false, nullptr};
    request(request_half, &SimWorld::barrier_at_server, &b);
    if (b.error) std::rethrow_exception(b.error);
}

}  // namespace relab::sim
