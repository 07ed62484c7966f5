#include "backend_sim/sim_backend.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "check/idem_check.h"
#include "fault/fault_spec.h"
#include "ports/seeded_rng.h"
#include "util/interrupt.h"
#include "roles/idem_client.h"
#include "roles/roles.h"
#include "engine/family.h"
#include "engine/invariants.h"
#include "engine/seeds.h"
#include "engine/trial_loop.h"
#include "engine/supervisor.h"
#include "engine/timeouts.h"
#include "sim/sim_ports.h"
#include "sim/sim_world.h"

namespace relab {

namespace {

using sim::FiberId;
using sim::Scheduler;
using sim::SimWorld;

// Virtual time starts here in every trial: 1'790'000'000'000 ms since the Unix epoch (late 2026),
// so stream IDs look like the article's.
constexpr Nanos kEpoch = Millis{1'790'000'000'000};
constexpr Millis kBarrierTimeout = timeouts::kBarrier;
// How long the simulated redis-server takes to come back after a restart fault: about what a real
// one on loopback takes in 08i-restart-*.
constexpr Millis kRedisRestart{20};
constexpr Millis kFailoverTime{1'600};
// How long the simulated PostgreSQL takes to come back after a restart fault: the kill, then
// crash recovery until it accepts connections, about what a real one on loopback takes in
// 08j-outbox-pg-restart (checkpointed before the trial, recovery_init_sync_method syncfs).
constexpr Millis kPostgresRestart{200};

}  // namespace

// The simulated actors are named, not anonymous: SimBackend::Impl holds them, and GCC warns
// (-Wsubobject-linkage, an error here) about a class holding a type of an anonymous namespace
// when this file is compiled inside its layer's unity batch.
namespace sim_backend_detail {

struct Actor;

// A role's tasks (S3's workers) as fibers of the trial's scheduler, each with an Actor of its own
// (its own connections and generator, as a thread of the role process has in the real backend).
// The nemesis kills them with their role (kill_all), as a SIGKILL kills a process's threads.
class SimTasks : public Tasks {
public:
    SimTasks(SimWorld& w, History& h, uint64_t seed) : m_world(w), m_history(h), m_seed(seed) {}
    ~SimTasks() override;
    // A new trial (or a restarted role): no tasks; the scheduler's reset has ended their fibers.
    void reset(uint64_t seed);
    void spawn(const std::string& actor, Body body) override;
    void join_all() override {
        for (FiberId f : m_fibers) m_world.scheduler().join(f);
    }
    // A task that throws fails its fiber, and the scheduler the trial, at once.
    bool failed() override { return false; }
    void kill_all();
    // The tasks' Redis connections (drop_link of their role or of every client), and their
    // connections to `server` (a link fault of their role).
    std::vector<sim::SimConnection*> redis_connections();
    std::vector<sim::SimConnection*> connections(LinkServer server);

private:
    SimWorld& m_world;
    History& m_history;
    uint64_t m_seed;
    std::vector<std::unique_ptr<Actor>> m_actors;
    std::vector<FiberId> m_fibers;
};

// Everything one actor gets, as a role process gets its own connections in the real backend.
struct Actor {
    SeededRng rng;
    sim::SimConnection redis;  // its Stream and Kv share one connection, as a role process's do
    sim::SimConnection pg;     // its OrderStore and Outbox share one, as a role process's PgSession
    sim::SimClock clock;
    sim::SimStream stream;
    sim::SimKv kv;
    sim::SimOrderStore orders;
    sim::SimOutbox outbox;
    sim::SimOrderTable order_table;
    SimTasks tasks;
    RolePorts ports;
    Actor(SimWorld& w, History& h, uint64_t seed)
        : rng(seed), clock(w), stream(w, &redis), kv(w, &redis), orders(w, &pg), outbox(w, &pg), order_table(w, &pg),
          tasks(w, h, derive_seed(seed, "tasks")), ports{clock, rng, stream, kv, orders, outbox, h, &order_table, &tasks} {}
};

SimTasks::~SimTasks() = default;

void SimTasks::reset(uint64_t seed) {
    m_seed = seed;
    m_actors.clear();
    m_fibers.clear();
}

void SimTasks::spawn(const std::string& actor, Body body) {
    auto a = std::make_unique<Actor>(m_world, m_history, derive_seed(m_seed, "task:" + actor));
    m_world.open_connection(a->redis);
    m_world.open_postgres_connection(a->pg);
    RolePorts& ports = a->ports;
    m_actors.push_back(std::move(a));
    // A thread starts at once; it runs once the scheduler gets to it (a wake-up's delay).
    m_fibers.push_back(m_world.scheduler().spawn(
        actor, [body = std::move(body), &ports] { body(ports); }, m_world.now() + m_world.draw_wakeup()));
}

void SimTasks::kill_all() {
    for (size_t i = 0; i < m_fibers.size(); ++i) {
        m_world.scheduler().kill(m_fibers[i]);
        m_world.drop_fiber(m_fibers[i]);
        m_actors[i]->pg.open = false;
        m_actors[i]->tasks.kill_all();
    }
}

std::vector<sim::SimConnection*> SimTasks::redis_connections() { return connections(LinkServer::redis); }

std::vector<sim::SimConnection*> SimTasks::connections(LinkServer server) {
    std::vector<sim::SimConnection*> out;
    for (auto& a : m_actors) out.push_back(server == LinkServer::redis ? &a->redis : &a->pg);
    return out;
}

}  // namespace sim_backend_detail

namespace {

using sim_backend_detail::Actor;
using sim_backend_detail::SimTasks;

void fnv1a(uint64_t& h, const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
    h = (h ^ 0xff) * 0x100000001b3ULL;  // a separator, so "ab","c" differs from "a","bc"
}

}  // namespace

std::optional<std::string> sim_skip_reason(const Scenario& s) {
    if (s.only_backend == "real") return "runs on real servers only: " + s.only_backend_why;
    return family_of(s.kind).sim_skip_reason(s);
}

uint64_t trial_fingerprint(const TrialOutcome& t) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const auto& r : t.history) fnv1a(h, to_json(r).dump());
    for (const auto& row : t.final_rows) fnv1a(h, fmt::format("{}|{}|{}", row.id, row.status, row.version));
    for (const auto& e : t.stream) {
        fnv1a(h, e.id);
        for (const auto& [k, v] : e.fields) fnv1a(h, k + "=" + v);
    }
    for (const auto& o : t.idem.orders) fnv1a(h, fmt::format("{}|{}|{}|{}", o.id, o.user_id, o.idem_key, o.payload));
    return h;
}

