#include "roles/event.h"
#include "roles/order_sql.h"
#include "roles/roles.h"
#include "util/check.h"
#include "util/json_object.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

namespace relab {

std::string lock_key_for(const LockSpec& lock, int64_t order) {
    std::string key = lock.key;
    const std::string placeholder = "{order}";
    for (auto pos = key.find(placeholder); pos != std::string::npos; pos = key.find(placeholder))
        key.replace(pos, placeholder.size(), std::to_string(order));
    return key;
}

namespace {

// S3's in-memory FIFOs, shared by the reader and its workers (RoleSettings::fanout). Every member
// is read and changed under `mu`, which is never held across a port call: in the simulator the
// tasks are fibers of one thread and a port call suspends the fiber.
// A generated workload's job cost per event, in µs, by "order:type:version".
using EventCosts = std::unordered_map<std::string, int64_t>;

struct Fanout {
    struct Job {
        StreamEntry entry;
        Event ev;
        Nanos queued_at;
    };
    std::mutex mu;
    std::map<int64_t, std::deque<Job>> fifo;  // per key: the order (per_key), or 0 for all (any_worker)
    std::set<int64_t> busy;                   // per_key: orders a worker is on now
    std::deque<int64_t> runnable;             // per_key: orders with a job waiting and no worker on them
    int in_flight = 0;                        // jobs dispatched and not yet over (acknowledged or failed)
    int ready = 0;                            // workers connected and waiting for jobs
    bool stop = false;                        // the reader is done: workers end once the FIFOs are empty
    bool abort = false;                       // a task failed or the reader died: workers end now
};

class Consumer {
public:
    // `costs`: the event costs another consumer of the process already indexed (S3's reader, for
    // its workers); null: index them here.
    Consumer(const RoleSettings& s, const std::string& actor, RolePorts& p,
             std::shared_ptr<const EventCosts> costs = nullptr)
        : m_s(s), m_actor(actor), m_name(actor), m_p(p), m_key(stream_key_of(s, actor)), m_event_cost_us(std::move(costs)) {
        if (m_event_cost_us) return;
        // A generated workload's own cost per event (drawn from the lab's seed), indexed once per
        // process: a soak's 100,000 events, once per worker, made every restart slow and large.
        auto costs_here = std::make_shared<EventCosts>();
        for (const auto& e : s.events)
            if (e.cost_us >= 0) (*costs_here)[event_cost_key(e.order, e.type, e.version)] = e.cost_us;
        m_event_cost_us = std::move(costs_here);
    }

    // A poison entry's event ("fails": true): its job fails on every delivery.
    bool poisoned(const Event& ev) const {
        return std::any_of(m_s.events.begin(), m_s.events.end(), [&](const EventSpec& e) {
            return e.fails && e.order == ev.order && e.type == ev.type && e.version == ev.v;
        });
    }

    // recovery.consumer_name "per_process": the name it reads under in the group is its actor and
    // an ID drawn when the process starts, as a pod-named consumer's is: a restart is a new name.
    void name_per_process() {
        m_name = fmt::format("{}~{}", m_actor, m_p.rng.uniform(1000, 9999));
    }

    // A worker: [its own pending entries first], then new ones, [claiming idle entries as it goes].
    // With fanout (S3) this loop is the reader's, and every entry goes to a worker task instead.
    void run() {
        if (m_s.fanout.enabled) return run_fanout();
        read_loop();
    }

