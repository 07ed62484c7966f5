// The simulated network between the roles' fibers and the server models. A port call from a
// role's fiber costs one round trip: its request reaches the server model half a round trip later,
// runs there atomically at that virtual instant, and the reply reaches the fiber after the other
// half. Every latency is drawn from the schedule's seeded generator.
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "ports/link_mode.h"
#include "ports/ports.h"
#include "scenario/scenario.h"
#include "sim/scheduler.h"

namespace relab::sim {

// The scenario's timing ranges in nanoseconds.
struct Latency {
    Nanos rtt_min{0}, rtt_max{0};
    Nanos wakeup_min{0}, wakeup_max{0};
    Nanos start_min{0}, start_max{0};
    static Latency from(const SimSpec& s);
};

// One role's connection to the Redis model, shared by its Stream and Kv ports (as a role process
// has one), or to the PostgreSQL model. A connection open when the server was killed is dead: its
// next call fails once with "server closed the connection", and the call after that connects
// again (RedisLink's behaviour).
// Its link (LinkMode) is what the real backend's proxy does to the role's bytes: a blackhole holds
// a call before it leaves and its reply before it reaches the role, until the heal lets both go on
// (the request then runs at the server at the heal, as the bytes a proxy held arrive then); a
// delay holds each reply that long.
struct SimConnection {
    uint64_t epoch = 0;  // the server incarnation it was opened on
    bool open = false;
    LinkMode link{};
};

class SimNetwork {
public:
    explicit SimNetwork(Scheduler& sched) : m_sched(sched) {}
    SimNetwork(const SimNetwork&) = delete;
    SimNetwork& operator=(const SimNetwork&) = delete;

    // These latencies from now on, and no call held by a link.
    void reset(const Latency& latency);

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
    // `at_server` runs at the server `request_half` from now, and the fiber waits until something
    // (at_server itself, later) wakes it. With nothing else due before the request arrives it
    // runs at once, and with nothing due before the reply the fiber goes on without a switch
    // (Scheduler::run_next_here, Scheduler::suspend).
    void request(Nanos request_half, Scheduler::Action at_server, void* ctx) {
        m_sched.at(m_sched.now() + request_half, at_server, ctx);
        m_sched.run_next_here(at_server, ctx);
        m_sched.suspend();
    }
    // A call about to leave on `conn`, and its reply just back (SimConnection's link).
    void link_request(SimConnection* conn);
    void link_reply(SimConnection* conn);
    // A sleeping process: wakes after d plus a wake-up delay.
    void sleep(Nanos d);

    // --- a link fault, from the trial's supervisor ---
    // A role's link as a link fault sets it: a heal (no blackhole) lets the calls it held go on;
    // returns how many it let go.
    int64_t set_link(SimConnection& conn, const LinkMode& mode);
    // A killed role's call held by a link is let go (it unwinds when woken): whether f was held.
    bool drop_held(FiberId f);

private:
    Nanos uniform(Nanos lo, Nanos hi);

    Scheduler& m_sched;
    Latency m_latency;
    std::vector<std::pair<FiberId, SimConnection*>> m_link_held;  // calls a blackholed link holds
};

template <class Op>
auto SimNetwork::round_trip(Op op, SimConnection* link) -> decltype(op()) {
    using Result = decltype(op());
    struct Call {
        SimNetwork* net;
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
            c->net->m_sched.wake(c->fiber, c->net->m_sched.now() + c->reply_half);
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
auto SimNetwork::round_trips(int idle_trips, Op op, SimConnection* link) -> decltype(op()) {
    for (int i = 0; i < idle_trips; ++i) round_trip([] {}, link);
    return round_trip(std::move(op), link);
}

}  // namespace relab::sim