std::optional<int> trial_of_seed(uint64_t lab_seed_value, uint64_t seed, int limit) {
    for (int t = 1; t <= limit; ++t)
        if (trial_seed(lab_seed_value, t) == seed) return t;
    return std::nullopt;
}

namespace sim_backend_detail {

// The TrialStore port on the simulated world's models.
class SimTrialStore : public TrialStore {
public:
    explicit SimTrialStore(SimWorld& w) : m_world(w) {}
    // The models are cheap to reset whole: the source tables and outbox go with tmp_orders.
    void reset_orders(const std::vector<OrderRow>& initial, Tables) override {
        m_world.orders().reset(initial);
        m_world.outbox().reset(initial);
    }
    void create_group(const std::string& stream, const std::string& group) override {
        m_world.streams().create_group(stream, group, "$", true);
    }
    std::vector<OrderRow> rows() override { return m_world.orders().rows(); }
    std::vector<SideEffectRow> side_effects() override { return m_world.orders().side_effects(); }
    std::vector<StreamEntry> xrange(const std::string& stream) override { return m_world.streams().xrange(stream); }
    void reset_placed_orders(bool layer4) override { m_world.placed_orders().reset(layer4); }
    std::vector<PlacedOrder> placed_orders() override { return m_world.placed_orders().orders(); }

private:
    SimWorld& m_world;
};

}  // namespace sim_backend_detail

using sim_backend_detail::SimTrialStore;

