#include "families/idem_cluster.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "check/idem_check.h"
#include "ports/seeded_rng.h"
#include "util/interrupt.h"
#include "clients/cluster_client.h"
#include "servers/redis_cluster.h"
#include "servers/cluster_prefetch.h"
#include "families/probe.h"
#include "families/redis_session.h"

namespace relab {

namespace {

using SteadyClock = std::chrono::steady_clock;

// The middleware's claim (article 002, section 1.1): SET key {in_progress} NX GET EX 60.
const std::string kClaimValue = R"({"status":"in_progress"})";
const std::vector<std::string> kClaimOptions = {"NX", "GET", "EX", "60"};
// Claims per pipeline: between two batches the lab answers Ctrl-C.
constexpr size_t kClaimBatch = 500;

std::string key_with(const std::string& format, const std::string& client_key) {
    std::string out = format;
    for (size_t at; (at = out.find("{client_key}")) != std::string::npos;) out.replace(at, 12, client_key);
    return out;
}

// The per-node figures a load changes.
struct NodeStats {
    std::vector<int64_t> keys;       // DBSIZE
    std::vector<int64_t> set_calls;  // INFO commandstats, cmdstat_set calls
};

NodeStats node_stats(ClusterClient& client) {
    NodeStats s;
    for (size_t n = 0; n < client.size(); ++n) {
        s.keys.push_back(client.node(n).client->call({"DBSIZE"}).integer);
        s.set_calls.push_back(command_calls(client.node(n).client->call({"INFO", "commandstats"}).str, "set"));
    }
    return s;
}

std::vector<int64_t> minus(const std::vector<int64_t>& after, const std::vector<int64_t>& before) {
    std::vector<int64_t> out;
    for (size_t i = 0; i < after.size(); ++i) out.push_back(after[i] - before.at(i));
    return out;
}

int64_t nodes_with_any(const std::vector<int64_t>& counts) {
    return std::count_if(counts.begin(), counts.end(), [](int64_t c) { return c > 0; });
}

class ClusterTrial {
public:
    ClusterTrial(const Scenario& s, ClusterClient& client, int trial, uint64_t seed,
                 SteadyClock::time_point origin, std::vector<Measurement>* measurements)
        : m_s(s), m_spec(s.idem().cluster.value()), m_client(client), m_trial(trial), m_seed(seed), m_origin(origin),
          m_measurements(measurements) {}

    // The record of how the cluster was formed, first in trial 1's history.
    void note_cluster(const EmbeddedRedisCluster& cluster) {
        std::string nodes;
        for (size_t n = 0; n < cluster.size(); ++n)
            nodes += fmt::format("{}{} slots {}", n == 0 ? "" : ", ", m_client.node_text(n), cluster.slots(n).text());
        note(fmt::format("Redis Cluster of {} masters, no replicas (cluster-enabled yes, cluster-node-timeout {} ms): "
                         "{}; CLUSTER SET-CONFIG-EPOCH, ADDSLOTSRANGE and MEET → cluster_state:ok on every node after "
                         "{} ms",
                         cluster.size(), m_spec.node_timeout_ms, nodes, cluster.formed_after().count()),
             {{"step", "cluster"}, {"masters", cluster.size()}, {"cluster_state", "ok"}});
    }

    TrialOutcome run() {
        if (m_trial > 1) {
            for (size_t n = 0; n < m_client.size(); ++n) m_client.node(n).client->call({"FLUSHALL"});
            note("FLUSHALL on every node: the trial starts on an empty cluster", {{"step", "flush"}});
        }
        for (const auto& p : m_spec.pairs) {
            throw_if_interrupted();
            run_pair(p);
        }
        if (m_spec.hot_user) {
            SeededRng rng(derive_seed(m_seed, "client-keys"));
            std::vector<std::string> client_keys;
            for (int64_t i = 0; i < m_spec.hot_user->claims; ++i) {
                const uint64_t high = rng.next();
                client_keys.push_back(uuid_v4(high, rng.next()));
            }
            for (const auto& l : m_spec.hot_user->loads) run_load(l, client_keys);
        }
        return check_idem_trial(m_s, m_trial, m_seed, std::move(m_history), {});
    }

private:
    void note(const std::string& text, nlohmann::json fields) {
        fields["text"] = text;
        const auto t = std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - m_origin).count();
        m_history.push_back(HistoryRecord{m_trial, t, "relab", Op::observe, std::move(fields)});
    }

