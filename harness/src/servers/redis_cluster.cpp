#include "servers/redis_cluster.h"

#include <thread>

#include <fmt/format.h>

#include "clients/redis_client.h"
#include "util/interrupt.h"

namespace relab {

namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

constexpr int kMaxMasters = 16;

std::string node_name(size_t i, const RedisEndpoint& ep) { return fmt::format("node {} ({}:{})", i + 1, ep.host, ep.port); }


}  // namespace

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

}  // namespace relab