struct SimBackend::Impl {
    SimOptions opts;
    SimWorld world;
    sim::SimHistory history;
    std::vector<std::unique_ptr<Actor>> actors;
    std::vector<std::unique_ptr<Actor>> restarted;  // roles a fault restarted, this trial
    RoleSettings settings;  // role_settings() of this trial's lab, as a role process receives it
    std::vector<std::string> stream_keys;  // lab_stream_keys() of this trial's stream lab, once per trial
    // While run_workload runs a lab's trials: that lab, whose `settings` it built once.
    const Scenario* settings_of = nullptr;
    // The supervisor's current wait for a stream change; a quiet watchdog of an older one is stale.
    uint64_t quiet_wait = 0;

    // A watchdog queued as the supervisor began waiting for a stream change: if that wait still
    // lasts, nothing changed the stream for the lab's quiet_ms, and the supervisor looks again.
    static void quiet_watchdog(void* ctx, uint64_t wait) {
        auto* self = static_cast<Impl*>(ctx);
        if (wait == self->quiet_wait) self->world.stream_changed();
    }

    explicit Impl(SimOptions o) : opts(std::move(o)) {}

    Actor& actor(size_t index, uint64_t seed) {
        if (index < actors.size()) {
            actors[index]->rng = SeededRng(seed);
            actors[index]->tasks.reset(derive_seed(seed, "tasks"));
            actors[index]->redis = sim::SimConnection{};
            actors[index]->pg = sim::SimConnection{};
            world.open_connection(actors[index]->redis);
            world.open_postgres_connection(actors[index]->pg);
            return *actors[index];
        }
        actors.push_back(std::make_unique<Actor>(world, history, seed));
        world.open_connection(actors.back()->redis);
        world.open_postgres_connection(actors.back()->pg);
        return *actors.back();
    }

    // As RealBackend's group_drained: every entry now in the stream delivered and acknowledged; a
    // stream that is gone has nothing left, a group that is gone may be created again.
    // With S2's shards: every shard's stream (the cluster is one modelled keyspace here).
    bool drained(const Scenario& s) {
        if (!world.redis_up()) return false;
        for (const auto& key : stream_keys) {
            if (!world.streams().exists(key)) continue;
            if (!world.streams().last_delivered(key, s.stream.group)) return false;
            if (!world.streams().drained(key, s.stream.group)) return false;
        }
        return true;
    }

    // The shape of every simulated trial, as both real runners have it: a fresh world and
    // history, `roles` (trial_roles) as fibers with their own ports and seeds, each starting after
    // a drawn delay, and a supervisor fiber beside them (the runner's parent process), called with
    // the roles' fibers in the same order. Runs until `limit`; a failed fiber, the time limit or a
    // stall throw (naming the trial's seed). `prepare` fills the fresh world's models. Returns the
    // history, its times still absolute.
    template <class Prepare, class Supervise>
    std::vector<HistoryRecord> run_roles(const Scenario& s, const std::vector<RoleLaunch>& roles, int trial,
                                         uint64_t seed, Nanos limit, Prepare prepare, Supervise supervise) {
        world.reset(sim::Latency::from(s.sim), kEpoch, derive_seed(seed, "sim-schedule"));
        restarted.clear();  // after the reset: their fibers are gone
        if (settings_of != &s) settings = role_settings(s);
        prepare();
        history.reset(trial);

        Scheduler& sched = world.scheduler();
        std::vector<FiberId> fibers;
        fibers.reserve(roles.size());
        for (size_t i = 0; i < roles.size(); ++i) {
            const RoleLaunch& launch = roles[i];
            Actor& a = actor(i, derive_seed(seed, static_cast<uint64_t>(i)));
            fibers.push_back(sched.spawn(
                launch.actor,
                [this, &launch, &a] { run_role(launch.role, launch.actor, settings, a.ports, kBarrierTimeout); },
                kEpoch + world.draw_start()));
        }
        sched.spawn("supervisor", [&] { supervise(fibers); }, kEpoch);
        throw_if_failed_or_unfinished(s, trial, seed, sched.run(limit));
        return history.take();
    }

