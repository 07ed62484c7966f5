// A role's connection to a Redis Cluster (S2's shards): each command goes to the master that owns
// its key's slot, by a slot map read from CLUSTER SLOTS, and follows the cluster's redirections as
// a cluster client must (hiredis 0.14 has no cluster support):
//   MOVED slot host:port  the slot lives elsewhere now: read the slot map again, send it there;
//   ASK slot host:port    the slot is migrating and this key is already on the target: send ASKING
//                         and the command to the target, once, without changing the map.
// Connections to every node are opened as the map names them, each named "<barrier_prefix><actor>"
// (CLIENT SETNAME), so the start barrier and the harness find the role's connections on any node.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "clients/redis_client.h"

namespace relab {

class ClusterRouter {
public:
    // seeds: the cluster's nodes (one is enough to read the map). Connects and reads CLUSTER SLOTS
    // at once; throws RedisError when no seed answers it or a slot is served by no node.
    ClusterRouter(std::vector<RedisEndpoint> seeds, RedisNamespace ns, std::string barrier_prefix, std::string actor = "");
    ~ClusterRouter();
    ClusterRouter(const ClusterRouter&) = delete;
    ClusterRouter& operator=(const ClusterRouter&) = delete;

    struct Node {
        RedisEndpoint ep;
        std::unique_ptr<RedisClient> client;
        std::unique_ptr<RealStream> stream;
        std::unique_ptr<RealKv> kv;
    };

    // f(node) on the owner of the real key's slot, following MOVED (map read again) and ASK
    // (ASKING on the target first) up to 5 times; then the redirection is thrown as RedisError.
    template <class F>
    auto on_key(const std::string& real_key, F&& f) -> decltype(f(std::declval<Node&>())) {
        const Node* ask = nullptr;
        for (int hop = 0;; ++hop) {
            Node& n = ask ? const_cast<Node&>(*ask) : owner(real_key);
            if (ask) n.client->call({"ASKING"});
            try {
                return f(n);
            } catch (const RedisError& e) {
                if (hop >= kMaxRedirects || !follow(e, ask)) throw;
            }
        }
    }
    // A command on the owner of real_key's slot; an error reply other than a redirection throws.
    RedisReply call(const std::string& real_key, const std::vector<std::string>& argv);

    const RedisNamespace& ns() const { return m_ns; }
    std::vector<Node*> nodes();  // every node the map names, in the map's order
    Node& owner(const std::string& real_key);
    std::string owner_address(const std::string& real_key);  // "127.0.0.1:7001"
    int64_t moved() const { return m_moved; }   // MOVED replies followed
    int64_t asked() const { return m_asked; }   // ASK replies followed
    void refresh();  // CLUSTER SLOTS again, from the first node that answers

    static constexpr int kMaxRedirects = 5;

private:
    // A MOVED (refresh, ask = null) or ASK (ask = the target) reply: true when followed.
    bool follow(const RedisError& e, const Node*& ask);
    Node& node_at(const std::string& host, int port);

    std::vector<RedisEndpoint> m_seeds;
    RedisNamespace m_ns;
    std::string m_barrier_prefix;
    std::string m_name;
    std::map<std::string, std::unique_ptr<Node>> m_nodes;  // "host:port" -> node
    std::vector<std::string> m_order;                      // addresses in the map's order
    std::vector<std::string> m_owner;                      // per slot: "host:port"
    int64_t m_moved = 0;
    int64_t m_asked = 0;
};

// The Stream port of a stream role on the cluster: every call on the stream's owner; the start
// barrier counts blocked readers on every node.
class ClusterStream : public Stream {
public:
    explicit ClusterStream(ClusterRouter& r) : m_r(r) {}
    std::vector<std::string> xadd(const std::string& s, const std::vector<Fields>& batch) override;
    std::vector<StreamEntry> xreadgroup(const std::string& g, const std::string& c, const std::string& s, int n,
                                        Millis block) override;
    bool create_group(const std::string& s, const std::string& g, const std::string& start) override;
    void xack(const std::string& s, const std::string& g, const std::string& id) override;
    void xack_all(const std::string& s, const std::string& g, const std::vector<std::string>& ids) override;
    std::vector<StreamEntry> xrange(const std::string& s) override;
    bool group_drained(const std::string& s, const std::string& g) override;
    void wait_readers_blocked(int readers, Millis timeout) override;

private:
    ClusterRouter& m_r;
};

// The Kv port on the cluster: the stop flag and locks, each on its key's owner.
class ClusterKv : public Kv {
public:
    explicit ClusterKv(ClusterRouter& r) : m_r(r) {}
    bool set_nx_px(const std::string& k, const std::string& v, Millis ttl) override;
    int64_t delete_if_equals(const std::string& k, const std::string& token) override;
    std::string delete_if_equals_method() const override { return "compare-and-delete Lua script"; }
    bool exists(const std::string& k) override;

private:
    ClusterRouter& m_r;
};

}  // namespace relab