    void measure(Measurement m) {
        if (m_measurements) m_measurements->push_back(std::move(m));
    }

    // CLUSTER KEYSLOT of every key (asked of node 1: any node answers it), checked against relab's
    // own slot function, which routes every command after it; then the script over the keys.
    void run_pair(const ClusterKeyPair& p) {
        std::vector<int64_t> slots;
        std::vector<int64_t> nodes;
        std::string text;
        for (const auto& key : p.keys) {
            const std::vector<std::string> argv{"CLUSTER", "KEYSLOT", key};
            const RedisReply reply = m_client.node(0).client->call(argv);
            if (reply.integer != key_slot(key))
                throw std::runtime_error(fmt::format("CLUSTER KEYSLOT {} answered {}, relab's slot function computes {}: "
                                                     "relab would send this key to the wrong node",
                                                     key, reply.integer, key_slot(key)));
            slots.push_back(reply.integer);
            nodes.push_back(static_cast<int64_t>(m_client.node_of_slot(static_cast<int>(reply.integer))) + 1);
            text += fmt::format("{}{} → {}", text.empty() ? "" : ", ", display_command(argv), reply.to_string());
        }
        const bool same_slot = std::all_of(slots.begin(), slots.end(), [&](int64_t s) { return s == slots.front(); });
        const bool same_node = std::all_of(nodes.begin(), nodes.end(), [&](int64_t n) { return n == nodes.front(); });
        std::set<int64_t> distinct_nodes(nodes.begin(), nodes.end());
        std::string where;
        for (int64_t n : distinct_nodes)
            where += fmt::format("{}{}", where.empty() ? "" : " and ", m_client.node_text(static_cast<size_t>(n - 1)));
        const std::string verdict = same_slot   ? "the same slot, on " + where
                                    : same_node ? "different slots, both on " + where
                                                : "different slots, on " + where;
        note(text + ": " + verdict, {{"step", "keyslot"},
                                     {"pair", p.name},
                                     {"slots", slots},
                                     {"nodes", nodes},
                                     {"same_slot", same_slot},
                                     {"same_node", same_node}});
        std::string measured = fmt::format("slots {}: {}", fmt::join(slots, " and "),
                                           same_slot ? "the same slot" : "different slots");
        if (!m_spec.script.empty()) measured += "; EVAL over them → " + run_eval(p);
        measure({fmt::format("{} (CLUSTER KEYSLOT{})", fmt::join(p.keys, " + "), m_spec.script.empty() ? "" : ", EVAL"),
                 measured, p.documented, p.note, p.note_vi, ""});
    }

    // EVAL script N key... arg... to the owner of the first key's slot; the cluster itself answers
    // CROSSSLOT when the keys do not share a slot. Returns the reply as redis-cli prints it.
    std::string run_eval(const ClusterKeyPair& p) {
        std::vector<std::string> argv{"EVAL", m_spec.script, std::to_string(p.keys.size())};
        argv.insert(argv.end(), p.keys.begin(), p.keys.end());
        argv.insert(argv.end(), m_spec.script_args.begin(), m_spec.script_args.end());
        const RedisReply reply = m_client.command(p.keys.front(), argv);
        const size_t node = m_client.node_of_key(p.keys.front());
        nlohmann::json fields{{"step", "eval"}, {"pair", p.name}, {"reply", reply.to_string()}};
        if (reply.is_error()) fields["error_code"] = reply.str.substr(0, reply.str.find(' '));
        note(fmt::format("{} → {}   (sent to {}, the owner of slot {})", display_command(argv), reply.to_string(),
                         m_client.node_text(node), key_slot(p.keys.front())),
             std::move(fields));
        return reply.to_string();
    }

