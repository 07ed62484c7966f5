#include "backend_real/trial_group.h"

#include <stdexcept>

#include "backend_real/redis_replies.h"
#include "clients/cluster_client.h"
#include "roles/roles.h"

namespace relab {

namespace {

// CLIENT UNBLOCK every connection on `a` whose name starts with prefix.
void unblock_named(RedisClient& a, const std::string& prefix) {
    for (const auto& c : named_clients(a.call({"CLIENT", "LIST"}).str))
        if (c.name.rfind(prefix, 0) == 0) a.command({"CLIENT", "UNBLOCK", c.id});
}

}  // namespace

bool TrialGroup::drained(bool primary_out) {
    if (primary_out) return false;
    try {
        return group_drained();
    } catch (const KvError& e) {
        // Only a lab that takes its server down may find it unreachable; elsewhere it is the
        // harness's failure.
        if (!redis_faults_scheduled(m_env.s) || e.kind() == KvError::Kind::unexpected) throw;
        m_connections.drop_admin();
        return false;
    }
}

// A stream that is gone (a server restarted without persistence, nothing added since) has nothing
// left to deliver; a group that is gone may yet be created again by the consumers, so it is not
// drained.
bool TrialGroup::group_drained() {
    const Scenario& s = m_env.s;
    const StreamLab& flow = s.flow();
    if (!m_env.cluster.empty()) {
        ClusterStream streams(m_connections.cluster());
        for (const auto& key : lab_stream_keys(flow.stream, flow.shard))
            if (!streams.group_drained(key, flow.stream.group)) return false;
        return true;
    }
    return RealStream(m_connections.admin(), m_ns, m_env.prefix).group_drained(flow.stream.key, flow.stream.group);
}

std::string TrialGroup::last_delivered() {
    try {
        RedisClient c(m_connections.primary(), std::chrono::milliseconds(1000));
        const auto groups = c.call({"XINFO", "GROUPS", m_ns.key(m_env.s.flow().stream.key)});
        for (const auto& g : groups.elements) {
            const auto* name = field_of(g, "name");
            const auto* delivered = field_of(g, "last-delivered-id");
            if (name && delivered && name->str == m_env.s.flow().stream.group) return delivered->str;
        }
        return "(no group)";
    } catch (const KvError& e) {
        return std::string("(unreadable: ") + e.what() + ")";
    }
}

nlohmann::json TrialGroup::state() {
    if (!m_env.cluster.empty()) throw std::logic_error("group_state: a sharded lab has a group per shard");
    const Scenario& s = m_env.s;
    const StreamLab& flow = s.flow();
    RedisClient& a = m_connections.admin();
    const std::string key = m_ns.key(flow.stream.key);
    if (a.call({"EXISTS", key}).integer == 0) return {{"pending", 0}, {"undelivered", 0}, {"group", false}};
    std::string from = "-";  // the first entry the group has not been given
    int64_t pending = 0;
    bool group = false;
    for (const auto& g : a.call({"XINFO", "GROUPS", key}).elements) {
        const auto* name = field_of(g, "name");
        if (!name || name->str != flow.stream.group) continue;
        group = true;
        if (const auto* p = field_of(g, "pending")) pending = p->integer;
        if (const auto* d = field_of(g, "last-delivered-id"); d && d->str != "0-0") from = "(" + d->str;
    }
    // Counted by pages of XRANGE: XINFO's lag is not kept after every kind of change to a stream.
    int64_t undelivered = 0;
    for (;;) {
        const auto page = a.call({"XRANGE", key, from, "+", "COUNT", "10000"});
        undelivered += static_cast<int64_t>(page.elements.size());
        if (page.elements.size() < 10000) break;
        from = "(" + page.elements.back().elements.at(0).str;
    }
    return {{"pending", pending}, {"undelivered", undelivered}, {"group", group}};
}

std::optional<std::vector<std::string>> TrialGroup::pel_ids(bool primary_out) {
    if (!m_env.cluster.empty() || primary_out) return std::nullopt;
    const Scenario& s = m_env.s;
    const StreamLab& flow = s.flow();
    try {
        RedisClient& a = m_connections.admin();
        const std::string key = m_ns.key(flow.stream.key);
        if (a.call({"EXISTS", key}).integer == 0) return std::vector<std::string>{};
        std::vector<std::string> ids;
        // XPENDING's extended form, a page at a time: each element is [id, consumer, idle, deliveries].
        std::string from = "-";
        for (;;) {
            const auto page = a.call({"XPENDING", key, flow.stream.group, from, "+", "10000"});
            for (const auto& e : page.elements) ids.push_back(e.elements.at(0).str);
            if (page.elements.size() < 10000) break;
            from = "(" + ids.back();
        }
        return ids;
    } catch (const KvError& e) {
        // The group gone (NOGROUP's reply) or the server unreachable in a lab that takes it down:
        // the history's account stands alone. A reply relab cannot read is its own bug.
        if (e.kind() == KvError::Kind::unexpected) throw;
        m_connections.drop_admin();
        return std::nullopt;
    }
}

void TrialGroup::raise_stop() {
    const std::string key = m_ns.key(kStopKey);
    if (!m_env.cluster.empty())
        m_connections.cluster().call(key, {"SET", key, "1"});
    else
        m_connections.admin().call({"SET", key, "1"});
}

void TrialGroup::unblock_readers() {
    if (!m_env.cluster.empty()) {
        for (ClusterClient::Node* n : m_connections.cluster().nodes()) unblock_named(*n->client, m_env.prefix);
        return;
    }
    unblock_named(m_connections.admin(), m_env.prefix);
}

}  // namespace relab
