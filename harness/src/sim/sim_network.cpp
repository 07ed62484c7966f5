#include "sim/sim_network.h"

namespace relab::sim {

Latency Latency::from(const SimSpec& s) {
    auto us = [](int64_t v) { return Nanos{v * 1000}; };
    return Latency{us(s.rtt_us.min),    us(s.rtt_us.max),   us(s.wakeup_us.min),
                   us(s.wakeup_us.max), us(s.start_us.min), us(s.start_us.max)};
}

void SimNetwork::reset(const Latency& latency) {
    m_latency = latency;
    m_link_held.clear();
}

Nanos SimNetwork::uniform(Nanos lo, Nanos hi) {
    if (hi <= lo) return lo;
    return Nanos{m_sched.rng().uniform(lo.count(), hi.count())};
}

Nanos SimNetwork::draw_rtt() { return uniform(m_latency.rtt_min, m_latency.rtt_max); }
Nanos SimNetwork::draw_wakeup() { return uniform(m_latency.wakeup_min, m_latency.wakeup_max); }
Nanos SimNetwork::draw_start() { return uniform(m_latency.start_min, m_latency.start_max); }

void SimNetwork::link_request(SimConnection* conn) {
    // A wake-up of a fiber held here is its heal (or its kill, which unwinds it in suspend()).
    while (conn && conn->link.blackhole) {
        m_link_held.emplace_back(m_sched.current(), conn);
        m_sched.suspend();
    }
}

void SimNetwork::link_reply(SimConnection* conn) {
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

void SimNetwork::sleep(Nanos d) {
    // A zero or negative sleep still yields, so a role polling without sleeping cannot starve
    // the others (it would spin forever in virtual time otherwise).
    if (d.count() <= 0) {
        m_sched.sleep_until(m_sched.now());
        return;
    }
    m_sched.sleep_until(m_sched.now() + d + draw_wakeup());
}

int64_t SimNetwork::set_link(SimConnection& conn, const LinkMode& mode) {
    conn.link = mode;
    if (mode.blackhole) return 0;
    int64_t released = 0;
    std::erase_if(m_link_held, [&](const std::pair<FiberId, SimConnection*>& h) {
        if (h.second != &conn) return false;
        m_sched.wake(h.first, m_sched.now());
        ++released;
        return true;
    });
    return released;
}

bool SimNetwork::drop_held(FiberId f) {
    return std::erase_if(m_link_held, [&](const auto& h) { return h.first == f; }) > 0;
}

}  // namespace relab::sim