    // The Control port on the simulated world: roles are fibers, signals are scheduler calls.
    class SimControl : public Control {
    public:
        SimControl(Impl& impl, const Scenario& s, const std::vector<RoleLaunch>& roles, std::vector<FiberId> fibers,
                   uint64_t seed)
            : m_impl(impl), m_s(s), m_roles(roles), m_fibers(std::move(fibers)), m_killed(roles.size(), false),
              m_seed(seed) {
            for (size_t i = 0; i < roles.size(); ++i) {
                m_conns.push_back(&m_impl.actors.at(i)->redis);
                m_pg_conns.push_back(&m_impl.actors.at(i)->pg);
                m_tasks.push_back(&m_impl.actors.at(i)->tasks);
            }
        }

        Nanos now() override { return m_impl.world.now(); }

        void wait(Phase phase, std::optional<Nanos> until) override {
            Scheduler& sched = m_impl.world.scheduler();
            if (until) {
                sched.sleep_until(std::max(*until, now()));
                return;
            }
            if (phase == Phase::draining) {
                // A group that never drains changes nothing: the watchdog wakes the supervisor so
                // that it can end the trial once nothing moves (Control::wait's promise).
                const uint64_t wait = ++m_impl.quiet_wait;
                sched.at_last(now() + Millis{m_s.stream.quiet_ms}, &Impl::quiet_watchdog, &m_impl, wait);
                m_impl.world.wait_stream_change();
                ++m_impl.quiet_wait;
                return;
            }
            if (phase == Phase::clients) {
                for (size_t i = 0; i < m_roles.size(); ++i)
                    if (!finished_at(i)) {
                        sched.join(m_fibers[i]);
                        return;
                    }
                return;
            }
            for (size_t i = 0; i < m_roles.size(); ++i) {
                const bool consuming = m_roles[i].role == "consumer" || m_roles[i].role == "reaper";
                if (consuming == (phase == Phase::stopping) && !finished_at(i)) {
                    sched.join(m_fibers[i]);
                    return;
                }
            }
        }

        bool finished(const Target& t) override {
            switch (t.kind) {
                case FaultTarget::role: return finished_at(index(t.actor));
                case FaultTarget::redis: return !m_impl.world.redis_up();
                case FaultTarget::postgres: return !m_impl.world.postgres_up();
                case FaultTarget::redis_cluster_master:  // sim_skip_reason: no cluster model
                case FaultTarget::redis_cluster_replica:
                case FaultTarget::redis_replica:
                case FaultTarget::redis_cache:
                case FaultTarget::clients: return false;
            }
            return false;
        }
        void check_roles() override {}  // a fiber that throws fails the trial in the scheduler

        void kill(const Target& t) override {
            switch (t.kind) {
                case FaultTarget::redis: return m_impl.world.kill_redis();
                case FaultTarget::postgres: return m_impl.world.kill_postgres();
                case FaultTarget::role: return kill_role(index(t.actor));
                case FaultTarget::redis_cluster_master:
                case FaultTarget::redis_cluster_replica:
                case FaultTarget::redis_replica:
                case FaultTarget::redis_cache:
                case FaultTarget::clients: break;
            }
            not_modelled("kill", t);
        }
        // sim_skip_reason: the primary and PostgreSQL models are never paused.
        void pause(const Target& t) override {
            if (t.kind == FaultTarget::redis_replica) return m_impl.world.pause_replica();
            if (!t.is_role()) not_modelled("pause", t);
            m_impl.world.scheduler().pause(m_fibers[index(t.actor)]);
        }
        void resume(const Target& t) override {
            if (t.kind == FaultTarget::redis_replica) return m_impl.world.resume_replica();
            if (!t.is_role()) not_modelled("resume", t);
            m_impl.world.scheduler().unpause(m_fibers[index(t.actor)]);
        }
        bool paused(const Target& t) override {
            if (t.kind == FaultTarget::redis_replica) return m_impl.world.replica_paused();
            if (!t.is_role()) return false;
            const size_t i = index(t.actor);
            return !m_killed[i] && m_impl.world.scheduler().paused(m_fibers[i]);
        }

