// relab's one Redis Cluster client (hiredis 0.14 has no cluster support): each command goes to the
// master that owns its key's slot, by a slot map read from CLUSTER SLOTS. What it does with a
// redirection is its option:
//   followed (S2's roles and backend, whose labs move slots under them):
//     MOVED slot host:port  the slot lives elsewhere now: read the slot map again, send it there;
//     ASK slot host:port    the slot is migrating and this key is already on the target: send ASKING
//                           and the command to the target, once, without changing the map;
//   a lost connection (a killed master, S2's shard failover): the slot map is read again and the
//                         error thrown, for the caller to ride out and retry on the new map;
//   refused (the idempotency cluster lab, whose cluster never moves a slot): MOVED and ASK throw
//     ClusterRedirectError, since relab routed wrong or the cluster changed under the lab.
// Every other reply, errors included (CROSSSLOT is something a lab wants to see), is the caller's.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clients/cluster_slot.h"
#include "clients/redis_client.h"

namespace relab {

// A redirection the client was told not to follow; the message says which key, which slot, which
// node relab sent it to and where the cluster sent it.
class ClusterRedirectError : public RedisError {
public:
    using RedisError::RedisError;
};

// "MOVED 3999 127.0.0.1:6381" or "ASK ..." (the error reply's text).
bool is_redirect(const RedisReply& reply);

struct ClusterClientOptions {
    bool follow_redirects = true;
    // The Stream and Kv adapters of each node (Node::stream, Node::kv) work under this namespace
    // and count the start barrier's readers by this prefix.
    RedisNamespace ns;
    std::string barrier_prefix;
    // Non-empty: every connection is named "<barrier_prefix><actor>" (CLIENT SETNAME), so the start
    // barrier and the harness find a role's connections on any node.
    std::string actor;

    // S2's roles and backend, whose labs move slots under them.
    static ClusterClientOptions following(RedisNamespace ns, std::string barrier_prefix, std::string actor = "") {
        ClusterClientOptions o;
        o.ns = std::move(ns);
        o.barrier_prefix = std::move(barrier_prefix);
        o.actor = std::move(actor);
        return o;
    }
    // A lab whose cluster never moves a slot: a redirection is an error.
    static ClusterClientOptions refusing() {
        ClusterClientOptions o;
        o.follow_redirects = false;
        return o;
    }
};

class ClusterClient {
public:
    // seeds: the cluster's nodes (one is enough to read the map). Connects and reads CLUSTER SLOTS
    // at once; throws RedisError when no seed answers it or a slot is served by no node.
    ClusterClient(std::vector<RedisEndpoint> seeds, ClusterClientOptions opts);
    ~ClusterClient();
    ClusterClient(const ClusterClient&) = delete;
    ClusterClient& operator=(const ClusterClient&) = delete;

    struct Node {
        RedisEndpoint ep;
        std::unique_ptr<RedisClient> client;
        std::unique_ptr<RealStream> stream;
        std::unique_ptr<RealKv> kv;
    };

    // f(node) on the owner of the real key's slot. A RedisError that is a redirection is followed
    // (up to kMaxRedirects times, then thrown as it is) or thrown as ClusterRedirectError, as the
    // options say.
    template <class F>
    auto on_key(const std::string& real_key, F&& f) -> decltype(f(std::declval<Node&>())) {
        Node* ask = nullptr;
        for (int hop = 0;; ++hop) {
            Node& n = ask ? *ask : owner(real_key);
            if (ask) n.client->call({"ASKING"});
            try {
                return f(n);
            } catch (const RedisError& e) {
                ask = after_redirect(real_key, n, e, hop);
            }
        }
    }
    // argv on the owner of real_key's slot; an error reply other than a redirection is returned.
    RedisReply command(const std::string& real_key, const std::vector<std::string>& argv);
    // As command(), but an error reply throws RedisError.
    RedisReply call(const std::string& real_key, const std::vector<std::string>& argv);
    // commands[i] goes to the owner of keys[i]; one pipeline per node; replies in the commands'
    // order. A redirected command is sent again alone, as command() sends it.
    std::vector<RedisReply> pipeline(const std::vector<std::string>& keys,
                                     const std::vector<std::vector<std::string>>& commands);

