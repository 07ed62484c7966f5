#include "clients/cluster_link.h"

#include <chrono>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "clients/cluster_slot.h"
#include "util/interrupt.h"

namespace relab {

namespace {

std::string address(const std::string& host, int64_t port) { return fmt::format("{}:{}", host, port); }

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

ClusterRouter::ClusterRouter(std::vector<RedisEndpoint> seeds, RedisNamespace ns, std::string barrier_prefix,
                             std::string actor)
    : m_seeds(std::move(seeds)), m_ns(std::move(ns)), m_barrier_prefix(std::move(barrier_prefix)), m_name(std::move(actor)) {
    if (m_seeds.empty()) throw std::invalid_argument("a cluster router needs at least one node");
    refresh();
}

ClusterRouter::~ClusterRouter() = default;

ClusterRouter::Node& ClusterRouter::node_at(const std::string& host, int port) {
    const std::string at = address(host, port);
    auto it = m_nodes.find(at);
    if (it != m_nodes.end()) return *it->second;
    auto n = std::make_unique<Node>();
    n->ep = m_seeds.front();  // password and db as the seeds have them
    n->ep.host = host;
    n->ep.port = port;
    n->client = std::make_unique<RedisClient>(n->ep);
    if (!m_name.empty()) {
        std::string name = m_barrier_prefix + m_name;
        for (char& c : name)
            if (!std::isgraph(static_cast<unsigned char>(c))) c = '_';
        n->client->call({"CLIENT", "SETNAME", name});
    }
    n->stream = std::make_unique<RealStream>(*n->client, m_ns, m_barrier_prefix);
    n->kv = std::make_unique<RealKv>(*n->client, m_ns, false);
    Node& ref = *n;
    m_nodes.emplace(at, std::move(n));
    return ref;
}

void ClusterRouter::refresh() {
    std::string why;
    std::vector<RedisEndpoint> tries;
    for (const auto& a : m_order) tries.push_back(m_nodes.at(a)->ep);
    tries.insert(tries.end(), m_seeds.begin(), m_seeds.end());
    for (const auto& ep : tries) {
        RedisReply map;
        try {
            RedisClient c(ep, std::chrono::milliseconds(1000));
            map = c.call({"CLUSTER", "SLOTS"});
        } catch (const RedisError& e) {
            why += fmt::format("\n  {}: {}", ep.display(), e.what());
            continue;
        }
        std::vector<std::string> owner(kClusterSlots);
        std::vector<std::string> order;
        for (const RedisReply& range : map.elements) {
            if (range.elements.size() < 3 || range.elements[2].elements.size() < 2)
                throw RedisError("CLUSTER SLOTS", "", "unexpected reply: " + map.to_string(), KvError::Kind::unexpected);
            const std::string host = range.elements[2].elements[0].str;
            const auto port = range.elements[2].elements[1].integer;
            const std::string at = address(host, port);
            if (std::find(order.begin(), order.end(), at) == order.end()) order.push_back(at);
            for (auto s = range.elements[0].integer; s <= range.elements[1].integer && s < kClusterSlots; ++s)
                owner[static_cast<size_t>(s)] = at;
        }
        for (size_t s = 0; s < owner.size(); ++s)
            if (owner[s].empty())
                throw RedisError("CLUSTER SLOTS", "",
                                 fmt::format("slot {} is served by no node ({}): the cluster is not fully formed", s,
                                             ep.display()),
                                 KvError::Kind::unexpected);
        for (const auto& at : order) {
            const auto colon = at.rfind(':');
            node_at(at.substr(0, colon), std::stoi(at.substr(colon + 1)));
        }
        m_owner = std::move(owner);
        m_order = std::move(order);
        return;
    }
    throw RedisConnectionError("CLUSTER SLOTS", "", "no node of the cluster answered:" + why);
}

bool ClusterRouter::follow(const RedisError& e, const Node*& ask) {
    const std::string& msg = e.server_message();
    const bool moved = starts_with(msg, "MOVED ");
    if (!moved && !starts_with(msg, "ASK ")) return false;
    // "MOVED 3999 127.0.0.1:6381"
    std::istringstream words(msg);
    std::string kind, slot, target;
    words >> kind >> slot >> target;
    const auto colon = target.rfind(':');
    if (colon == std::string::npos) return false;
    if (moved) {
        ++m_moved;
        ask = nullptr;
        refresh();
    } else {
        ++m_asked;
        ask = &node_at(target.substr(0, colon), std::stoi(target.substr(colon + 1)));
    }
    return true;
}

std::vector<ClusterRouter::Node*> ClusterRouter::nodes() {
    std::vector<Node*> out;
    for (const auto& a : m_order) out.push_back(m_nodes.at(a).get());
    return out;
}

ClusterRouter::Node& ClusterRouter::owner(const std::string& real_key) {
    const std::string& at = m_owner.at(static_cast<size_t>(key_slot(real_key)));
    return *m_nodes.at(at);
}

std::string ClusterRouter::owner_address(const std::string& real_key) {
    return m_owner.at(static_cast<size_t>(key_slot(real_key)));
}

RedisReply ClusterRouter::call(const std::string& real_key, const std::vector<std::string>& argv) {
    return on_key(real_key, [&](Node& n) { return n.client->call(argv); });
}

// ---------------------------------------------------------------- ports

std::vector<std::string> ClusterStream::xadd(const std::string& s, const std::vector<Fields>& batch) {
    return m_r.on_key(m_r.ns().key(s), [&](ClusterRouter::Node& n) { return n.stream->xadd(s, batch); });
}

std::vector<StreamEntry> ClusterStream::xreadgroup(const std::string& g, const std::string& c, const std::string& s,
                                                   int count, Millis block) {
    return m_r.on_key(m_r.ns().key(s), [&](ClusterRouter::Node& n) { return n.stream->xreadgroup(g, c, s, count, block); });
}

bool ClusterStream::create_group(const std::string& s, const std::string& g, const std::string& start) {
    return m_r.on_key(m_r.ns().key(s), [&](ClusterRouter::Node& n) { return n.stream->create_group(s, g, start); });
}

void ClusterStream::xack(const std::string& s, const std::string& g, const std::string& id) {
    m_r.on_key(m_r.ns().key(s), [&](ClusterRouter::Node& n) { n.stream->xack(s, g, id); });
}

void ClusterStream::xack_all(const std::string& s, const std::string& g, const std::vector<std::string>& ids) {
    m_r.on_key(m_r.ns().key(s), [&](ClusterRouter::Node& n) { n.stream->xack_all(s, g, ids); });
}

std::vector<StreamEntry> ClusterStream::xrange(const std::string& s) {
    return m_r.on_key(m_r.ns().key(s), [&](ClusterRouter::Node& n) { return n.stream->xrange(s); });
}

bool ClusterStream::group_drained(const std::string& s, const std::string& g) {
    return m_r.on_key(m_r.ns().key(s), [&](ClusterRouter::Node& n) { return n.stream->group_drained(s, g); });
}

void ClusterStream::wait_readers_blocked(int readers, Millis timeout) {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        throw_if_interrupted();
        int blocked = 0;
        for (ClusterRouter::Node* n : m_r.nodes()) blocked += n->stream->blocked_readers();
        if (blocked >= readers) return;
        const auto waited = std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - start);
        if (waited >= timeout)
            throw RedisError("wait_readers_blocked", "",
                             fmt::format("only {} of {} readers blocked on the cluster's {} nodes after {} ms", blocked,
                                         readers, m_r.nodes().size(), waited.count()),
                             KvError::Kind::unexpected);
        std::this_thread::sleep_for(Millis(1));
    }
}

bool ClusterKv::set_nx_px(const std::string& k, const std::string& v, Millis ttl) {
    return m_r.on_key(m_r.ns().key(k), [&](ClusterRouter::Node& n) { return n.kv->set_nx_px(k, v, ttl); });
}

int64_t ClusterKv::delete_if_equals(const std::string& k, const std::string& token) {
    return m_r.on_key(m_r.ns().key(k), [&](ClusterRouter::Node& n) { return n.kv->delete_if_equals(k, token); });
}

bool ClusterKv::exists(const std::string& k) {
    return m_r.on_key(m_r.ns().key(k), [&](ClusterRouter::Node& n) { return n.kv->exists(k); });
}

}  // namespace relab