    // The reader's loop, without fanout the whole consumer: ends when the stop key is set and
    // nothing it holds is left (held by the reorder buffer, or on the fanout's FIFOs).
    void read_loop() {
        const RecoverySpec& rec = m_s.recovery;
        const bool claims = rec.autoclaim.enabled && !rec.autoclaim.in_reaper();
        Millis block{m_s.stream.block_ms};
        if (claims) block = std::min(block, Millis{rec.autoclaim.every_ms});
        Nanos next_claim = m_p.clock.now() + Millis{rec.autoclaim.every_ms};
        bool pending_done = !rec.pending_first;
        std::string pending_after = "0";
        for (;;) {
            try {
                // A restarted worker: what it was given before it died comes back first (XREADGROUP ...
                // 0, then after the last one read: S3's reader does not acknowledge them itself).
                while (!pending_done) {
                    auto entries = m_p.stream.xreadgroup_pending(m_s.stream.group, m_name, m_key,
                                                                 m_s.stream.read_count, pending_after);
                    if (entries.empty()) pending_done = true;
                    for (const auto& e : entries) {
                        pending_after = e.id;
                        handle(e, "pending");
                    }
                    flush_acks();
                }
                if (claims && m_p.clock.now() >= next_claim) {
                    claim_round();
                    next_claim = m_p.clock.now() + Millis{rec.autoclaim.every_ms};
                }
                release_timed_out();
                auto entries = m_p.stream.xreadgroup(m_s.stream.group, m_name, m_key,
                                                     m_s.stream.read_count, buffer_block(block));
                if (m_fanout && m_p.tasks->failed()) return;  // run_fanout's join rethrows it
                if (entries.empty()) {
                    flush_acks();  // what a read cut short by a Redis error left unacknowledged
                    if (m_held.empty() && fanout_idle() && m_p.kv.exists(kStopKey)) return;
                    continue;
                }
                for (const auto& e : entries) handle(e, "new");
                flush_acks();
            } catch (const KvError& e) {
                ride_out(e);
            }
        }
    }

    // The reaper: every every_ms, XAUTOCLAIM what has been idle min_idle_ms and process it.
    void run_reaper() {
        for (;;) {
            m_p.clock.sleep_for(Millis{m_s.recovery.autoclaim.every_ms});
            try {
                if (m_p.kv.exists(kStopKey)) return;
                claim_round();
            } catch (const KvError& e) {
                ride_out(e);
            }
        }
    }

private:
    // S2: consumer Ck reads shard k-1's stream alone; otherwise every consumer reads the lab's stream.
    static std::string stream_key_of(const RoleSettings& s, const std::string& actor) {
        if (!s.shard.enabled) return s.stream.key;
        int k = 0;
        if (actor.size() < 2 || actor[0] != 'C' || (k = std::atoi(actor.c_str() + 1)) < 1 || k > s.shard.shard_count())
            throw std::invalid_argument(fmt::format("a sharded lab's consumers are C1..C{}, not {}", s.shard.shard_count(), actor));
        return shard_stream_key(s.shard, k - 1);
    }

    // The entry and the event a record names go in the record's names (HistoryRecord::names):
    // no JSON object built per record for them.
    void record(Op op, nlohmann::json data, const std::string& entry = {}, const Event* ev = nullptr) {
        // With several streams an entry ID names an entry only with its stream.
        if (m_s.shard.enabled && (op == Op::receive || op == Op::ack || op == Op::write)) data["stream"] = m_key;
        m_p.history.record(HistoryRecord{0, m_p.clock.now().count(), m_actor, op, std::move(data), entry,
                                         ev ? std::optional<Event>(*ev) : std::nullopt});
    }

    // One full XAUTOCLAIM scan from 0-0; each claimed entry is processed like a new one.
    void claim_round() {
        const auto& ac = m_s.recovery.autoclaim;
        std::string cursor = "0-0";
        do {
            auto r = m_p.stream.xautoclaim(m_key, m_s.stream.group, m_name, Millis{ac.min_idle_ms}, cursor,
                                           ac.count);
            if (!r.claimed.empty() || !r.deleted.empty()) {
                nlohmann::json ids = nlohmann::json::array();
                for (const auto& e : r.claimed) ids.push_back(e.id);
                // deleted: pending IDs no longer in the stream, which Redis 7's XAUTOCLAIM drops from the PEL.
                record(Op::claim, {{"claimed", ids},
                                   {"deleted", r.deleted},
                                   {"deleted_count", r.deleted.size()},
                                   {"min_idle_ms", ac.min_idle_ms}});
            }
            // An entry this round already acknowledged (P3 released its held copy when the gap before
            // it closed) is done: the claim's copy of it is stale.
            m_acked_this_round.clear();  // a round a Redis error cut short left its own
            m_in_claim_round = true;
            for (const auto& e : r.claimed)
                if (!m_acked_this_round.count(e.id)) handle(e, "claim");
            flush_acks();
            m_in_claim_round = false;
            m_acked_this_round.clear();
            cursor = r.next;
        } while (cursor != "0-0");
    }