    // One hot user's claims under the load's key format, pipelined to the owner of each key;
    // what each node received is read from the nodes, before and after.
    void run_load(const ClusterLoad& l, const std::vector<std::string>& client_keys) {
        const int64_t claims = m_spec.hot_user->claims;
        std::vector<std::string> keys;
        std::set<int> slots;
        for (const auto& ck : client_keys) {
            keys.push_back(key_with(l.key_format, ck));
            slots.insert(key_slot(keys.back()));
        }
        const NodeStats before = node_stats(m_client);
        const auto started = SteadyClock::now();
        int64_t first = 0, existing = 0, errors = 0;
        std::string first_error;
        for (size_t at = 0; at < keys.size(); at += kClaimBatch) {
            throw_if_interrupted();
            const size_t end = std::min(keys.size(), at + kClaimBatch);
            std::vector<std::string> batch_keys(keys.begin() + static_cast<std::ptrdiff_t>(at),
                                                keys.begin() + static_cast<std::ptrdiff_t>(end));
            std::vector<std::vector<std::string>> commands;
            for (const auto& k : batch_keys) {
                std::vector<std::string> argv{"SET", k, kClaimValue};
                argv.insert(argv.end(), kClaimOptions.begin(), kClaimOptions.end());
                commands.push_back(std::move(argv));
            }
            for (const RedisReply& r : m_client.pipeline(batch_keys, commands)) {
                if (r.is_nil()) {
                    ++first;
                } else if (r.is_error()) {
                    if (errors++ == 0) first_error = r.str;
                } else {
                    ++existing;
                }
            }
        }
        const double took_ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - started).count();
        const NodeStats after = node_stats(m_client);
        const auto keys_per_node = minus(after.keys, before.keys);
        const auto calls_per_node = minus(after.set_calls, before.set_calls);
        const int64_t busiest = *std::max_element(keys_per_node.begin(), keys_per_node.end());
        const size_t busiest_node = static_cast<size_t>(
            std::max_element(keys_per_node.begin(), keys_per_node.end()) - keys_per_node.begin());
        const int64_t total = std::max<int64_t>(1, std::accumulate(keys_per_node.begin(), keys_per_node.end(), int64_t{0}));
        const int busiest_pct = static_cast<int>((100 * busiest + total / 2) / total);
        const std::string shown_key = key_with(l.key_format, "<client_key>");

        std::string replies = fmt::format("{} × (nil)", first);
        if (existing > 0) replies += fmt::format(", {} × an existing value", existing);
        if (errors > 0) replies += fmt::format(", {} errors (first: {})", errors, first_error);
        note(fmt::format("hot user, {}: {} claims SET {} '{}' NX GET EX 60 (a fresh client key each) → {} in {:.0f} ms; "
                         "the keys hash to {} {}; keys per node (DBSIZE): {}; SET calls per node (INFO commandstats): {}",
                         l.name, claims, shown_key, kClaimValue, replies, took_ms, slots.size(),
                         slots.size() == 1 ? "slot" : "slots", per_node_text(keys_per_node), per_node_text(calls_per_node)),
             {{"step", "load"},
              {"load", l.name},
              {"claims", claims},
              {"first", first},
              {"errors", errors},
              {"slots", slots.size()},
              {"keys_per_node", keys_per_node},
              {"set_calls_per_node", calls_per_node},
              {"nodes_used", nodes_with_any(keys_per_node)},
              {"nodes_called", nodes_with_any(calls_per_node)},
              {"busiest_node_pct", busiest_pct}});
        measure({fmt::format("hot user, {} claims as {}: keys per node (DBSIZE)", claims, shown_key),
                 fmt::format("{}   (busiest: node {}, {}%; {} {})", per_node_text(keys_per_node), busiest_node + 1,
                             busiest_pct, slots.size(), slots.size() == 1 ? "slot" : "slots"),
                 l.documented, l.note, l.note_vi, ""});
        measure({fmt::format("hot user, {} claims as {}: SET calls per node (INFO commandstats)", claims, shown_key),
                 per_node_text(calls_per_node), "", "", "", ""});
    }