    // The nodes the map names, in its order (CLUSTER SLOTS lists ranges by slot: node 1 owns slot
    // 0). An index holds until the map is read again.
    size_t size() const { return m_order.size(); }
    Node& node(size_t i) { return *m_order.at(i); }
    const RedisEndpoint& endpoint(size_t i) const { return m_order.at(i)->ep; }
    std::string node_text(size_t i) const;  // "node 1 (127.0.0.1:7001)"
    std::vector<Node*> nodes() const { return m_order; }
    size_t node_of_slot(int slot) const { return m_owner.at(static_cast<size_t>(slot)); }
    size_t node_of_key(std::string_view key) const { return node_of_slot(key_slot(key)); }
    Node& owner(const std::string& real_key) { return node(node_of_key(real_key)); }
    std::string owner_address(const std::string& real_key) const;  // "127.0.0.1:7001"

    const RedisNamespace& ns() const { return m_opts.ns; }
    int64_t moved() const { return m_moved; }  // MOVED replies followed
    int64_t asked() const { return m_asked; }  // ASK replies followed
    void refresh();  // CLUSTER SLOTS again, from the first node that answers

    static constexpr int kMaxRedirects = 5;

private:
    // Called while `e` is being handled: returns where to send the command next (null: the owner
    // by the map read again) or rethrows, as the options and the hop count say.
    Node* after_redirect(const std::string& real_key, const Node& sent_to, const RedisError& e, int hop);
    [[noreturn]] void refuse_redirect(const std::string& real_key, const Node& sent_to, const RedisError& e) const;
    Node& node_at(const std::string& host, int port);

    std::vector<RedisEndpoint> m_seeds;
    ClusterClientOptions m_opts;
    std::map<std::string, std::unique_ptr<Node>> m_known;  // "host:port" -> node, every one connected
    std::vector<Node*> m_order;                            // the nodes the map names, in its order
    std::vector<uint16_t> m_owner;                         // per slot: its owner's index in m_order
    int64_t m_moved = 0;
    int64_t m_asked = 0;
};

// The Stream port of a stream role on the cluster: every call on the stream's owner; the start
// barrier counts blocked readers on every node.
class ClusterStream : public Stream {
public:
    explicit ClusterStream(ClusterClient& c) : m_c(c) {}
    std::vector<std::string> xadd(const std::string& s, const std::vector<Fields>& batch) override;
    std::vector<StreamEntry> xreadgroup(const std::string& g, const std::string& c, const std::string& s, int n,
                                        Millis block) override;
    // The recovery commands, on the stream's owner (S2's consumer claims within its own shard).
    std::vector<StreamEntry> xreadgroup_pending(const std::string& g, const std::string& c, const std::string& s,
                                                int n, const std::string& after) override;
    AutoClaimed xautoclaim(const std::string& s, const std::string& g, const std::string& c, Millis min_idle,
                           const std::string& start, int n) override;
    bool create_group(const std::string& s, const std::string& g, const std::string& start) override;
    void xack(const std::string& s, const std::string& g, const std::string& id) override;
    void xack_all(const std::string& s, const std::string& g, const std::vector<std::string>& ids) override;
    std::vector<StreamEntry> xrange(const std::string& s) override;
    bool group_drained(const std::string& s, const std::string& g) override;
    void wait_readers_blocked(int readers, Millis timeout) override;

private:
    ClusterClient& m_c;
};

// The Kv port on the cluster: the stop flag and locks, each on its key's owner.
class ClusterKv : public Kv {
public:
    explicit ClusterKv(ClusterClient& c) : m_c(c) {}
    bool set_nx_px(const std::string& k, const std::string& v, Millis ttl) override;
    int64_t delete_if_equals(const std::string& k, const std::string& token) override;
    std::string delete_if_equals_method() const override { return "compare-and-delete Lua script"; }
    bool exists(const std::string& k) override;

private:
    ClusterClient& m_c;
};

}  // namespace relab