        void start(const Target& t) override {
            switch (t.kind) {
                case FaultTarget::postgres:
                    // As a real restart: down for its crash recovery, then up with every committed row.
                    m_impl.world.scheduler().sleep_for(kPostgresRestart);
                    return m_impl.world.start_postgres();
                case FaultTarget::redis: {
                    // As a real restart (about 20 ms on loopback): down, then up with what it kept.
                    m_impl.world.scheduler().sleep_for(kRedisRestart);
                    return m_impl.world.start_redis(appendonly());
                }
                case FaultTarget::role: return start_role(index(t.actor));
                case FaultTarget::redis_cluster_master:
                case FaultTarget::redis_cluster_replica:
                case FaultTarget::redis_replica:  // sim_skip_reason keeps a rejoin on the real backend
                case FaultTarget::redis_cache:
                case FaultTarget::clients: break;
            }
            not_modelled("start", t);
        }

        int64_t drop_links(const Target& t) override {
            // The link comes back at once unless the replica is paused, whose state is frozen then.
            if (t.kind == FaultTarget::redis_replica) return 1;
            if (t.kind != FaultTarget::clients && !t.is_role()) not_modelled("drop_links", t);
            int64_t closed = 0;
            for (size_t i = 0; i < m_roles.size(); ++i) {
                if (t.is_role() && m_roles[i].actor != t.actor) continue;
                if (finished_at(i)) continue;
                if (m_impl.world.drop_connection(*m_conns[i])) ++closed;
                for (sim::SimConnection* task : m_tasks[i]->redis_connections())
                    if (m_impl.world.drop_connection(*task)) ++closed;
            }
            return closed;
        }
        // The role's link, its tasks' beside it (a role process's threads share its network).
        nlohmann::json set_link(const Target& t, LinkServer server, const LinkMode& mode) override {
            if (!t.is_role()) not_modelled("set_link", t);
            const size_t i = index(t.actor);
            std::vector<sim::SimConnection*> conns = m_tasks[i]->connections(server);
            conns.push_back(server == LinkServer::redis ? m_conns[i] : m_pg_conns[i]);
            int64_t released = 0;
            for (sim::SimConnection* c : conns) released += m_impl.world.set_link(*c, mode);
            return {{"released", released}, {"unit", "calls"}};
        }
        // Sentinel's election as it goes on loopback: down-after 500 ms, the vote, the promotion
        // seen (kFailoverTime is within what real labs show).
        nlohmann::json promote(Nanos killed_at) override {
            m_impl.world.scheduler().sleep_until(std::max(killed_at + kFailoverTime, now()));
            m_impl.world.promote_replica();
            return {{"switch_ms", kFailoverTime.count()},
                    {"text", fmt::format("the replica promoted after {} ms", kFailoverTime.count())}};
        }
        // sim_skip_reason keeps a shard_failover lab on the real backend: no cluster model.
        nlohmann::json shard_promote(const Target& master, Nanos) override { not_modelled("shard_promote", master); }
        // sim_skip_reason keeps labs that send a server commands (flood, snapshot) away from the
        // simulator: its server models answer the roles' ports only.
        std::vector<nlohmann::json> commands(const Target& server, int64_t, const std::vector<Command>&) override {
            not_modelled("commands", server);
        }
        ServerState describe(const Target&) override {
            ServerState out;
            out.keys = m_impl.world.redis_up() ? m_impl.world.kv().size(now()) : 0;
            out.appendonly = appendonly();
            if (has_stream(m_s.kind)) out.last_delivered = last_delivered();
            return out;
        }
        std::string server_key(const std::string& logical) override { return logical; }

        bool clients_ready() override {
            return std::all_of(m_roles.begin(), m_roles.end(), [&](const RoleLaunch& r) {
                return m_impl.world.kv().exists(kIdemReadyKey + r.actor, now());
            });
        }
        void go(Nanos origin) override {
            m_impl.world.kv().set(kIdemGoKey, std::to_string(origin.count()), sim::SetOptions{}, now());
        }
        std::vector<std::string> present(const std::vector<std::string>& keys) override {
            std::vector<std::string> out;
            for (const auto& k : keys)
                if (m_impl.world.kv().exists(k, now())) out.push_back(k);
            return out;
        }
        int64_t pttl_ms(const std::string& key) override { return m_impl.world.kv().pttl(key, now()); }
        void raise_flag(const std::string& name) override {
            m_impl.world.kv().set(kIdemFaultDoneKey + name, "1", sim::SetOptions{}, now());
        }