    const Scenario& m_s;
    const IdemCluster& m_spec;
    ClusterClient& m_client;
    int m_trial;
    uint64_t m_seed;
    SteadyClock::time_point m_origin;
    std::vector<Measurement>* m_measurements;  // trial 1 only
    std::vector<HistoryRecord> m_history;
};

}  // namespace

std::string per_node_text(const std::vector<int64_t>& counts) { return fmt::format("{}", fmt::join(counts, " / ")); }

int64_t command_calls(const std::string& commandstats, const std::string& command) {
    const std::string head = "cmdstat_" + command + ":";
    std::istringstream lines(commandstats);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind(head, 0) != 0) continue;
        const auto at = line.find("calls=", head.size());
        if (at == std::string::npos) return 0;
        return std::stoll(line.substr(at + 6));
    }
    return 0;
}

std::string uuid_v4(uint64_t high, uint64_t low) {
    high = (high & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
    low = (low & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;    // variant 10xx
    return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", high >> 32, (high >> 16) & 0xffff, high & 0xffff,
                       low >> 48, low & 0xffffffffffffULL);
}

RedisClusterOptions idem_cluster_options(const Scenario& s) {
    RedisClusterOptions opts;
    opts.masters = s.idem().cluster.value().masters;
    opts.node_timeout = std::chrono::milliseconds(s.idem().cluster.value().node_timeout_ms);
    return opts;
}

namespace {

// The cluster is formed once, when the lab opens, and every trial runs on it.
class ClusterProbe : public ProbeLab {
public:
    ClusterProbe(const Scenario& s, ProbeEnv& env)
        : m_s(s),
          m_origin(SteadyClock::now()),
          m_cluster(env.clusters ? env.clusters->take(idem_cluster_options(s))
                                 : std::make_unique<EmbeddedRedisCluster>(idem_cluster_options(s))),
          m_client(m_cluster->endpoints(), ClusterClientOptions::refusing()) {
        // The map the cluster serves must be the one it was given: relab routes by it, and the
        // history names node n by the client's index n.
        for (size_t n = 0; n < m_cluster->size(); ++n) {
            const RedisEndpoint given = m_cluster->endpoints()[n];
            for (int slot : {m_cluster->slots(n).first, m_cluster->slots(n).last}) {
                const size_t owner = m_client.node_of_slot(slot);
                const RedisEndpoint& serves = m_client.endpoint(owner);
                if (owner != n || serves.host != given.host || serves.port != given.port)
                    throw std::runtime_error(fmt::format(
                        "CLUSTER SLOTS says slot {} is served by {}, but {} was given slots {}", slot,
                        m_client.node_text(owner), given.display(), m_cluster->slots(n).text()));
            }
        }
    }

    TrialResult trial(int t, uint64_t seed) override {
        // Trial 1's times count from the lab's start, so its timeline shows the cluster forming.
        ClusterTrial trial(m_s, m_client, t, seed, t == 1 ? m_origin : SteadyClock::now(),
                           t == 1 ? &m_measurements : nullptr);
        if (t == 1) trial.note_cluster(*m_cluster);
        return trial.run();
    }

    void finish(LabResult& lab) override {
        for (auto& m : m_measurements) lab.measurements.push_back(std::move(m));
    }

private:
    const Scenario& m_s;
    SteadyClock::time_point m_origin;
    std::unique_ptr<EmbeddedRedisCluster> m_cluster;
    ClusterClient m_client;
    std::vector<Measurement> m_measurements;
};

}  // namespace

std::unique_ptr<ProbeLab> open_cluster_probe(const Scenario& s, ProbeEnv& env) {
    return std::make_unique<ClusterProbe>(s, env);
}

}  // namespace relab
