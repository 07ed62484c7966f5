#include "servers/redis_cluster.h"

#include <algorithm>
#include <csignal>
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
    if (opts.replicas < 0 || opts.replicas > 1)
        throw std::invalid_argument(fmt::format("a lab's cluster has 0 or 1 replica per master, not {}", opts.replicas));
    const auto started = SteadyClock::now();
    m_slots = split_slots(opts.masters);
    m_masters = static_cast<size_t>(opts.masters);
    RedisOptions node_opts;
    node_opts.cluster = true;
    node_opts.config = opts.config;
    node_opts.config["cluster-node-timeout"] = std::to_string(opts.node_timeout.count());
    // A replica's first sync starts at once rather than after the default 5 s of diskless delay.
    if (opts.replicas > 0) node_opts.config.emplace("repl-diskless-sync-delay", "0");
    // A partial cluster is destroyed with this object's members if anything below throws.
    for (int i = 0; i < opts.masters * (1 + opts.replicas); ++i) m_nodes.push_back(std::make_unique<EmbeddedRedis>(node_opts));

    for (size_t i = 0; i < m_masters; ++i) {
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
    if (opts.replicas > 0) add_replicas(opts);
    wait_formed(opts, started);
    m_formed_after = std::chrono::duration_cast<milliseconds>(SteadyClock::now() - started);
}

// Replica i follows master i (CLUSTER REPLICATE), once gossip has told it the master's ID.
void EmbeddedRedisCluster::add_replicas(const RedisClusterOptions& opts) {
    const auto deadline = SteadyClock::now() + opts.form_timeout;
    for (size_t i = 0; i < m_masters; ++i) {
        const std::string id = RedisClient(m_nodes[i]->endpoint()).call({"CLUSTER", "MYID"}).str;
        RedisClient replica(m_nodes[m_masters + i]->endpoint());
        for (;;) {
            throw_if_interrupted();
            const RedisReply r = replica.command({"CLUSTER", "REPLICATE", id});
            if (!r.is_error()) break;
            if (SteadyClock::now() >= deadline)
                throw EnvironmentError(fmt::format("CLUSTER REPLICATE {} on {} still fails after {} ms: {}", id,
                                                   node_name(m_masters + i, m_nodes[m_masters + i]->endpoint()),
                                                   opts.form_timeout.count(), r.str));
            std::this_thread::sleep_for(milliseconds(20));
        }
    }
}

// Every node says cluster_state:ok and knows every node; every replica's link to its master is up.
void EmbeddedRedisCluster::wait_formed(const RedisClusterOptions& opts, SteadyClock::time_point started) {
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
            std::string link;
            if (i >= m_masters) {
                const auto repl = parse_info(clients[i]->call({"INFO", "replication"}).str);
                link = repl.count("master_link_status") ? repl.at("master_link_status") : "?";
            }
            all_ok = all_ok && state == "ok" && nodes == known && (i < m_masters || link == "up");
            states += fmt::format("\n  {}: cluster_state:{}, cluster_known_nodes:{}, cluster_slots_ok:{}{}",
                                  node_name(i, m_nodes[i]->endpoint()), state, nodes, slots,
                                  link.empty() ? "" : ", master_link_status:" + link);
        }
        if (all_ok) return;
        if (SteadyClock::now() >= deadline) {
            std::string logs;
            for (size_t i = 0; i < m_nodes.size(); ++i)
                logs += fmt::format("\n{} log:{}", node_name(i, m_nodes[i]->endpoint()), m_nodes[i]->log_tail(5));
            throw EnvironmentError(fmt::format("the Redis Cluster of {} masters and {} replicas did not reach "
                                               "cluster_state:ok on every node within {} ms (the machine may be "
                                               "overloaded):{}{}",
                                               m_masters, m_nodes.size() - m_masters, opts.form_timeout.count(), states,
                                               logs));
        }
        std::this_thread::sleep_for(milliseconds(20));
    }
}

RedisEndpoint EmbeddedRedisCluster::crash_master_of(int slot) {
    const std::optional<RedisEndpoint> serving = serving_master(slot);
    if (!serving) throw std::logic_error(fmt::format("no master of the cluster serves slot {}", slot));
    for (auto& n : m_nodes)
        if (n->endpoint().port == serving->port) {
            n->crash();
            return *serving;
        }
    throw std::logic_error(fmt::format("slot {} is served by {}, which is not a node of the lab's cluster", slot,
                                       serving->display()));
}