        bool drained() override { return m_impl.drained(m_s); }
        nlohmann::json group_state() override {
            if (m_s.shard.enabled) throw std::logic_error("group_state: a sharded lab has a group per shard");
            auto& streams = m_impl.world.streams();
            const std::string& key = m_s.stream.key;
            const bool group = streams.last_delivered(key, m_s.stream.group).has_value();
            return {{"pending", streams.pending(key, m_s.stream.group).size()},
                    {"undelivered", streams.undelivered(key, m_s.stream.group)},
                    {"group", group || !streams.exists(key)}};
        }
        std::optional<std::vector<std::string>> pel_ids() override {
            if (m_s.shard.enabled) return std::nullopt;
            std::vector<std::string> ids;
            for (const auto& p : m_impl.world.streams().pending(m_s.stream.key, m_s.stream.group)) ids.push_back(p.id);
            return ids;
        }
        void raise_stop() override { m_impl.world.kv().set(kStopKey, "1", sim::SetOptions{}, now()); }
        void unblock_readers() override { m_impl.world.unblock_all_readers(); }

        void poll_records(std::vector<HistoryRecord>& out) override {
            const auto& all = m_impl.history.records();
            for (; m_seen < all.size(); ++m_seen)  // the supervisor's own records it has already
                if (all[m_seen].actor != "nemesis" && all[m_seen].actor != "relab") out.push_back(all[m_seen]);
        }
        void record(HistoryRecord r) override { m_impl.history.record(std::move(r)); }
        int64_t activity() override { return static_cast<int64_t>(m_impl.history.records().size()); }

    private:
        // A fault the action table keeps away from the simulator (a skip reason): a harness bug here.
        [[noreturn]] static void not_modelled(const char* primitive, const Target& t) {
            throw std::logic_error(
                fmt::format("the simulator does not model the {} primitive on {}", primitive, target_name(t)));
        }
        bool appendonly() const {
            const auto aof = m_s.servers.redis_config.find("appendonly");
            return aof != m_s.servers.redis_config.end() && aof->second == "yes";
        }
        void kill_role(size_t i) {
            m_impl.world.scheduler().kill(m_fibers[i]);
            m_impl.world.drop_fiber(m_fibers[i]);
            m_tasks[i]->kill_all();  // its threads die with it
            // Its PostgreSQL connection closes with it: an open transaction (an outbox claim) is gone.
            m_pg_conns[i]->open = false;
            m_killed[i] = true;
        }
        // A new process: its own connections and generator, under the same name.
        void start_role(size_t i) {
            const RoleLaunch& launch = m_roles[i];
            auto a = std::make_unique<Actor>(
                m_impl.world, m_impl.history, derive_seed(m_seed, fmt::format("restart:{}:{}", launch.actor, ++m_restarts)));
            Actor& ports = *a;
            m_impl.world.open_connection(ports.redis);
            m_impl.world.open_postgres_connection(ports.pg);
            // Its links are its proxies' on the real backend, which outlive a restart.
            ports.redis.link = m_conns[i]->link;
            ports.pg.link = m_pg_conns[i]->link;
            m_conns[i] = &ports.redis;
            m_pg_conns[i] = &ports.pg;
            m_tasks[i] = &ports.tasks;
            m_impl.restarted.push_back(std::move(a));
            const RoleSettings& settings = m_impl.settings;
            m_fibers[i] = m_impl.world.scheduler().spawn(
                launch.actor,
                [&settings, &launch, &ports] {
                    run_role(launch.role, launch.actor, settings, ports.ports, kBarrierTimeout);
                },
                now() + m_impl.world.draw_start());
            m_killed[i] = false;
        }
        std::string last_delivered() {
            if (!m_impl.world.redis_up()) return "(down)";
            return m_impl.world.streams().last_delivered(m_s.stream.key, m_s.stream.group).value_or("(no group)");
        }

        size_t index(const std::string& actor) const {
            for (size_t i = 0; i < m_roles.size(); ++i)
                if (m_roles[i].actor == actor) return i;
            throw std::logic_error("no role " + actor + " in this trial");
        }
        bool finished_at(size_t i) { return m_killed[i] || m_impl.world.scheduler().finished(m_fibers[i]); }