    // A Redis error in a lab that schedules a Redis fault: recorded, and the worker goes on as a
    // real one does (a new connection on its next call); with recovery.recreate_group a vanished
    // group (NOGROUP) is created again from the stream's start. Anywhere else it ends the role.
    void ride_out(const KvError& e) {
        if (e.kind() == KvError::Kind::unexpected || !m_s.redis_faults_scheduled) throw;
        const std::string what = e.what();
        record(Op::error, {{"error", what}, {"kind", to_string(e.kind())}});
        if (m_s.recovery.recreate_group && what.find("NOGROUP") != std::string::npos) {
            try {
                if (m_p.stream.create_group(m_key, m_s.stream.group, "0"))
                    record(Op::group_created, {{"group", m_s.stream.group}, {"start", "0"}});
            } catch (const KvError&) {
                // the server went away again: the next error brings us back here
            }
        }
        m_p.clock.sleep_for(kRetryAfterRedisError);
    }

    // The job's write. In a lab that faults its PostgreSQL, a write that finds no database is
    // recorded and tried again on a new connection until it gets through, as a worker's retry
    // loop does (the entry stays unacknowledged meanwhile); anywhere else it ends the role.
    WriteResult write(const OrderWrite& w) {
        return with_store_retry([&] { return m_p.orders.write_state(w); });
    }

    template <class F>
    auto with_store_retry(F f) -> decltype(f()) {
        for (;;) {
            try {
                return f();
            } catch (const StoreUnavailable& e) {
                if (!m_s.postgres_faults_scheduled) throw;
                record(Op::error, {{"error", e.what()}, {"kind", "unavailable"}, {"server", "postgres"}});
                m_p.clock.sleep_for(kRetryAfterRedisError);
            }
        }
    }

    void handle(const StreamEntry& entry, const char* via) {
        if (entry.fields.empty()) {
            // Pending, but deleted from the stream meanwhile: nothing to process.
            record(Op::receive, json_object("deliveries", entry.deliveries, "via", via, "deleted", true), entry.id);
            acknowledge(entry.id);
            return;
        }
        const Event ev = event_from_entry(entry);
        nlohmann::json data = json_object("deliveries", entry.deliveries, "via", via);
        if (m_name != m_actor) data["consumer"] = m_name;  // the group knows it by this name
        record(Op::receive, std::move(data), entry.id, &ev);
        if (m_fanout)
            dispatch(entry, ev);
        else if (m_s.buffer.enabled)
            buffer(entry, ev);
        else
            apply(entry, ev);
    }

    // --- S3: one reader, in-memory FIFOs, W workers (RoleSettings::fanout) ---

    // The reader: starts its workers (actors <actor>.w1 .. .wN, each with connections of its
    // own), reads as any consumer does and puts every entry on a FIFO; when told to stop and every
    // job is over, lets the workers end and waits for them.
    void run_fanout() {
        if (!m_p.tasks) throw std::logic_error("fanout: this backend gives the consumer no tasks to run workers on");
        m_fanout = std::make_shared<Fanout>();
        // However the reader ends (a harness error, killed), its workers stop with it.
        struct StopWorkers {
            Fanout& f;
            ~StopWorkers() {
                std::lock_guard<std::mutex> lock(f.mu);
                f.stop = true;
                f.abort = true;
            }
        } stop_workers{*m_fanout};
        for (int i = 1; i <= m_s.fanout.workers; ++i) {
            const std::string worker = fmt::format("{}.w{}", m_actor, i);
            m_p.tasks->spawn(worker,
                             [&settings = m_s, worker, shared = m_fanout, costs = m_event_cost_us](RolePorts& ports) {
                                 Consumer(settings, worker, ports, costs).run_worker(*shared);
                             });
        }
        // As a service starts its worker pool before it consumes: the reader reads (and the start
        // barrier sees it blocked) only once every worker has its connections.
        for (;;) {
            {
                std::lock_guard<std::mutex> lock(m_fanout->mu);
                if (m_fanout->ready == m_s.fanout.workers) break;
            }
            if (m_p.tasks->failed()) break;  // the join below rethrows it
            m_p.clock.sleep_for(Millis{m_s.fanout.poll_ms});
        }
        if (!m_p.tasks->failed()) read_loop();
        {
            std::lock_guard<std::mutex> lock(m_fanout->mu);
            m_fanout->stop = true;
            if (m_p.tasks->failed()) m_fanout->abort = true;  // its job will never be over
        }
        m_p.tasks->join_all();
    }

