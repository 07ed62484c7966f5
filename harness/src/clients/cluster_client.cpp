#include "clients/cluster_client.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "util/interrupt.h"

namespace relab {

namespace {

std::string node_address(const std::string& host, int64_t port) { return fmt::format("{}:{}", host, port); }

// A MOVED or ASK reply's parts: "MOVED 3999 127.0.0.1:6381".
struct Redirect {
    bool moved = false;
    std::string host;
    int port = 0;
};

bool is_redirect_text(const std::string& msg) { return msg.starts_with("MOVED ") || msg.starts_with("ASK "); }

std::optional<Redirect> parse_redirect(const std::string& msg) {
    if (!is_redirect_text(msg)) return std::nullopt;
    const bool moved = msg.starts_with("MOVED ");
    std::istringstream words(msg);
    std::string kind, slot, target;
    words >> kind >> slot >> target;
    const auto colon = target.rfind(':');
    if (colon == std::string::npos) return std::nullopt;
    try {
        return Redirect{moved, target.substr(0, colon), std::stoi(target.substr(colon + 1))};
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

}  // namespace

bool is_redirect(const RedisReply& reply) {
    return reply.is_error() && is_redirect_text(reply.str);
}

ClusterClient::ClusterClient(std::vector<RedisEndpoint> seeds, ClusterClientOptions opts)
    : m_seeds(std::move(seeds)), m_opts(std::move(opts)) {
    if (m_seeds.empty()) throw std::invalid_argument("a cluster client needs at least one node");
    refresh();
}

ClusterClient::~ClusterClient() = default;

ClusterClient::Node& ClusterClient::node_at(const std::string& host, int port) {
    const std::string at = node_address(host, port);
    auto it = m_known.find(at);
    if (it != m_known.end()) return *it->second;
    auto n = std::make_unique<Node>();
    n->ep = m_seeds.front();  // password and db as the seeds have them
    n->ep.host = host;
    n->ep.port = port;
    n->client = std::make_unique<RedisClient>(n->ep);
    if (!m_opts.actor.empty()) {
        std::string name = m_opts.barrier_prefix + m_opts.actor;
        for (char& c : name)
            if (!std::isgraph(static_cast<unsigned char>(c))) c = '_';
        n->client->call({"CLIENT", "SETNAME", name});
    }
    n->stream = std::make_unique<RealStream>(*n->client, m_opts.ns, m_opts.barrier_prefix);
    n->kv = std::make_unique<RealKv>(*n->client, m_opts.ns, false);
    Node& ref = *n;
    m_known.emplace(at, std::move(n));
    return ref;
}

void ClusterClient::refresh() {
    std::string why;
    std::vector<RedisEndpoint> tries;
    for (const Node* n : m_order) tries.push_back(n->ep);
    tries.insert(tries.end(), m_seeds.begin(), m_seeds.end());
    for (const auto& ep : tries) {
        RedisReply reply;
        try {
            RedisClient c(ep, std::chrono::milliseconds(1000));
            reply = c.call({"CLUSTER", "SLOTS"});
        } catch (const RedisError& e) {
            why += fmt::format("\n  {}: {}", ep.display(), e.what());
            continue;
        }
        SlotMap map = read_slot_map(reply);
        if (const std::optional<int> unserved = map.unserved_slot())
            throw RedisError("CLUSTER SLOTS", "",
                             fmt::format("slot {} is served by no node ({}): the cluster is not fully formed",
                                         *unserved, ep.display()),
                             KvError::Kind::unexpected);
        std::vector<Node*> order;
        for (const auto& [host, port] : map.masters) order.push_back(&node_at(host, port));
        m_owner = std::move(map.owner);
        m_order = std::move(order);
        return;
    }
    throw RedisConnectionError("CLUSTER SLOTS", "", "no node of the cluster answered:" + why);
}

ClusterClient::Node* ClusterClient::after_redirect(const std::string& real_key, const Node& sent_to,
                                                   const RedisError& e, int hop) {
    const std::optional<Redirect> r = parse_redirect(e.server_message());
    if (!r && m_opts.follow_redirects && e.kind() == KvError::Kind::unavailable) {
        // The node is gone (a killed master): the map is read again from a live node, so that the
        // caller's retry goes to whichever master the cluster has promoted by then.
        try {
            refresh();
        } catch (const RedisError&) {
            // no node answered: the caller's next retry reads it again
        }
        throw;
    }
    if (!r) throw;
    if (!m_opts.follow_redirects) refuse_redirect(real_key, sent_to, e);
    if (hop >= kMaxRedirects) throw;
    if (!r->moved) {
        ++m_asked;
        return &node_at(r->host, r->port);
    }
    ++m_moved;
    refresh();
    return nullptr;
}

void ClusterClient::refuse_redirect(const std::string& real_key, const Node& sent_to, const RedisError& e) const {
    const auto at = std::find(m_order.begin(), m_order.end(), &sent_to);
    const std::string where = at == m_order.end() ? sent_to.ep.display()
                                                  : node_text(static_cast<size_t>(at - m_order.begin()));
    throw ClusterRedirectError(
        e.command(), real_key,
        fmt::format("{} — relab sent key {} (slot {}) to {} by the slot map it read from CLUSTER SLOTS; the cluster "
                    "redirects it instead, so its slot map changed during the lab (redirects are not followed)",
                    e.server_message(), real_key, key_slot(real_key), where));
}

std::string ClusterClient::node_text(size_t i) const {
    return fmt::format("node {} ({}:{})", i + 1, endpoint(i).host, endpoint(i).port);
}

std::string ClusterClient::owner_address(const std::string& real_key) const {
    const RedisEndpoint& ep = endpoint(node_of_key(real_key));
    return node_address(ep.host, ep.port);
}

RedisReply ClusterClient::command(const std::string& real_key, const std::vector<std::string>& argv) {
    return on_key(real_key, [&](Node& n) {
        RedisReply reply = n.client->command(argv);
        // Thrown so that on_key follows or refuses it as any redirected call.
        if (is_redirect(reply)) throw RedisError(abbreviate_command(argv), real_key, reply.str);
        return reply;
    });
}

RedisReply ClusterClient::call(const std::string& real_key, const std::vector<std::string>& argv) {
    return on_key(real_key, [&](Node& n) { return n.client->call(argv); });
}

std::vector<RedisReply> ClusterClient::pipeline(const std::vector<std::string>& keys,
                                                const std::vector<std::vector<std::string>>& commands) {
    if (keys.size() != commands.size())
        throw std::invalid_argument(fmt::format("{} keys for {} commands", keys.size(), commands.size()));
    // The targets as the map is now: following a redirection below may read it again.
    const std::vector<Node*> targets = m_order;
    std::vector<std::vector<size_t>> by_node(targets.size());
    for (size_t i = 0; i < keys.size(); ++i) by_node[node_of_key(keys[i])].push_back(i);
    std::vector<RedisReply> replies(commands.size());
    for (size_t n = 0; n < by_node.size(); ++n) {
        if (by_node[n].empty()) continue;
        std::vector<std::vector<std::string>> batch;
        batch.reserve(by_node[n].size());
        for (size_t i : by_node[n]) batch.push_back(commands[i]);
        std::vector<RedisReply> got = targets[n]->client->pipeline(batch);
        for (size_t k = 0; k < got.size(); ++k) {
            const size_t i = by_node[n][k];
            // A redirected command did not run: sent again alone, it is followed or refused.
            replies[i] = is_redirect(got[k]) ? command(keys[i], commands[i]) : std::move(got[k]);
        }
    }
    return replies;
}

// ---------------------------------------------------------------- ports

std::vector<std::string> ClusterStream::xadd(const std::string& s, const std::vector<Fields>& batch) {
    return m_c.on_key(m_c.ns().key(s), [&](ClusterClient::Node& n) { return n.stream->xadd(s, batch); });
}

std::vector<StreamEntry> ClusterStream::xreadgroup(const std::string& g, const std::string& c, const std::string& s,
                                                   int count, Millis block) {
    return m_c.on_key(m_c.ns().key(s), [&](ClusterClient::Node& n) { return n.stream->xreadgroup(g, c, s, count, block); });
}

std::vector<StreamEntry> ClusterStream::xreadgroup_pending(const std::string& g, const std::string& c,
                                                           const std::string& s, int count, const std::string& after) {
    return m_c.on_key(m_c.ns().key(s),
                      [&](ClusterClient::Node& n) { return n.stream->xreadgroup_pending(g, c, s, count, after); });
}

Stream::AutoClaimed ClusterStream::xautoclaim(const std::string& s, const std::string& g, const std::string& c,
                                              Millis min_idle, const std::string& start, int count) {
    return m_c.on_key(m_c.ns().key(s),
                      [&](ClusterClient::Node& n) { return n.stream->xautoclaim(s, g, c, min_idle, start, count); });
}

bool ClusterStream::create_group(const std::string& s, const std::string& g, const std::string& start) {
    return m_c.on_key(m_c.ns().key(s), [&](ClusterClient::Node& n) { return n.stream->create_group(s, g, start); });
}

void ClusterStream::xack(const std::string& s, const std::string& g, const std::string& id) {
    m_c.on_key(m_c.ns().key(s), [&](ClusterClient::Node& n) { n.stream->xack(s, g, id); });
}

void ClusterStream::xack_all(const std::string& s, const std::string& g, const std::vector<std::string>& ids) {
    m_c.on_key(m_c.ns().key(s), [&](ClusterClient::Node& n) { n.stream->xack_all(s, g, ids); });
}

std::vector<StreamEntry> ClusterStream::xrange(const std::string& s) {
    return m_c.on_key(m_c.ns().key(s), [&](ClusterClient::Node& n) { return n.stream->xrange(s); });
}

bool ClusterStream::group_drained(const std::string& s, const std::string& g) {
    return m_c.on_key(m_c.ns().key(s), [&](ClusterClient::Node& n) { return n.stream->group_drained(s, g); });
}

void ClusterStream::wait_readers_blocked(int readers, Millis timeout) {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        throw_if_interrupted();
        int blocked = 0;
        for (ClusterClient::Node* n : m_c.nodes()) blocked += n->stream->blocked_readers();
        if (blocked >= readers) return;
        const auto waited = std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - start);
        if (waited >= timeout)
            throw RedisError("wait_readers_blocked", "",
                             fmt::format("only {} of {} readers blocked on the cluster's {} nodes after {} ms", blocked,
                                         readers, m_c.nodes().size(), waited.count()),
                             KvError::Kind::unexpected);
        std::this_thread::sleep_for(Millis(1));
    }
}

bool ClusterKv::set_nx_px(const std::string& k, const std::string& v, Millis ttl) {
    return m_c.on_key(m_c.ns().key(k), [&](ClusterClient::Node& n) { return n.kv->set_nx_px(k, v, ttl); });
}

int64_t ClusterKv::delete_if_equals(const std::string& k, const std::string& token) {
    return m_c.on_key(m_c.ns().key(k), [&](ClusterClient::Node& n) { return n.kv->delete_if_equals(k, token); });
}

bool ClusterKv::exists(const std::string& k) {
    return m_c.on_key(m_c.ns().key(k), [&](ClusterClient::Node& n) { return n.kv->exists(k); });
}

}  // namespace relab