std::optional<RedisEndpoint> EmbeddedRedisCluster::serving_master(int slot) const {
    std::optional<RedisEndpoint> named;
    for (size_t i = 0; i < m_nodes.size(); ++i) {
        if (is_paused(i)) continue;  // a stopped node would only time out
        const auto& n = m_nodes[i];
        SlotMap map;
        try {
            map = read_slot_map(RedisClient(n->endpoint(), milliseconds(500)).call({"CLUSTER", "SLOTS"}));
        } catch (const RedisError&) {
            continue;  // a dead node (the killed master)
        }
        std::optional<RedisEndpoint> here;
        if (const auto master = map.master_of(slot)) {
            here = n->endpoint();
            here->host = master->first;
            here->port = master->second;
        }
        // Every live node names the same master, so a client reading any one's map is sent there.
        if (!here || (named && named->port != here->port)) return std::nullopt;
        named = here;
    }
    if (!named) return std::nullopt;
    try {
        const RedisReply role = RedisClient(*named, milliseconds(500)).call({"ROLE"});
        if (role.elements.empty() || role.elements[0].str != "master") return std::nullopt;
    } catch (const RedisError&) {
        return std::nullopt;  // the map still names the dead master
    }
    return named;
}

RedisEndpoint EmbeddedRedisCluster::pause_replica_of(int slot) {
    const std::optional<RedisEndpoint> master = serving_master(slot);
    if (!master) throw std::logic_error(fmt::format("no master of the cluster serves slot {}", slot));
    for (size_t i = 0; i < m_nodes.size(); ++i) {
        if (is_paused(i) || m_nodes[i]->endpoint().port == master->port) continue;
        RedisReply role;
        try {
            role = RedisClient(m_nodes[i]->endpoint(), milliseconds(500)).call({"ROLE"});
        } catch (const RedisError&) {
            continue;  // a killed node
        }
        // ROLE on a replica: "slave", its master's host, its master's port, ...
        if (role.elements.size() < 3 || role.elements[0].str != "slave" || role.elements[2].integer != master->port)
            continue;
        if (::kill(m_nodes[i]->pid(), SIGSTOP) != 0)
            throw std::runtime_error(fmt::format("SIGSTOP to {} failed", node_name(i, m_nodes[i]->endpoint())));
        m_paused[slot] = i;
        return m_nodes[i]->endpoint();
    }
    throw std::logic_error(fmt::format("the master {} serving slot {} has no live replica to pause", master->display(), slot));
}

void EmbeddedRedisCluster::resume_replica_of(int slot) noexcept {
    const auto it = m_paused.find(slot);
    if (it == m_paused.end()) return;
    ::kill(m_nodes[it->second]->pid(), SIGCONT);
    m_paused.erase(it);
}

void EmbeddedRedisCluster::resume_replicas() noexcept {
    for (const auto& [slot, node] : m_paused) ::kill(m_nodes[node]->pid(), SIGCONT);
    m_paused.clear();
}

bool EmbeddedRedisCluster::is_paused(size_t node) const {
    return std::any_of(m_paused.begin(), m_paused.end(), [&](const auto& p) { return p.second == node; });
}

int64_t EmbeddedRedisCluster::drop_replica_links_of(int slot) {
    const std::optional<RedisEndpoint> master = serving_master(slot);
    if (!master) throw std::logic_error(fmt::format("no master of the cluster serves slot {}", slot));
    return RedisClient(*master).call({"CLIENT", "KILL", "TYPE", "replica"}).integer;
}

// A stopped node would never act on its SIGTERM.
EmbeddedRedisCluster::~EmbeddedRedisCluster() { resume_replicas(); }

size_t EmbeddedRedisCluster::size() const { return m_masters; }

std::vector<RedisEndpoint> EmbeddedRedisCluster::endpoints() const {
    std::vector<RedisEndpoint> out;
    for (size_t i = 0; i < m_masters; ++i) out.push_back(m_nodes[i]->endpoint());
    return out;
}

std::vector<RedisEndpoint> EmbeddedRedisCluster::all_endpoints() const {
    std::vector<RedisEndpoint> out;
    for (const auto& n : m_nodes) out.push_back(n->endpoint());
    return out;
}

const EmbeddedRedis& EmbeddedRedisCluster::node(size_t i) const { return *m_nodes.at(i); }
SlotRange EmbeddedRedisCluster::slots(size_t i) const { return m_slots.at(i); }
std::chrono::milliseconds EmbeddedRedisCluster::formed_after() const { return m_formed_after; }

void EmbeddedRedisCluster::stop() {
    resume_replicas();
    for (auto& n : m_nodes) n->stop();
}

}  // namespace relab
