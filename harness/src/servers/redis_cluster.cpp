#include "servers/redis_cluster.h"

#include <algorithm>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "util/interrupt.h"

namespace relab {

namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

constexpr int kMaxMasters = 16;

std::string node_name(size_t i, const RedisEndpoint& ep) { return fmt::format("node {} ({}:{})", i + 1, ep.host, ep.port); }


}  // namespace

// ---------------------------------------------------------------- EmbeddedRedisCluster

EmbeddedRedisCluster::EmbeddedRedisCluster(const RedisClusterOptions& opts) {
    if (opts.masters < 1 || opts.masters > kMaxMasters)
        throw std::invalid_argument(fmt::format("a lab's cluster has 1..{} masters, not {}", kMaxMasters, opts.masters));
    const auto started = SteadyClock::now();
    m_slots = split_slots(opts.masters);
    RedisOptions node_opts;
    node_opts.cluster = true;
    node_opts.config = opts.config;
    node_opts.config["cluster-node-timeout"] = std::to_string(opts.node_timeout.count());
    // A partial cluster is destroyed with this object's members if anything below throws.
    for (int i = 0; i < opts.masters; ++i) m_nodes.push_back(std::make_unique<EmbeddedRedis>(node_opts));

    for (size_t i = 0; i < m_nodes.size(); ++i) {
        RedisClient c(m_nodes[i]->endpoint());
        // Distinct epochs from the start, as redis-cli sets them: no epoch collision to resolve.
        c.call({"CLUSTER", "SET-CONFIG-EPOCH", std::to_string(i + 1)});
        const RedisReply added = c.command(
            {"CLUSTER", "ADDSLOTSRANGE", std::to_string(m_slots[i].first), std::to_string(m_slots[i].last)});
        if (added.is_error())
            throw EnvironmentError(fmt::format(
                "CLUSTER ADDSLOTSRANGE {} {} on {} failed: {}; it needs redis-server 7.0 or newer "
                "(apt-get install -y redis-server from Debian 12 or later)",
                m_slots[i].first, m_slots[i].last, node_name(i, m_nodes[i]->endpoint()), added.str));
    }
    {
        RedisClient first(m_nodes[0]->endpoint());
        for (size_t i = 1; i < m_nodes.size(); ++i)
            first.call({"CLUSTER", "MEET", m_nodes[i]->endpoint().host, std::to_string(m_nodes[i]->endpoint().port),
                        std::to_string(m_nodes[i]->cluster_bus_port())});
    }

    std::vector<std::unique_ptr<RedisClient>> clients;
    for (const auto& n : m_nodes) clients.push_back(std::make_unique<RedisClient>(n->endpoint()));
    const std::string known = std::to_string(m_nodes.size());
    const auto deadline = started + opts.form_timeout;
    for (;;) {
        throw_if_interrupted();
        std::string states;
        bool all_ok = true;
        for (size_t i = 0; i < clients.size(); ++i) {
            const auto info = parse_info(clients[i]->call({"CLUSTER", "INFO"}).str);
            const std::string state = info.count("cluster_state") ? info.at("cluster_state") : "?";
            const std::string nodes = info.count("cluster_known_nodes") ? info.at("cluster_known_nodes") : "?";
            const std::string slots = info.count("cluster_slots_ok") ? info.at("cluster_slots_ok") : "?";
            all_ok = all_ok && state == "ok" && nodes == known;
            states += fmt::format("\n  {}: cluster_state:{}, cluster_known_nodes:{}, cluster_slots_ok:{}",
                                  node_name(i, m_nodes[i]->endpoint()), state, nodes, slots);
        }
        if (all_ok) break;
        if (SteadyClock::now() >= deadline) {
            std::string logs;
            for (size_t i = 0; i < m_nodes.size(); ++i)
                logs += fmt::format("\n{} log:{}", node_name(i, m_nodes[i]->endpoint()), m_nodes[i]->log_tail(5));
            throw EnvironmentError(fmt::format("the Redis Cluster of {} masters did not reach cluster_state:ok on every "
                                               "node within {} ms (the machine may be overloaded):{}{}",
                                               m_nodes.size(), opts.form_timeout.count(), states, logs));
        }
        std::this_thread::sleep_for(milliseconds(20));
    }
    m_formed_after = std::chrono::duration_cast<milliseconds>(SteadyClock::now() - started);
}

EmbeddedRedisCluster::~EmbeddedRedisCluster() = default;

size_t EmbeddedRedisCluster::size() const { return m_nodes.size(); }

std::vector<RedisEndpoint> EmbeddedRedisCluster::endpoints() const {
    std::vector<RedisEndpoint> out;
    for (const auto& n : m_nodes) out.push_back(n->endpoint());
    return out;
}