    bool fanout_idle() {
        if (!m_fanout) return true;
        std::lock_guard<std::mutex> lock(m_fanout->mu);
        return m_fanout->in_flight == 0;
    }

    // The reader puts the entry on its order's FIFO (or the one FIFO): no XACK, the worker sends it.
    void dispatch(const StreamEntry& entry, const Event& ev) {
        const bool per_key = m_s.fanout.dispatch == FanoutSpec::Dispatch::per_key;
        const int64_t key = per_key ? ev.order : 0;
        size_t ahead = 0;
        {
            std::lock_guard<std::mutex> lock(m_fanout->mu);
            auto& q = m_fanout->fifo[key];
            ahead = q.size() + (per_key && m_fanout->busy.count(key) ? 1 : 0);
            q.push_back(Fanout::Job{entry, ev, m_p.clock.now()});
            ++m_fanout->in_flight;
            if (per_key && q.size() == 1 && !m_fanout->busy.count(key)) m_fanout->runnable.push_back(key);
        }
        record(Op::dispatch, json_object("key", key, "ahead", ahead), entry.id, &ev);
    }

    // The next job a free worker may take: per_key, the head of the first order waiting that no
    // worker is on (the order is then this worker's until its job is over); any_worker, the head
    // of the one FIFO.
    std::optional<std::pair<int64_t, Fanout::Job>> take(Fanout& f) {
        std::lock_guard<std::mutex> lock(f.mu);
        int64_t key = 0;
        if (m_s.fanout.dispatch == FanoutSpec::Dispatch::per_key) {
            if (f.runnable.empty()) return std::nullopt;
            key = f.runnable.front();
            f.runnable.pop_front();
            f.busy.insert(key);
        }
        auto it = f.fifo.find(key);
        if (it == f.fifo.end() || it->second.empty()) return std::nullopt;
        std::pair<int64_t, Fanout::Job> out{key, std::move(it->second.front())};
        it->second.pop_front();
        return out;
    }

    void job_over(Fanout& f, int64_t key) {
        std::lock_guard<std::mutex> lock(f.mu);
        --f.in_flight;
        if (m_s.fanout.dispatch != FanoutSpec::Dispatch::per_key) return;
        f.busy.erase(key);
        if (!f.fifo[key].empty()) f.runnable.push_back(key);
    }

    // A worker: takes a job, runs it as a consumer does (cost, write, XACK only after the write),
    // hands its order back; idle, it looks again every poll_ms; ends when the reader stopped and
    // nothing is left.
    void run_worker(Fanout& f) {
        try {
            work(f);
        } catch (...) {
            std::lock_guard<std::mutex> lock(f.mu);
            f.abort = true;  // the other workers end too; the reader sees the failure and ends the role
            throw;
        }
    }

    void work(Fanout& f) {
        {
            std::lock_guard<std::mutex> lock(f.mu);
            ++f.ready;  // the task's ports (its connections) are up
        }
        for (;;) {
            {
                std::lock_guard<std::mutex> lock(f.mu);
                if (f.abort) return;
            }
            auto job = take(f);
            if (!job) {
                {
                    std::lock_guard<std::mutex> lock(f.mu);
                    if (f.stop && f.in_flight == 0) return;
                }
                m_p.clock.sleep_for(Millis{m_s.fanout.poll_ms});
                continue;
            }
            const auto& [key, j] = *job;
            record(Op::take, json_object("waited_ms", (m_p.clock.now() - j.queued_at).count() / 1'000'000), j.entry.id,
                   &j.ev);
            try {
                apply(j.entry, j.ev);
            } catch (const KvError& e) {
                ride_out(e);  // the XACK (or the lock) failed in a lab that faults Redis: the entry stays pending
            }
            job_over(f, key);
        }
    }