        Impl& m_impl;
        const Scenario& m_s;
        const std::vector<RoleLaunch>& m_roles;
        std::vector<FiberId> m_fibers;
        std::vector<bool> m_killed;
        std::vector<sim::SimConnection*> m_conns;     // each role's current Redis connection
        std::vector<sim::SimConnection*> m_pg_conns;  // and its PostgreSQL one
        std::vector<SimTasks*> m_tasks;               // and its tasks (S3's workers)
        uint64_t m_seed;
        int m_restarts = 0;
        size_t m_seen = 0;
    };

    TrialOutcome run_trial(const Scenario& s, int trial, uint64_t seed) {
        return run_trial(s, trial_roles(s), trial, seed);
    }

    // One trial of a role family (engine/family.h): its roles as fibers under its supervisor, on a
    // fresh world its prepare filled; sim_skip_reason keeps the probe families from getting here.
    TrialOutcome run_trial(const Scenario& s, const std::vector<RoleLaunch>& roles, int trial, uint64_t seed) {
        const LabFamily& family = family_of(s.kind);
        if (!family.has_roles())
            throw std::logic_error(fmt::format("the simulator runs no {} lab ({})", family.name, s.id));
        const Nanos limit = kEpoch + family.budget(s);
        stream_keys = lab_stream_keys(s.stream, s.shard);
        SimTrialStore store(world);
        std::optional<Nanos> origin;
        std::vector<HistoryRecord> records = run_roles(
            s, roles, trial, seed, limit, [&] { family.prepare(s, store); },
            [&](const std::vector<FiberId>& fibers) {
                SimControl control(*this, s, roles, fibers, seed);
                origin = family.supervise(s, roles, control);
            });
        if (origin) {
            for (auto& r : records) r.t_ns -= origin->count();
        } else {
            rebase_on_start(records);
        }
        return family.finish(s, trial, seed, std::move(records), store);
    }

    // After the scheduler stopped: a failed fiber, a time limit with fibers still running or a
    // stall (nothing left to happen, fibers waiting) fail the trial loudly, naming its seed.
    void throw_if_failed_or_unfinished(const Scenario& s, int trial, uint64_t seed, Scheduler::Stop stop) {
        Scheduler& sched = world.scheduler();
        // Formatted only for an error: this runs after every trial.
        auto where = [&] { return fmt::format("{} trial {} (seed {})", s.id, trial, seed_text(seed)); };
        if (stop == Scheduler::Stop::fiber_failed) {
            const std::string who = sched.failed_fiber();
            const std::exception_ptr error = sched.failure();
            sched.cancel_all();
            try {
                std::rethrow_exception(error);
            } catch (const std::exception& e) {
                if (who == "supervisor") throw std::runtime_error(fmt::format("{}: {}", where(), e.what()));
                throw std::runtime_error(fmt::format("{}: role {} failed: {}", where(), who, e.what()));
            }
        }
        const std::vector<std::string> running = sched.unfinished();
        if (!running.empty()) {
            const double at_ms = static_cast<double>((sched.now() - kEpoch).count()) / 1e6;
            sched.cancel_all();
            if (stop == Scheduler::Stop::time_limit)
                throw std::runtime_error(fmt::format("{} timed out at {:.3f} ms of virtual time; still running: {}",
                                                     where(), at_ms, fmt::join(running, ", ")));
            throw std::runtime_error(fmt::format("{} stalled at {:.3f} ms of virtual time: nothing left to happen, "
                                                 "but still running: {}",
                                                 where(), at_ms, fmt::join(running, ", ")));
        }
    }

    void check_determinism(const Scenario& s, const std::vector<RoleLaunch>& roles, const TrialOutcome& first) {
        const TrialOutcome again = run_trial(s, roles, first.trial, first.seed);
        const uint64_t a = trial_fingerprint(first), b = trial_fingerprint(again);
        if (a != b)
            throw DeterminismError(fmt::format(
                "{} trial {} (seed {}) is not deterministic: two runs gave history fingerprints {} and {}", s.id,
                first.trial, seed_text(first.seed), seed_text(a), seed_text(b)));
    }