const EmbeddedRedis& EmbeddedRedisCluster::node(size_t i) const { return *m_nodes.at(i); }
SlotRange EmbeddedRedisCluster::slots(size_t i) const { return m_slots.at(i); }
std::chrono::milliseconds EmbeddedRedisCluster::formed_after() const { return m_formed_after; }

void EmbeddedRedisCluster::stop() {
    for (auto& n : m_nodes) n->stop();
}

// ---------------------------------------------------------------- RedisClusterClient

bool is_redirect(const RedisReply& reply) {
    return reply.is_error() && (reply.str.rfind("MOVED ", 0) == 0 || reply.str.rfind("ASK ", 0) == 0);
}

RedisClusterClient::RedisClusterClient(const std::vector<RedisEndpoint>& nodes) {
    if (nodes.empty()) throw std::invalid_argument("a cluster client needs at least one node");
    for (const auto& ep : nodes) m_nodes.push_back(std::make_unique<RedisClient>(ep));
    const std::vector<std::string> argv{"CLUSTER", "SLOTS"};
    const RedisReply map = m_nodes[0]->call(argv);
    constexpr size_t kNone = static_cast<size_t>(-1);
    m_owner.assign(kClusterSlots, kNone);
    for (const RedisReply& range : map.elements) {
        if (range.elements.size() < 3 || range.elements[2].elements.size() < 2)
            throw RedisError("CLUSTER SLOTS", "", "unexpected reply: " + map.to_string());
        const auto first = range.elements[0].integer;
        const auto last = range.elements[1].integer;
        const std::string host = range.elements[2].elements[0].str;
        const auto port = range.elements[2].elements[1].integer;
        const auto it = std::find_if(nodes.begin(), nodes.end(),
                                     [&](const RedisEndpoint& ep) { return ep.host == host && ep.port == port; });
        if (it == nodes.end())
            throw RedisError("CLUSTER SLOTS", "",
                             fmt::format("slots {}-{} are served by {}:{}, which is not one of the cluster's nodes "
                                         "given to the client",
                                         first, last, host, port));
        for (auto s = first; s <= last && s < kClusterSlots; ++s) m_owner[static_cast<size_t>(s)] = it - nodes.begin();
    }
    const auto unserved = std::find(m_owner.begin(), m_owner.end(), kNone);
    if (unserved != m_owner.end())
        throw RedisError("CLUSTER SLOTS", "",
                         fmt::format("slot {} is served by no node ({}): the cluster is not fully formed",
                                     unserved - m_owner.begin(), nodes[0].display()));
}

RedisClusterClient::~RedisClusterClient() = default;

const RedisEndpoint& RedisClusterClient::endpoint(size_t node) const { return m_nodes.at(node)->endpoint(); }
RedisClient& RedisClusterClient::node(size_t i) { return *m_nodes.at(i); }
size_t RedisClusterClient::node_of_slot(int slot) const { return m_owner.at(static_cast<size_t>(slot)); }

void RedisClusterClient::throw_if_redirect(const std::string& key, const std::vector<std::string>& argv, size_t node,
                                           const RedisReply& reply) const {
    if (!is_redirect(reply)) return;
    throw ClusterRedirectError(
        abbreviate_command(argv), key,
        fmt::format("{} — relab sent key {} (slot {}) to {} by the slot map it read from CLUSTER SLOTS; the cluster "
                    "redirects it instead, so its slot map changed during the lab (redirects are not followed)",
                    reply.str, key, key_slot(key), node_name(node, endpoint(node))));
}

RedisReply RedisClusterClient::command(const std::string& key, const std::vector<std::string>& argv) {
    const size_t n = node_of_key(key);
    RedisReply reply = m_nodes[n]->command(argv);
    throw_if_redirect(key, argv, n, reply);
    return reply;
}

std::vector<RedisReply> RedisClusterClient::pipeline(const std::vector<std::string>& keys,
                                                     const std::vector<std::vector<std::string>>& commands) {
    if (keys.size() != commands.size())
        throw std::invalid_argument(fmt::format("{} keys for {} commands", keys.size(), commands.size()));
    std::vector<std::vector<size_t>> by_node(m_nodes.size());
    for (size_t i = 0; i < keys.size(); ++i) by_node[node_of_key(keys[i])].push_back(i);
    std::vector<RedisReply> replies(commands.size());
    for (size_t n = 0; n < by_node.size(); ++n) {
        if (by_node[n].empty()) continue;
        std::vector<std::vector<std::string>> batch;
        batch.reserve(by_node[n].size());
        for (size_t i : by_node[n]) batch.push_back(commands[i]);
        std::vector<RedisReply> got = m_nodes[n]->pipeline(batch);
        for (size_t k = 0; k < got.size(); ++k) {
            const size_t i = by_node[n][k];
            throw_if_redirect(keys[i], commands[i], n, got[k]);
            replies[i] = std::move(got[k]);
        }
    }
    return replies;
}

}  // namespace relab
