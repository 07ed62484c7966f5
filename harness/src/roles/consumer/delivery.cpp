#include "roles/consumer/delivery.h"

#include <algorithm>

#include "roles/event.h"
#include "roles/roles.h"
#include "util/json_object.h"

namespace relab {

void ConsumerDelivery::read_loop() {
    const RoleSettings& s = m_c.settings();
    RolePorts& p = m_c.ports();
    const RecoverySpec& rec = s.recovery;
    const bool claims = rec.autoclaim.enabled && !rec.autoclaim.in_reaper();
    Millis block{s.stream.block_ms};
    if (claims) block = std::min(block, Millis{rec.autoclaim.every_ms});
    Nanos next_claim = p.clock.now() + Millis{rec.autoclaim.every_ms};
    bool pending_done = !rec.pending_first;
    std::string pending_after = "0";
    for (;;) {
        try {
            if (!pending_done) read_pending(pending_after, pending_done);
            if (claims && p.clock.now() >= next_claim) {
                claim_round();
                next_claim = p.clock.now() + Millis{rec.autoclaim.every_ms};
            }
            const Millis read_block = m_sink.before_read(block);
            auto entries = p.stream.xreadgroup(s.stream.group, m_c.name(), m_c.key(), s.stream.read_count, read_block);
            if (m_sink.failed()) return;
            if (entries.empty()) {
                m_sink.flush();  // what a read cut short by a Redis error left unacknowledged
                if (m_sink.holds_nothing() && p.kv.exists(kStopKey)) return;
                continue;
            }
            for (const auto& e : entries) receive(e, "new");
            m_sink.flush();
        } catch (const KvError& e) {
            m_c.ride_out(e);
        }
    }
}

// A restarted worker: what it was given before it died comes back first (XREADGROUP ... 0, then
// after the last one read: S3's reader does not acknowledge them itself).
void ConsumerDelivery::read_pending(std::string& after, bool& done) {
    const RoleSettings& s = m_c.settings();
    do {
        auto entries =
            m_c.ports().stream.xreadgroup_pending(s.stream.group, m_c.name(), m_c.key(), s.stream.read_count, after);
        if (entries.empty()) done = true;
        for (const auto& e : entries) {
            after = e.id;
            receive(e, "pending");
        }
        m_sink.flush();
    } while (!done);
}

void ConsumerDelivery::run_reaper() {
    RolePorts& p = m_c.ports();
    for (;;) {
        p.clock.sleep_for(Millis{m_c.settings().recovery.autoclaim.every_ms});
        try {
            if (p.kv.exists(kStopKey)) return;
            claim_round();
        } catch (const KvError& e) {
            m_c.ride_out(e);
        }
    }
}

void ConsumerDelivery::claim_round() {
    const auto& ac = m_c.settings().recovery.autoclaim;
    std::string cursor = "0-0";
    do {
        auto r = m_c.ports().stream.xautoclaim(m_c.key(), m_c.settings().stream.group, m_c.name(),
                                               Millis{ac.min_idle_ms}, cursor, ac.count);
        if (!r.claimed.empty() || !r.deleted.empty()) {
            nlohmann::json ids = nlohmann::json::array();
            for (const auto& e : r.claimed) ids.push_back(e.id);
            // deleted: pending IDs no longer in the stream, which Redis 7's XAUTOCLAIM drops from the PEL.
            m_c.record(Op::claim, {{"claimed", ids},
                                   {"deleted", r.deleted},
                                   {"deleted_count", r.deleted.size()},
                                   {"min_idle_ms", ac.min_idle_ms}});
        }
        // An entry this round already acknowledged (P3 released its held copy when the gap before
        // it closed) is done: the claim's copy of it is stale.
        m_acks.begin_round();
        for (const auto& e : r.claimed)
            if (!m_acks.acked_in_round(e.id)) receive(e, "claim");
        m_sink.flush();
        m_acks.end_round();
        cursor = r.next;
    } while (cursor != "0-0");
}

void ConsumerDelivery::receive(const StreamEntry& entry, const char* via) {
    if (entry.fields.empty()) {
        // Pending, but deleted from the stream meanwhile: nothing to process.
        m_c.record(Op::receive, json_object("deliveries", entry.deliveries, "via", via, "deleted", true), entry.id);
        m_acks.acknowledge(entry.id);
        return;
    }
    const Event ev = event_from_entry(entry);
    nlohmann::json data = json_object("deliveries", entry.deliveries, "via", via);
    if (m_c.name() != m_c.actor()) data["consumer"] = m_c.name();  // the group knows it by this name
    m_c.record(Op::receive, std::move(data), entry.id, &ev);
    m_sink.process(entry, ev);
}

}  // namespace relab