    LabResult run_workload(const Scenario& s) {
        LabResult lab;
        lab.scenario = s;
        // Every trial of the lab runs its roles with the same settings: built once, not per trial.
        settings = role_settings(s);
        settings_of = &s;
        struct Forget {
            const Scenario*& of;
            ~Forget() { of = nullptr; }
        } forget{settings_of};
        // A lab that requires DELEX runs on a Redis 8.4 model; any other on Redis 7.0's.
        world.kv().delex = std::find(s.needs_features.begin(), s.needs_features.end(), "DELEX") != s.needs_features.end();
        if (s.lock.enabled) lab.lock_release_method = sim::SimKv(world).delete_if_equals_method();
        const LabFamily& family = family_of(s.kind);
        const std::vector<RoleLaunch> roles = family.roles(s);
        if (opts.replay) return replay(s, roles, std::move(lab));
        run_trial_loop(s, loop_plan(s, family, roles), lab, [&](int t, uint64_t seed) -> TrialResult {
            return run_trial(s, roles, t, seed);
        });
        if (family.after_trials) family.after_trials(lab);
        return lab;
    }

    LoopPlan loop_plan(const Scenario& s, const LabFamily& family, const std::vector<RoleLaunch>& roles) {
        LoopPlan p;
        p.trials = family.planned_trials(s, opts.trials);
        p.first_trial = opts.first_trial;
        p.seed = opts.seed;
        p.progress = opts.progress;
        p.progress_every = 100;
        p.shard = opts.shard;
        p.keep.keep_all_trials = kKeepAllHistories;
        p.keep.keep_all_events = kKeepAllEvents;
        p.keep.keep_first = opts.keep_histories;
        p.keep.kept_wrong = kFailingSeedsKept;
        p.verify = [this, &s, &roles](const TrialOutcome& o) {
            if (o.trial == 1 && opts.self_check) check_determinism(s, roles, o);
        };
        p.on_kept = [](TrialOutcome& o) { fold_record_fields(o.history); };  // as the reporters read a history
        return p;
    }

    // --replay: exactly the trial with that seed, with its timeline.
    LabResult replay(const Scenario& s, const std::vector<RoleLaunch>& roles, LabResult lab) {
        const int trial = trial_of_seed(lab_seed(s, opts.seed), *opts.replay).value_or(1);
        if (opts.progress) opts.progress(s.id, 1, 1);
        lab.trials.push_back(run_trial(s, roles, trial, *opts.replay));
        check_trial_invariants(s, lab.trials.back());
        if (opts.self_check) check_determinism(s, roles, lab.trials.back());
        fold_record_fields(lab.trials.back().history);
        lab.replay_seed = opts.replay;
        return lab;
    }

    static constexpr size_t kFailingSeedsKept = 10;
};

SimBackend::SimBackend(SimOptions opts) : m_impl(std::make_unique<Impl>(std::move(opts))) {}

SimBackend::~SimBackend() = default;

LabResult SimBackend::run(const Scenario& s) {
    return run_with_beside(s, [this](const Scenario& x) { return run_one(x); });
}

LabResult SimBackend::run_one(const Scenario& s) {
    const auto started = std::chrono::steady_clock::now();
    LabResult lab;
    if (auto reason = sim_skip_reason(s)) {
        lab.scenario = s;
        lab.skipped = true;
        lab.skip_reason = *reason;
    } else {
        lab = m_impl->run_workload(s);
    }
    lab.backend = "sim";
    lab.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    summarize(lab);
    return lab;
}

TrialOutcome SimBackend::run_trial(const Scenario& s, int trial, uint64_t trial_seed) {
    TrialOutcome o = m_impl->run_trial(s, trial, trial_seed);
    fold_record_fields(o.history);
    return o;
}

std::pair<uint64_t, uint64_t> SimBackend::self_check(const Scenario& s, uint64_t seed) {
    const uint64_t a = trial_fingerprint(m_impl->run_trial(s, 1, seed));
    const uint64_t b = trial_fingerprint(m_impl->run_trial(s, 1, seed));
    return {a, b};
}

}  // namespace relab
