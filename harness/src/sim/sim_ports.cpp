#include "sim/sim_ports.h"

#include "roles/order_sql.h"

#include <stdexcept>

#include <fmt/format.h>

namespace relab::sim {

std::vector<std::string> SimStream::xadd(const std::string& stream, const std::vector<Fields>& batch) {
    return m_world.xadd(stream, batch, m_conn);
}

std::string SimStream::xadd_idmp(const std::string& stream, const Fields& fields, const std::string& producer_id,
                                 const std::string& iid) {
    return m_world.xadd_idmp(stream, fields, producer_id, iid, m_conn);
}

std::vector<StreamEntry> SimStream::xreadgroup(const std::string& group, const std::string& consumer,
                                               const std::string& stream, int count, Millis block) {
    return m_world.xreadgroup(stream, group, consumer, count, block, m_conn);
}

std::vector<StreamEntry> SimStream::xreadgroup_pending(const std::string& group, const std::string& consumer,
                                                       const std::string& stream, int count, const std::string& after) {
    return m_world.round_trip([&] {
        return m_world.at_redis([&] {
            auto out = m_world.streams().xreadgroup_pending(stream, group, consumer, count, m_world.now(), after);
            m_world.stream_changed();
            return out;
        }, m_conn);
    });
}

Stream::AutoClaimed SimStream::xautoclaim(const std::string& stream, const std::string& group,
                                          const std::string& consumer, Millis min_idle, const std::string& start,
                                          int count) {
    return m_world.round_trip([&] {
        return m_world.at_redis([&] {
            auto r = m_world.streams().xautoclaim(stream, group, consumer, min_idle, start, count, m_world.now());
            if (!r.claimed.empty() || !r.deleted.empty()) m_world.stream_changed();
            return AutoClaimed{std::move(r.next), std::move(r.claimed), std::move(r.deleted)};
        }, m_conn);
    });
}

void SimStream::xack(const std::string& stream, const std::string& group, const std::string& id) {
    m_world.round_trip([&] {
        m_world.at_redis([&] {
            m_world.streams().xack(stream, group, id);
            m_world.stream_changed();
        }, m_conn);
    });
}

void SimStream::xack_all(const std::string& stream, const std::string& group, const std::vector<std::string>& ids) {
    m_world.round_trip([&] {
        m_world.at_redis([&] {
            for (const auto& id : ids) m_world.streams().xack(stream, group, id);
            m_world.stream_changed();
        }, m_conn);
    });
}

bool SimStream::create_group(const std::string& stream, const std::string& group, const std::string& start) {
    return m_world.round_trip([&] {
        return m_world.at_redis([&] {
            try {
                m_world.streams().create_group(stream, group, start, true);
            } catch (const StreamError& e) {
                if (std::string(e.what()).find("BUSYGROUP") != std::string::npos) return false;
                throw;
            }
            m_world.stream_changed();
            return true;
        }, m_conn);
    });
}

std::vector<StreamEntry> SimStream::xrange(const std::string& stream) {
    return m_world.round_trip([&] { return m_world.at_redis([&] { return m_world.streams().xrange(stream); }, m_conn); });
}

// As the real port: XINFO GROUPS (pending 0, last-delivered-id at the stream's last entry) in one
// round trip; a missing stream has nothing left, a missing group is not drained.
bool SimStream::group_drained(const std::string& stream, const std::string& group) {
    return m_world.round_trip([&] {
        return m_world.at_redis([&] {
            if (!m_world.streams().exists(stream)) return true;
            if (!m_world.streams().last_delivered(stream, group)) return false;
            return m_world.streams().drained(stream, group);
        }, m_conn);
    });
}

void SimStream::wait_readers_blocked(int readers, Millis timeout) { m_world.wait_readers_blocked(readers, timeout); }

bool SimKv::set_nx_px(const std::string& key, const std::string& value, Millis ttl) {
    return m_world.round_trip([&] { return m_world.at_redis([&] { return m_world.kv().set(key, value, SetOptions::nx_px(ttl), m_world.now()).written; }, m_conn); });
}

int64_t SimKv::delete_if_equals(const std::string& key, const std::string& token) {
    return m_world.round_trip([&] { return m_world.at_redis([&] { return m_world.kv().delete_if_equals(key, token, m_world.now()); }, m_conn); });
}

std::string SimKv::delete_if_equals_method() const {
    return m_world.kv().delex ? "DELEX IFEQ" : "compare-and-delete Lua script";
}

bool SimKv::exists(const std::string& key) {
    return m_world.round_trip([&] { return m_world.at_redis([&] { return m_world.kv().exists(key, m_world.now()); }, m_conn); });
}

KvSetResult SimKv::set(const std::string& key, const std::string& value, const KvSetOptions& o) {
    SetOptions so;
    so.condition = o.condition;
    if (o.ttl.count() > 0) so.px = o.ttl;
    so.keepttl = o.keepttl;
    so.get = o.get;
    return m_world.round_trip([&] { return m_world.at_redis([&] { return m_world.kv().set(key, value, so, m_world.now()); }, m_conn); });
}

std::optional<std::string> SimKv::get(const std::string& key) {
    return m_world.round_trip([&] { return m_world.at_redis([&] { return m_world.kv().get(key, m_world.now()); }, m_conn); });
}

int64_t SimKv::del(const std::string& key) {
    return m_world.round_trip([&] { return m_world.at_redis([&] { return m_world.kv().del(key, m_world.now()); }, m_conn); });
}

int64_t SimKv::wait_replicas(int64_t replicas, Millis timeout) {
    if (replicas > 0 && timeout.count() <= 0)
        throw SimError("WAIT with no timeout on the simulated server, which has no replica, would block forever");
    m_world.round_trip([] {});
    // The reply leaves the server when the timeout runs out; its way back is the same either way.
    if (replicas > 0) m_world.scheduler().sleep_for(timeout);
    return 0;
}

int64_t SimOrderTable::place_order(int64_t user_id, const std::string& idem_key, const std::string& payload) {
    return m_world.round_trip([&] { return m_world.placed_orders().place_order(user_id, idem_key, payload); });
}

std::vector<PlacedOrder> SimOrderTable::orders() {
    return m_world.round_trip([&] { return m_world.placed_orders().orders(); });
}

WriteResult SimOrderStore::write_state(const OrderWrite& w) {
    WriteResult out;
    out.sql = order_write_sql(w);
    if (w.dedupe) {  // plain or CAS (the loader refuses the inbox with the other modes)
        // As RealOrderStore: BEGIN; INSERT INTO tmp_inbox ... ON CONFLICT DO NOTHING; UPDATE; COMMIT,
        // taking effect at once at the COMMIT (a second copy of the event finds the inbox row there).
        const std::string inbox =
            fmt::format("INSERT INTO tmp_inbox (aggregate_id, version) VALUES ({}, {}) ON CONFLICT DO NOTHING", w.order,
                        w.event_version);
        for (int i = 0; i < 2; ++i) m_world.round_trip([&] { m_world.at_postgres([] {}, m_conn); });  // BEGIN, INSERT
        const bool applied = m_world.round_trip([&] {
            return m_world.at_postgres(
                [&] {
                    if (!m_world.inbox().emplace(w.order, w.event_version).second) return false;
                    out.affected = m_world.orders().update_autocommit(RowUpdate::from_order_write(w));
                    return true;
                },
                m_conn);
        });
        if (applied) {
            m_world.round_trip([&] { m_world.at_postgres([] {}, m_conn); });  // COMMIT
            out.sql = inbox + "; " + out.sql;
        } else {
            out.duplicate = true;
            out.sql = inbox + " → INSERT 0 0; ROLLBACK";
        }
        return out;
    }
    auto statement = [&](auto op) { return m_world.round_trip([&] { return m_world.at_postgres(op, m_conn); }); };
    const OrderRow row{w.order, w.status, w.version};
    switch (w.mode) {
        case WriteMode::plain:
        case WriteMode::cas:
            out.affected =
                statement([&] { return m_world.orders().update_autocommit(RowUpdate::from_order_write(w)); });
            break;
        case WriteMode::upsert: {
            const StatementResult r = statement([&] { return m_world.orders().upsert_autocommit(row); });
            if (r.failed()) throw SimError(fmt::format("upsert failed: {} {}", r.sqlstate, r.message));
            out.affected = r.affected;
            out.row_action = r.affected == 0 ? "none" : r.inserted ? "inserted" : "updated";
            break;
        }
        case WriteMode::insert_then_update: {
            const StatementResult ins = statement([&] { return m_world.orders().insert_autocommit(row); });
            if (!ins.failed()) {
                out.affected = ins.affected;
                out.row_action = ins.affected > 0 ? "inserted" : "none";
                break;
            }
            if (ins.sqlstate != "23505") throw SimError(fmt::format("INSERT failed: {} {}", ins.sqlstate, ins.message));
            out.insert_conflict = true;
            RowUpdate u;
            u.id = w.order;
            u.status = w.status;
            u.new_version = w.version;
            out.affected = statement([&] { return m_world.orders().update_autocommit(u); });
            out.row_action = out.affected > 0 ? "updated" : "none";
            out.sql += "; -- ERROR 23505 unique_violation, then: " + order_fallback_update_sql(w);
            break;
        }
    }
    return out;
}

std::vector<WriteResult> SimOrderStore::write_states(const std::vector<OrderWrite>& ws) {
    std::vector<WriteResult> out(ws.size());
    if (ws.empty()) return out;
    for (size_t i = 0; i < ws.size(); ++i) out[i].sql = batched_write_sql(ws[i]);
    m_world.round_trip([&] {
        m_world.at_postgres(
            [&] {
                for (size_t i = 0; i < ws.size(); ++i)
                    out[i].affected = m_world.orders().update_autocommit(RowUpdate::from_order_write(ws[i]));
            },
            m_conn);
    });
    return out;
}

int64_t SimOrderStore::send_side_effect(int64_t order, const std::string& event_type, int64_t version) {
    return m_world.round_trip(
        [&] { return m_world.at_postgres([&] { return m_world.orders().send_side_effect(order, event_type, version); }, m_conn); });
}

std::vector<SideEffectRow> SimOrderStore::side_effects() {
    return m_world.round_trip([&] { return m_world.at_postgres([&] { return m_world.orders().side_effects(); }, m_conn); });
}

std::vector<OrderRow> SimOrderStore::rows() {
    return m_world.round_trip([&] { return m_world.at_postgres([&] { return m_world.orders().rows(); }, m_conn); });
}

int64_t SimOutbox::record_change(int64_t order, const std::string& status, int64_t version) {
    for (int i = 0; i < 3; ++i) statement([] {});  // BEGIN, UPDATE, INSERT: nothing is visible before the COMMIT
    return statement([&] { return m_world.outbox().record_change(order, status, version); });
}

std::vector<OutboxRow> SimOutbox::unpublished(OutboxOrder order) {
    return statement([&] { return m_world.outbox().unpublished(order); });
}

void SimOutbox::mark_published(int64_t id, const std::string& entry_id) {
    if (m_in_round) return statement([&] { m_round_marks.emplace_back(id, entry_id); });
    statement([&] { m_world.outbox().mark_published(id, entry_id, m_world.now()); });
}

void SimOutbox::count_failed_attempt(int64_t id) {
    if (m_in_round) return statement([&] { m_round_marks.emplace_back(id, ""); });
    statement([&] { m_world.outbox().count_failed_attempt(id); });
}

void SimOutbox::begin_round() {
    m_in_round = false;  // a round whose connection was lost left nothing behind
    m_round_marks.clear();
    m_world.outbox().release(owner());
    statement([] {});
    m_in_round = true;
}

void SimOutbox::commit_round() {
    m_in_round = false;
    statement([&] {
        for (const auto& [id, entry] : m_round_marks) {
            if (entry.empty())
                m_world.outbox().count_failed_attempt(id);
            else
                m_world.outbox().mark_published(id, entry, m_world.now());
        }
        m_world.outbox().release(owner());
    });
    m_round_marks.clear();
}

std::optional<OutboxRow> SimOutbox::claim_next(ClaimScope scope, const std::vector<int64_t>& skip) {
    if (!m_in_round || !m_conn) throw std::logic_error("SimOutbox::claim_next outside begin_round() or without a connection");
    return statement([&] {
        // Every holder is a role's PostgreSQL connection: its transaction lives as long as it does.
        return m_world.outbox().claim(scope, skip, owner(), [this](const void* holder) {
            return m_world.postgres_connection_live(*static_cast<const SimConnection*>(holder));
        });
    });
}

}  // namespace relab::sim