    // P3's reorder buffer: the order's next version goes through (and then whatever it held of
    // the versions after it), a later one waits unacknowledged, an older one is late.
    void buffer(const StreamEntry& entry, const Event& ev) {
        int64_t& last = m_last_applied[ev.order];
        if (ev.v == last + 1) {
            // A failed job leaves the order's gap open: its later versions stay held (the key is blocked).
            if (!apply(entry, ev)) return;
            last = ev.v;
            release_in_order(ev.order);
        } else if (ev.v > last + 1) {
            record(Op::buffer_hold, json_object("waiting_for", last + 1), entry.id, &ev);
            m_held[ev.order].emplace(ev.v, Held{entry, ev, m_p.clock.now()});
        } else {
            const bool drop = m_s.buffer.late == BufferSpec::Late::drop;
            record(Op::late, json_object("last_applied", last, "action", drop ? "drop" : "apply"), entry.id, &ev);
            if (drop) {
                acknowledge(entry.id);
            } else {
                apply(entry, ev);
            }
        }
    }

    // What the order's buffer holds from its next version on, in version order.
    void release_in_order(int64_t order) {
        auto held = m_held.find(order);
        int64_t& last = m_last_applied[order];
        while (held != m_held.end() && !held->second.empty() && held->second.begin()->first == last + 1) {
            const Held h = held->second.begin()->second;
            held->second.erase(held->second.begin());
            record(Op::buffer_release,
                   json_object("reason", "in_order", "held_ms", (m_p.clock.now() - h.since).count() / 1'000'000),
                   h.entry.id, &h.ev);
            if (!apply(h.entry, h.ev)) return;  // held versions are not poison, but a failed one blocks the rest
            last = h.ev.v;
        }
        if (held != m_held.end() && held->second.empty()) m_held.erase(held);
    }

    // With a gap timeout: an order whose oldest held event waited that long gives up on the gap.
    void release_timed_out() {
        if (m_s.buffer.gap_timeout_ms <= 0) return;
        for (auto it = m_held.begin(); it != m_held.end();) {
            const int64_t order = it->first;
            const Held h = it->second.begin()->second;
            ++it;  // release_in_order may erase this order's entry
            if (m_p.clock.now() - h.since < Millis{m_s.buffer.gap_timeout_ms}) continue;
            int64_t& last = m_last_applied[order];
            nlohmann::json skipped = nlohmann::json::array();
            for (int64_t v = last + 1; v < h.ev.v; ++v) skipped.push_back(v);
            m_held[order].erase(m_held[order].begin());
            record(Op::buffer_release,
                   json_object("reason", "gap_timeout", "held_ms", (m_p.clock.now() - h.since).count() / 1'000'000,
                               "skipped", std::move(skipped)),
                   h.entry.id, &h.ev);
            apply(h.entry, h.ev);
            last = h.ev.v;
            release_in_order(order);
        }
    }

    // How long the next read may block: no later than the first held event's gap timeout.
    Millis buffer_block(Millis block) const {
        if (m_s.buffer.gap_timeout_ms <= 0 || m_held.empty()) return block;
        Nanos first = Nanos::max();
        for (const auto& [order, held] : m_held) first = std::min(first, held.begin()->second.since);
        const Nanos due = first + Millis{m_s.buffer.gap_timeout_ms};
        const Nanos now = m_p.clock.now();
        const Millis left = due > now ? std::chrono::ceil<Millis>(due - now) : Millis{1};
        return std::max(Millis{1}, std::min(block, left));
    }

    // A poison entry's job failed on this delivery: recorded, and left pending for the next claim;
    // with recovery.max_deliveries reached, XADDed to the dead-letter stream and acknowledged.
    // Returns whether the entry is done with (dead-lettered).
    bool job_failed(const StreamEntry& entry, const Event& ev) {
        record(Op::job_fail,
               json_object("deliveries", entry.deliveries, "error", "the job failed (a poison entry: \"fails\": true)"),
               entry.id, &ev);
        const int64_t cap = m_s.recovery.max_deliveries;
        if (cap <= 0 || entry.deliveries < cap) return false;
        const std::string dead_stream = m_s.stream.key + ":dead";
        Fields fields = entry.fields;
        fields.emplace_back("dead_from", entry.id);
        fields.emplace_back("deliveries", std::to_string(entry.deliveries));
        const std::vector<std::string> ids = m_p.stream.xadd(dead_stream, {fields});
        RELAB_CHECK(ids.size() == 1, "one XADD to the dead-letter stream answers one entry ID");
        record(Op::dead_letter,
               json_object("deliveries", entry.deliveries, "dead_stream", dead_stream, "dead_entry", ids.front()),
               entry.id, &ev);
        acknowledge(entry.id);
        return true;
    }

