#include "roles/consumer/context.h"

#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "roles/roles.h"

namespace relab {

namespace {

std::string stream_key_of(const RoleSettings& s, const std::string& actor) {
    if (!s.shard.enabled) return s.stream.key;
    int k = 0;
    if (actor.size() < 2 || actor[0] != 'C' || (k = std::atoi(actor.c_str() + 1)) < 1 || k > s.shard.shard_count())
        throw std::invalid_argument(
            fmt::format("a sharded lab's consumers are C1..C{}, not {}", s.shard.shard_count(), actor));
    return shard_stream_key(s.shard, k - 1);
}

}  // namespace

ConsumerContext::ConsumerContext(const RoleSettings& s, const std::string& actor, RolePorts& p)
    : m_s(s), m_p(p), m_actor(actor), m_name(actor), m_key(stream_key_of(s, actor)) {}

void ConsumerContext::name_per_process() { m_name = fmt::format("{}~{}", m_actor, m_p.rng.uniform(1000, 9999)); }

void ConsumerContext::record(Op op, nlohmann::json data, const std::string& entry, const Event* ev) const {
    // With several streams an entry ID names an entry only with its stream.
    if (m_s.shard.enabled && (op == Op::receive || op == Op::ack || op == Op::write)) data["stream"] = m_key;
    m_p.history.record(HistoryRecord{0, m_p.clock.now().count(), m_actor, op, std::move(data), entry,
                                     ev ? std::optional<Event>(*ev) : std::nullopt});
}

void ConsumerContext::ride_out(const KvError& e) const {
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

void ConsumerContext::store_unavailable(const StoreUnavailable& e) const {
    record(Op::error, {{"error", e.what()}, {"kind", "unavailable"}, {"server", "postgres"}});
    m_p.clock.sleep_for(kRetryAfterRedisError);
}

}  // namespace relab
