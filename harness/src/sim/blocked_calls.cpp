#include "sim/blocked_calls.h"

#include <algorithm>

#include <fmt/format.h>

#include "sim/sim_error.h"

namespace relab::sim {

struct BlockedCalls::BlockedRead {
    BlockedCalls* calls;
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

struct BlockedCalls::BarrierWait {
    BlockedCalls* calls;
    uint64_t id;
    FiberId fiber;
    Nanos reply_half;
    int readers;
    Millis timeout;
    bool answered = false;
    std::exception_ptr error;
};

void BlockedCalls::reset() {
    m_reads.clear();
    m_barriers.clear();
    m_change_waiters.clear();
}

void BlockedCalls::stream_changed() {
    for (FiberId f : m_change_waiters) m_sched.wake(f, now());
    m_change_waiters.clear();
}

void BlockedCalls::wait_stream_change() {
    m_change_waiters.push_back(m_sched.current());
    m_sched.suspend();
}

void BlockedCalls::reply(BlockedRead& r, Nanos extra) { m_sched.wake(r.fiber, now() + r.reply_half + extra); }

void BlockedCalls::serve(const std::string& key) {
    if (m_reads.empty()) return;
    for (auto& served : m_redis.streams().serve_blocked(key, now())) {
        auto it = std::find_if(m_reads.begin(), m_reads.end(), [&](const auto& b) { return b.first == served.ticket; });
        if (it == m_reads.end()) continue;
        BlockedRead& r = *it->second;
        m_reads.erase(it);
        r.result = std::move(served.entries);
        reply(r, m_net.draw_wakeup());
    }
}

void BlockedCalls::blocked_read_at_server(void* ctx, uint64_t) {
    auto& r = *static_cast<BlockedRead*>(ctx);
    BlockedCalls& c = *r.calls;
    StreamModel& streams = c.m_redis.streams();
    try {
        r.result = c.m_redis.at([&] { return streams.xreadgroup(*r.key, *r.group, *r.consumer, r.count, c.now()); }, r.conn);
        if (!r.result.empty()) {
            c.stream_changed();
            c.reply(r, Nanos{0});
            return;
        }
        const uint64_t ticket = c.m_redis.at([&] { return streams.block(*r.key, *r.group, *r.consumer, r.count); });
        c.m_reads.emplace_back(ticket, &r);
        if (r.block.count() > 0) c.m_sched.at(c.now() + r.block, &BlockedCalls::blocked_read_timeout, &c, ticket);
        c.reader_blocked();
    } catch (...) {
        r.error = std::current_exception();
        c.reply(r, Nanos{0});
    }
}

void BlockedCalls::blocked_read_timeout(void* ctx, uint64_t ticket) {
    auto& c = *static_cast<BlockedCalls*>(ctx);
    if (!c.m_redis.streams().unblock(ticket)) return;  // served meanwhile
    auto it = std::find_if(c.m_reads.begin(), c.m_reads.end(), [&](const auto& b) { return b.first == ticket; });
    if (it == c.m_reads.end()) return;
    BlockedRead& r = *it->second;
    c.m_reads.erase(it);
    c.reply(r, c.m_net.draw_wakeup());
}

std::vector<StreamEntry> BlockedCalls::xreadgroup(const std::string& key, const std::string& group,
                                                  const std::string& consumer, int count, Millis block,
                                                  SimConnection* conn) {
    const Nanos rtt = m_net.draw_rtt();
    const Nanos request_half = rtt / 2;
    m_net.link_request(conn);
    BlockedRead r{this, m_sched.current(), rtt - request_half, &key, &group, &consumer, count, block, conn, {}, nullptr};
    m_net.request(request_half, &BlockedCalls::blocked_read_at_server, &r);
    m_net.link_reply(conn);
    if (r.error) std::rethrow_exception(r.error);
    return std::move(r.result);
}

void BlockedCalls::unblock_all_readers() {
    for (uint64_t ticket : m_redis.streams().blocked_tickets()) blocked_read_timeout(this, ticket);
}

void BlockedCalls::close_all_reads() {
    for (auto& [ticket, r] : m_reads) {
        m_redis.streams().unblock(ticket);
        if (r->conn) r->conn->open = false;  // the error closed it: the next call connects again
        r->error = std::make_exception_ptr(relab::KvError(relab::KvError::Kind::unavailable, "server closed the connection"));
        reply(*r, m_net.draw_wakeup());
    }
    m_reads.clear();
}

bool BlockedCalls::close_reads(SimConnection& conn) {
    bool closed = false;
    for (auto it = m_reads.begin(); it != m_reads.end();) {
        BlockedRead& r = *it->second;
        if (r.conn != &conn) {
            ++it;
            continue;
        }
        m_redis.streams().unblock(it->first);
        r.error = std::make_exception_ptr(relab::KvError(relab::KvError::Kind::unavailable, "server closed the connection"));
        reply(r, m_net.draw_wakeup());
        it = m_reads.erase(it);
        conn.open = false;  // the error closed it: the next call connects again
        closed = true;
    }
    return closed;
}

bool BlockedCalls::drop_fiber(FiberId f) {
    bool parked = false;
    for (auto it = m_reads.begin(); it != m_reads.end();) {
        if (it->second->fiber != f) {
            ++it;
            continue;
        }
        m_redis.streams().unblock(it->first);
        it = m_reads.erase(it);
        parked = true;
    }
    parked = std::erase_if(m_barriers, [&](const auto& b) { return b.second->fiber == f; }) > 0 || parked;
    parked = std::erase(m_change_waiters, f) > 0 || parked;
    return parked;
}

void BlockedCalls::reader_blocked() {
    const int blocked = m_redis.streams().blocked_readers();
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

void BlockedCalls::barrier_at_server(void* ctx, uint64_t) {
    auto& b = *static_cast<BarrierWait*>(ctx);
    BlockedCalls& c = *b.calls;
    c.m_barriers.emplace_back(b.id, &b);
    c.reader_blocked();
    // The timeout names the wait by id: once answered, the waiter's frame is gone.
    if (!b.answered) c.m_sched.at(c.now() + b.timeout, &BlockedCalls::barrier_timeout, &c, b.id);
}

void BlockedCalls::barrier_timeout(void* ctx, uint64_t id) {
    auto& c = *static_cast<BlockedCalls*>(ctx);
    auto it = std::find_if(c.m_barriers.begin(), c.m_barriers.end(), [&](const auto& p) { return p.first == id; });
    if (it == c.m_barriers.end()) return;
    BarrierWait& b = *it->second;
    c.m_barriers.erase(it);
    b.answered = true;
    b.error = std::make_exception_ptr(SimError(fmt::format("wait_readers_blocked: only {} of {} readers blocked after {} ms",
                                                           c.m_redis.streams().blocked_readers(), b.readers, b.timeout.count())));
    c.m_sched.wake(b.fiber, c.now() + b.reply_half);
}

void BlockedCalls::wait_readers_blocked(int readers, Millis timeout) {
    const Nanos rtt = m_net.draw_rtt();
    const Nanos request_half = rtt / 2;
    BarrierWait b{this, m_next_barrier++, m_sched.current(), rtt - request_half, readers, timeout, false, nullptr};
    m_net.request(request_half, &BlockedCalls::barrier_at_server, &b);
    if (b.error) std::rethrow_exception(b.error);
}

}  // namespace relab::sim