    // The per-order lock around a job (S4), when the lab has one.
    struct HeldLock {
        std::string token;  // unique to this holder
        std::string key;
        int64_t locked_ns = 0;
    };

    std::optional<HeldLock> acquire_lock(const StreamEntry& entry, const Event& ev) {
        if (!m_s.lock.enabled) return std::nullopt;
        HeldLock held{m_actor + ":" + entry.id, lock_key_for(m_s.lock, ev.order), 0};
        if (m_s.lock.skew_ms.max > 0)
            m_p.clock.sleep_for(Millis{m_p.rng.uniform(m_s.lock.skew_ms.min, m_s.lock.skew_ms.max)});
        int attempts = 1;
        while (!m_p.kv.set_nx_px(held.key, held.token, Millis{m_s.lock.ttl_ms})) {
            m_p.clock.sleep_for(Millis{m_s.lock.retry_ms});
            ++attempts;
        }
        held.locked_ns = m_p.clock.now().count();
        record(Op::lock_acquire, json_object("key", held.key, "attempts", attempts, "ttl_ms", m_s.lock.ttl_ms),
               std::string(), &ev);
        return held;
    }

    void release_lock(const std::optional<HeldLock>& held, const Event& ev) {
        if (!held) return;
        const int64_t released = m_p.kv.delete_if_equals(held->key, held->token);
        // held_ms against ttl_ms tells whether the lock had expired before this release.
        record(Op::lock_release,
               json_object("key", held->key, "result", released, "method", m_p.kv.delete_if_equals_method(), "held_ms",
                           (m_p.clock.now().count() - held->locked_ns) / 1'000'000, "ttl_ms", m_s.lock.ttl_ms),
               std::string(), &ev);
    }

    // The job's own cost: a generated workload's drawn for this event, else job_cost_ms by type.
    void spend_job_cost(const Event& ev) {
        // Only a generated workload has costs of its own: no key to build for the others.
        const auto own = m_event_cost_us->empty() ? m_event_cost_us->end()
                                                  : m_event_cost_us->find(event_cost_key(ev.order, ev.type, ev.v));
        if (own != m_event_cost_us->end()) {
            if (own->second > 0) m_p.clock.sleep_for(Micros{own->second});
        } else if (const auto cost = m_s.job_cost_ms.find(ev.type); cost != m_s.job_cost_ms.end()) {
            m_p.clock.sleep_for(Millis{cost->second});
        }
    }

    OrderWrite order_write_of(const StreamEntry& entry, const Event& ev) const {
        OrderWrite w;
        w.order = ev.order;
        w.status = ev.type;
        w.mode = m_s.write.mode;
        w.version = m_s.write.version_source == VersionSource::entry_id ? entry_id_as_version(entry.id) : ev.v;
        w.dedupe = m_s.write.dedupe == WriteDedupe::aggregate_version;
        w.event_version = ev.v;
        w.delta = ev.delta.value_or(0);
        w.amount = ev.amount.value_or(0);
        return w;
    }

