#include "roles/event.h"
#include "roles/roles.h"

#include <algorithm>

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

class Consumer {
public:
    Consumer(const RoleSettings& s, const std::string& actor, RolePorts& p) : m_s(s), m_actor(actor), m_p(p) {}

    // A worker: [its own pending entries first], then new ones, [claiming idle entries as it goes].
    void run() {
        const RecoverySpec& rec = m_s.recovery;
        const bool claims = rec.autoclaim.enabled && !rec.autoclaim.in_reaper;
        Millis block{m_s.stream.block_ms};
        if (claims) block = std::min(block, Millis{rec.autoclaim.every_ms});
        Nanos next_claim = m_p.clock.now() + Millis{rec.autoclaim.every_ms};
        bool pending_done = !rec.pending_first;
        for (;;) {
            try {
                // A restarted worker: what it was given before it died comes back first (XREADGROUP ... 0).
                while (!pending_done) {
                    auto entries = m_p.stream.xreadgroup_pending(m_s.stream.group, m_actor, m_s.stream.key,
                                                                 m_s.stream.read_count);
                    if (entries.empty()) pending_done = true;
                    for (const auto& e : entries) handle(e, "pending");
                }
                if (claims && m_p.clock.now() >= next_claim) {
                    claim_round();
                    next_claim = m_p.clock.now() + Millis{rec.autoclaim.every_ms};
                }
                auto entries = m_p.stream.xreadgroup(m_s.stream.group, m_actor, m_s.stream.key,
                                                     m_s.stream.read_count, block);
                if (entries.empty()) {
                    if (m_p.kv.exists(kStopKey)) return;
                    continue;
                }
                for (const auto& e : entries) handle(e, "new");
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
    void record(Op op, nlohmann::json data) {
        m_p.history.record(HistoryRecord{0, m_p.clock.now().count(), m_actor, op, std::move(data)});
    }

    // One full XAUTOCLAIM scan from 0-0; each claimed entry is processed like a new one.
    void claim_round() {
        const auto& ac = m_s.recovery.autoclaim;
        std::string cursor = "0-0";
        do {
            auto r = m_p.stream.xautoclaim(m_s.stream.key, m_s.stream.group, m_actor, Millis{ac.min_idle_ms}, cursor,
                                           ac.count);
            if (!r.claimed.empty() || !r.deleted.empty()) {
                nlohmann::json ids = nlohmann::json::array();
                for (const auto& e : r.claimed) ids.push_back(e.id);
                record(Op::claim, {{"claimed", ids}, {"deleted", r.deleted}, {"min_idle_ms", ac.min_idle_ms}});
            }
            for (const auto& e : r.claimed) handle(e, "claim");
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
                if (m_p.stream.create_group(m_s.stream.key, m_s.stream.group, "0"))
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
        for (;;) {
            try {
                return m_p.orders.write_state(w);
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
            record(Op::receive, {{"entry", entry.id}, {"deliveries", entry.deliveries}, {"via", via}, {"deleted", true}});
            m_p.stream.xack(m_s.stream.key, m_s.stream.group, entry.id);
            record(Op::ack, {{"entry", entry.id}});
            return;
        }
        const Event ev = event_from_entry(entry);
        record(Op::receive, {{"entry", entry.id}, {"event", event_json(ev)}, {"deliveries", entry.deliveries}, {"via", via}});

        const std::string token = m_actor + ":" + entry.id;  // unique to this holder
        std::string lock_key;
        int64_t locked_ns = 0;
        if (m_s.lock.enabled) {
            lock_key = lock_key_for(m_s.lock, ev.order);
            if (m_s.lock.skew_max_ms > 0)
                m_p.clock.sleep_for(Millis{m_p.rng.uniform(m_s.lock.skew_min_ms, m_s.lock.skew_max_ms)});
            int attempts = 1;
            while (!m_p.kv.set_nx_px(lock_key, token, Millis{m_s.lock.ttl_ms})) {
                m_p.clock.sleep_for(Millis{m_s.lock.retry_ms});
                ++attempts;
            }
            locked_ns = m_p.clock.now().count();
            record(Op::lock_acquire,
                   {{"key", lock_key}, {"attempts", attempts}, {"ttl_ms", m_s.lock.ttl_ms}, {"event", event_json(ev)}});
        }

        const auto cost = m_s.job_cost_ms.find(ev.type);
        if (cost != m_s.job_cost_ms.end()) m_p.clock.sleep_for(Millis{cost->second});

        OrderWrite w;
        w.order = ev.order;
        w.status = ev.type;
        w.mode = m_s.write.mode;
        w.version = m_s.write.version_source == VersionSource::entry_id ? entry_id_as_version(entry.id) : ev.v;
        w.dedupe = m_s.write.dedupe == WriteDedupe::aggregate_version;
        w.event_version = ev.v;
        const WriteResult res = write(w);
        nlohmann::json wd = {{"entry", entry.id}, {"event", event_json(ev)}, {"status", w.status}, {"mode", to_string(w.mode)},
                             {"affected", res.affected}, {"sql", res.sql}};
        if (w.mode == WriteMode::cas) wd["version"] = w.version;
        if (w.dedupe) {
            // The job ran and decided: applied, or skipped as a copy of an event already applied.
            wd["dedupe"] = res.duplicate ? "skipped" : "applied";
            if (res.duplicate)
                wd["reason"] = fmt::format("duplicate: ({}, v{}) is already in tmp_inbox", ev.order, ev.v);
        }
        record(Op::write, std::move(wd));

        if (m_s.lock.enabled) {
            const int64_t released = m_p.kv.delete_if_equals(lock_key, token);
            // held_ms against ttl_ms tells whether the lock had expired before this release.
            record(Op::lock_release, {{"key", lock_key},
                                    {"result", released},
                                    {"method", m_p.kv.delete_if_equals_method()},
                                    {"event", event_json(ev)},
                                    {"held_ms", (m_p.clock.now().count() - locked_ns) / 1'000'000},
                                    {"ttl_ms", m_s.lock.ttl_ms}});
        }
        m_p.stream.xack(m_s.stream.key, m_s.stream.group, entry.id);
        record(Op::ack, {{"entry", entry.id}});
    }

    const RoleSettings& m_s;
    std::string m_actor;
    RolePorts& m_p;
};

}  // namespace

void run_consumer(const RoleSettings& s, const std::string& actor, RolePorts& ports) { Consumer(s, actor, ports).run(); }

void run_reaper(const RoleSettings& s, const std::string& actor, RolePorts& ports) { Consumer(s, actor, ports).run_reaper(); }

}  // namespace relab
