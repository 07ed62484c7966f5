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
    }, m_conn);
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
    }, m_conn);
}

void SimStream::xack(const std::string& stream, const std::string& group, const std::string& id) {
    m_world.round_trip([&] {
        m_world.at_redis([&] {
            m_world.streams().xack(stream, group, id);
            m_world.stream_changed();
        }, m_conn);
    }, m_conn);
}

void SimStream::xack_all(const std::string& stream, const std::string& group, const std::vector<std::string>& ids) {
    m_world.round_trip([&] {
        m_world.at_redis([&] {
            for (const auto& id : ids) m_world.streams().xack(stream, group, id);
            m_world.stream_changed();
        }, m_conn);
    }, m_conn);
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
    }, m_conn);
}

std::vector<StreamEntry> SimStream::xrange(const std::string& stream) {
    return m_world.round_trip([&] { return m_world.at_redis([&] { return m_world.streams().xrange(stream); }, m_conn); }, m_conn);
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
    }, m_conn);
}

void SimStream::wait_readers_blocked(int readers, Millis timeout) { m_world.wait_readers_blocked(readers, timeout); }

bool SimKv::set_nx_px(const std::string& key, const std::string& value, Millis ttl) {
    return m_world.round_trip([&] { return m_world.at_redis([&] { return m_world.kv().set(key, value, SetOptions::nx_px(ttl), m_world.now()).written; }, m_conn); }, m_conn);
}

int64_t SimKv::delete_if_equals(const std::string& key, const std::string& token) {
    return m_world.round_trip([&] { return m_world.at_redis([&] { return m_world.kv().delete_if_equals(key, token, m_world.now()); }, m_conn); }, m_conn);
}

std::string SimKv::delete_if_equals_method() const {
    return m_world.kv().delex ? "DELEX IFEQ" : "compare-and-delete Lua script";
}

bool SimKv::exists(const std::string& key) {
    return m_world.round_trip([&] { return m_world.at_redis([&] { return m_world.kv().exists(key, m_world.now()); }, m_conn); }, m_conn);
}

KvSetResult SimKv::set(const std::string& key, const std::string& value, const KvSetOptions& o) {
    SetOptions so;
    so.condition = o.condition;
    if (o.ttl.count() > 0) so.px = o.ttl;
    so.keepttl = o.keepttl;
    so.get = o.get;
    return m_world.round_trip([&] { return m_world.at_redis([&] { return m_world.kv().set(key, value, so, m_world.now()); }, m_conn); }, m_conn);
}

std::optional<std::string> SimKv::get(const std::string& key) {
    return m_world.round_trip([&] { return m_world.at_redis([&] { return m_world.kv().get(key, m_world.now()); }, m_conn); }, m_conn);
}

int64_t SimKv::del(const std::string& key) {
    return m_world.round_trip([&] { return m_world.at_redis([&] { return m_world.kv().del(key, m_world.now()); }, m_conn); }, m_conn);
}

int64_t SimKv::wait_replicas(int64_t replicas, Millis timeout) {
    if (replicas > 0 && timeout.count() <= 0)
        throw SimError("WAIT with no timeout on the simulated server, which has no replica, would block forever");
    m_world.round_trip([] {}, m_conn);
    // The reply leaves the server when the timeout runs out; its way back is the same either way.
    if (replicas > 0) m_world.scheduler().sleep_for(timeout);
    return 0;
}

int64_t SimOrderTable::place_order(int64_t user_id, const std::string& idem_key, const std::string& payload) {
    return m_world.round_trip([&] { return m_world.placed_orders().place_order(user_id, idem_key, payload); }, m_conn);
}

std::vector<PlacedOrder> SimOrderTable::orders() {
    return m_world.round_trip([&] { return m_world.placed_orders().orders(); }, m_conn);
}

WriteResult SimOrderStore::write_state(const OrderWrite& w) { return write_order_state(w, *this); }

std::vector<WriteResult> SimOrderStore::write_states(const std::vector<OrderWrite>& ws) {
    return write_order_states(ws, *this);
}

int64_t SimOrderStore::update(const OrderUpdate& u) {
    return statement([&] { return m_world.orders().update_autocommit(u); });
}

std::vector<int64_t> SimOrderStore::update_all(const std::vector<OrderUpdate>& us) {
    return statement([&] {
        std::vector<int64_t> affected;
        affected.reserve(us.size());
        for (const auto& u : us) affected.push_back(m_world.orders().update_autocommit(u));
        return affected;
    });
}

std::optional<int64_t> SimOrderStore::update_once(const OrderWrite& w, const OrderUpdate& u) {
    // As RealOrderStore: BEGIN; the inbox's INSERT; the UPDATE; COMMIT, taking effect at once at the
    // COMMIT (a second copy of the event finds the inbox row there).
    for (int i = 0; i < 2; ++i) statement([] {});  // BEGIN, INSERT
    const std::optional<int64_t> affected = statement([&]() -> std::optional<int64_t> {
        if (!m_world.inbox().emplace(w.order, w.event_version).second) return std::nullopt;
        return m_world.orders().update_autocommit(u);
    });
    if (affected) statement([] {});  // COMMIT
    return affected;
}

std::optional<int64_t> SimOrderStore::insert(const OrderRow& row) {
    const StatementResult r = statement([&] { return m_world.orders().insert_autocommit(row); });
    if (!r.failed()) return r.affected;
    if (r.sqlstate != "23505") throw SimError(fmt::format("INSERT failed: {} {}", r.sqlstate, r.message));
    return std::nullopt;
}

OrderStatements::Upserted SimOrderStore::upsert(const OrderRow& row, VersionGuard guard) {
    const StatementResult r = statement([&] { return m_world.orders().upsert_autocommit(row, guard); });
    if (r.failed()) throw SimError(fmt::format("upsert failed: {} {}", r.sqlstate, r.message));
    return {r.affected, r.inserted};
}

int64_t SimOrderStore::send_side_effect(int64_t order, const std::string& event_type, int64_t version) {
    return m_world.round_trip(
        [&] { return m_world.at_postgres([&] { return m_world.orders().send_side_effect(order, event_type, version); }, m_conn); }, m_conn);
}

std::vector<SideEffectRow> SimOrderStore::side_effects() {
    return m_world.round_trip([&] { return m_world.at_postgres([&] { return m_world.orders().side_effects(); }, m_conn); }, m_conn);
}

std::vector<OrderRow> SimOrderStore::rows() {
    return m_world.round_trip([&] { return m_world.at_postgres([&] { return m_world.orders().rows(); }, m_conn); }, m_conn);
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
            return m_world.postgres().connection_live(*static_cast<const SimConnection*>(holder));
        });
    });
}

}  // namespace relab::sim