    // The job for one event: [lock], its cost, the write, [release], XACK. Returns false when the job
    // failed and its entry stays pending (a poison entry under the cap, or without one).
    bool apply(const StreamEntry& entry, const Event& ev) {
        const std::optional<HeldLock> held = acquire_lock(entry, ev);
        if (m_s.write.isolation != WriteIsolation::none) {
            if (!apply_in_transaction(entry, ev)) {
                if (held) m_p.kv.delete_if_equals(held->key, held->token);
                return job_failed(entry, ev);
            }
        } else {
            spend_job_cost(ev);
            if (poisoned(ev)) {
                if (held) m_p.kv.delete_if_equals(held->key, held->token);
                return job_failed(entry, ev);
            }
            OrderWrite w = order_write_of(entry, ev);
            if (m_s.write.commit == WriteSpec::Commit::batch) {
                // The write waits for the read's other jobs: flush_writes sends them in one transaction
                // and acknowledges them after it (the loader allows no lock or side effect here).
                m_batch.push_back(BatchedWrite{entry.id, ev, std::move(w)});
                return true;
            }
            const WriteResult res = write(w);
            record(Op::write, write_data(w, res), entry.id, &ev);
            // The job's email or webhook goes out once the job is done, whatever its write did, as
            // application code that sends it after the UPDATE does.
            if (m_s.write.side_effect) {
                const int64_t seq = with_store_retry([&] { return m_p.orders.send_side_effect(w.order, ev.type, ev.v); });
                record(Op::side_effect,
                       json_object("order", w.order, "version", ev.v, "seq", seq, "applied", res.affected > 0),
                       entry.id, &ev);
            }
        }
        release_lock(held, ev);
        acknowledge(entry.id);
        return true;
    }

    // write.isolation: the job in one transaction at that level, as application code that reads the
    // row, runs the job and writes does. A serialization failure (40001: another consumer committed
    // a change to the row after this snapshot) is recorded and the whole transaction, job and all,
    // runs again, up to write.serialization_retries times; only a committed try is a write. When they
    // run out the entry is acknowledged unwritten, as a consumer that logs the error and moves on
    // does. Returns false when the job failed (a poison entry: rolled back, nothing written).
    bool apply_in_transaction(const StreamEntry& entry, const Event& ev) {
        const OrderWrite w = order_write_of(entry, ev);
        const WriteIsolation level = m_s.write.isolation;
        for (int attempt = 1;; ++attempt) {
            std::optional<int64_t> seen;
            try {
                std::optional<WriteResult> res = with_store_retry([&] { return try_transaction(ev, w, seen); });
                if (!res) return false;
                nlohmann::json wd = write_data(w, *res);
                wd["sql"] = job_transaction_sql(level, w.order, res->sql);
                wd["isolation"] = to_string(level);
                wd["attempts"] = attempt;
                record(Op::write, std::move(wd), entry.id, &ev);
                return true;
            } catch (const SerializationFailure& e) {
                const bool retry = attempt <= m_s.write.serialization_retries;
                nlohmann::json data =
                    json_object("attempt", attempt, "isolation", to_string(level), "error", e.what(), "retry", retry);
                if (seen) data["snapshot_version"] = *seen;
                record(Op::serialization_failure, std::move(data), entry.id, &ev);
                if (!retry) return true;
            }
        }
    }

    // One try of the job's transaction: BEGIN ISOLATION LEVEL …; SELECT version (the snapshot, in
    // `seen`); the job; the UPDATE; COMMIT. nullopt: the job failed and the transaction rolled back.
    // Any exception rolls it back first (SerializationFailure, a lost connection): under SERIALIZABLE
    // even the first SELECT may be refused, and a block left aborted would refuse the next BEGIN.
    std::optional<WriteResult> try_transaction(const Event& ev, const OrderWrite& w, std::optional<int64_t>& seen) {
        try {
            seen = m_p.orders.begin_job(m_s.write.isolation, w.order);
            spend_job_cost(ev);
            if (poisoned(ev)) {
                m_p.orders.rollback_job();
                return std::nullopt;
            }
            WriteResult res = m_p.orders.write_state(w);
            m_p.orders.commit_job();
            return res;
        } catch (...) {
            m_p.orders.rollback_job();
            throw;
        }
    }

    // What a write record says: the statement, what it did and, for the modes that have them, the
    // version, the row's fate and the inbox's decision.
    static nlohmann::json write_data(const OrderWrite& w, const WriteResult& res) {
        nlohmann::json wd = json_object("status", w.status, "mode", to_string(w.mode), "affected", res.affected, "sql", res.sql);
        const WriteModeInfo& mode = write_mode_info(w.mode);
        if (mode.sets_version) wd["version"] = w.version;
        // P4: the change the write added, or the amount it set, as the statement has it.
        if (mode.amount == AmountWrite::add) wd["delta"] = w.delta;
        if (mode.amount == AmountWrite::set) wd["amount"] = w.amount;
        if (!res.row_action.empty()) wd["row_action"] = res.row_action;
        if (mode.statement == WriteStatement::insert_then_update) wd["insert_conflict"] = res.insert_conflict;
        if (w.dedupe) {
            // The job ran and decided: applied, or skipped as a copy of an event already applied.
            wd["dedupe"] = res.duplicate ? "skipped" : "applied";
            if (res.duplicate)
                wd["reason"] = fmt::format("duplicate: ({}, v{}) is already in tmp_inbox", w.order, w.event_version);
        }
        return wd;
    }

    // write.commit "batch": the read's writes in one transaction (one round trip), each recorded
    // with the batch's size once it committed, then acknowledged. On a store error the role ends,
    // or in a lab that faults PostgreSQL the whole batch is tried again: none of it took effect.
    void flush_writes() {
        if (m_batch.empty()) return;
        std::vector<BatchedWrite> batch = std::move(m_batch);
        m_batch.clear();
        std::vector<OrderWrite> ws;
        ws.reserve(batch.size());
        for (const auto& b : batch) ws.push_back(b.write);
        const std::vector<WriteResult> results = with_store_retry([&] { return m_p.orders.write_states(ws); });
        for (size_t i = 0; i < batch.size(); ++i) {
            nlohmann::json wd = write_data(batch[i].write, results.at(i));
            wd["batch"] = batch.size();
            record(Op::write, std::move(wd), batch[i].entry, &batch[i].ev);
        }
        for (const auto& b : batch) acknowledge(b.entry);
    }

    // XACK for an entry whose job is over: now, or with stream.ack "batch" once the read it came in
    // is over (flush_acks).
    void acknowledge(const std::string& id) {
        if (m_s.stream.ack == StreamSpec::Ack::batch) {
            m_unacked.push_back(id);
            return;
        }
        m_p.stream.xack(m_key, m_s.stream.group, id);
        record(Op::ack, nlohmann::json::object(), id);
        if (m_in_claim_round) m_acked_this_round.insert(id);
    }

    // stream.ack "batch": one XACK for every entry of the read whose job is over. On a Redis error
    // they stay pending in the group, as after a failed XACK of one entry.
    void flush_acks() {
        flush_writes();
        if (m_unacked.empty()) return;
        const std::vector<std::string> ids = std::move(m_unacked);
        m_unacked.clear();
        m_p.stream.xack_all(m_key, m_s.stream.group, ids);
        for (const auto& id : ids) record(Op::ack, json_object("batch", ids.size()), id);
    }

    const RoleSettings& m_s;
    std::string m_actor;
    std::string m_name;  // its consumer name in the group: the actor, or per process (name_per_process)
    RolePorts& m_p;
    std::string m_key;  // the stream this consumer reads
    static std::string event_cost_key(int64_t order, const std::string& type, int64_t v) {
        return std::to_string(order) + ':' + type + ':' + std::to_string(v);
    }
    std::shared_ptr<const EventCosts> m_event_cost_us;  // read only once built: shared by S3's worker threads
    // The reorder buffer (buffer.enabled): per order, the last version applied and the events
    // held back, by version, with when each was held.
    struct Held {
        StreamEntry entry;
        Event ev;
        Nanos since;
    };
    std::map<int64_t, int64_t> m_last_applied;
    std::map<int64_t, std::map<int64_t, Held>> m_held;
    std::shared_ptr<Fanout> m_fanout;  // the reader's FIFOs, with fanout (S3)
    std::vector<std::string> m_unacked;  // stream.ack "batch": jobs over in this read, not yet acknowledged
    bool m_in_claim_round = false;
    std::set<std::string> m_acked_this_round;  // entries acknowledged while a claim round's entries are handled
    struct BatchedWrite {
        std::string entry;
        Event ev;
        OrderWrite write;
    };
    std::vector<BatchedWrite> m_batch;  // write.commit "batch": jobs run in this read, writes not yet sent
};

}  // namespace

void run_consumer(const RoleSettings& s, const std::string& actor, RolePorts& ports) {
    Consumer c(s, actor, ports);
    if (s.recovery.name_per_process()) c.name_per_process();
    c.run();
}

void run_reaper(const RoleSettings& s, const std::string& actor, RolePorts& ports) { Consumer(s, actor, ports).run_reaper(); }

}  // namespace relab
