// A role's Redis connection that finds the primary again: after a restart (the server comes back
// on its port) and, through Sentinel, after a failover. The one such mechanism: stream roles use
// it through LinkStream and LinkKv, the idempotency clients through LinkKv.
//
// Connecting: the primary is the endpoint the link was given or, with sentinels, the one they
// name (SENTINEL get-master-addr-by-name, asking each in turn; the one that answered goes first
// next time), and it must answer ROLE master before it is used, as the Redis Sentinel client
// guidelines say. Connect and ROLE wait 500 ms at most (a stopped or dead node does not hold a
// client while it looks around); calls then wait 5 s.
//
// A call that finds the connection broken (RedisConnectionError: refused, closed, timed out) or
// the node demoted to a replica (an error reply starting READONLY, after a failover) drops the
// connection and throws that same error: the call fails as it would in an app, nothing is retried
// here, and the next call connects again. What an error means (a lab result, an error the role
// rides out, the harness's failure) is the caller's to decide.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clients/redis_client.h"

namespace relab {

// SENTINEL get-master-addr-by-name master_name, asking each sentinel in turn; the one that answers
// goes first next time (the Sentinel client guidelines). `base` gives the password and db. Throws
// RedisConnectionError when no sentinel names the primary.
RedisEndpoint primary_named_by_sentinels(std::vector<RedisEndpoint>& sentinels, const std::string& master_name,
                                         const RedisEndpoint& base);
// A connection to `ep` that ROLE says is a master, or RedisConnectionError (`who` names where ep came from).
std::unique_ptr<RedisClient> connect_to_master(const RedisEndpoint& ep, const std::string& who);

// Whether an error makes the link look for the primary again: the connection is gone, or the
// node answered READONLY (it is a replica now).
bool link_must_reconnect(const RedisError& e);

class RedisLink {
public:
    // ep: the primary at the start; its password and db are used for whichever node becomes the
    // primary. sentinels: where to ask for the primary by master_name (empty: none, ep is it).
    // Connects at once (a role that cannot reach its server fails at its start).
    // With an actor, every connection is named "<barrier_prefix><actor>" (CLIENT SETNAME), so the
    // nemesis can close the connections of one role, or of every role of the trial (drop_link).
    RedisLink(RedisEndpoint ep, RedisNamespace ns, std::string barrier_prefix,
              std::vector<RedisEndpoint> sentinels = {}, std::string master_name = "", std::string actor = "");
    RealStream& stream();
    RealKv& kv();
    bool delex() const;  // whether the server has DELEX (asked on the first connection)
    // Runs f(); a broken connection or a READONLY reply drops the connection (so the next call
    // reconnects), and the error is rethrown either way.
    template <class F>
    auto with(F&& f) {
        try {
            return f();
        } catch (const RedisError& e) {
            if (link_must_reconnect(e)) drop();
            throw;
        }
    }

private:
    void connect();
    void drop();
    RedisEndpoint m_ep;
    RedisNamespace m_ns;
    std::string m_barrier_prefix;
    std::vector<RedisEndpoint> m_sentinels;
    std::string m_master_name;
    std::string m_actor;
    std::unique_ptr<RedisClient> m_client;
    std::unique_ptr<RealStream> m_stream;
    std::unique_ptr<RealKv> m_kv;
    mutable std::optional<bool> m_delex;
};

class LinkStream : public Stream {
public:
    explicit LinkStream(RedisLink& l) : m_l(l) {}
    std::vector<std::string> xadd(const std::string& s, const std::vector<Fields>& batch) override {
        return m_l.with([&] { return m_l.stream().xadd(s, batch); });
    }
    std::string xadd_idmp(const std::string& s, const Fields& f, const std::string& pid, const std::string& iid) override {
        return m_l.with([&] { return m_l.stream().xadd_idmp(s, f, pid, iid); });
    }
    std::vector<StreamEntry> xreadgroup(const std::string& g, const std::string& c, const std::string& s, int n,
                                        Millis block) override {
        return m_l.with([&] { return m_l.stream().xreadgroup(g, c, s, n, block); });
    }
    std::vector<StreamEntry> xreadgroup_pending(const std::string& g, const std::string& c, const std::string& s,
                                                int n, const std::string& after) override {
        return m_l.with([&] { return m_l.stream().xreadgroup_pending(g, c, s, n, after); });
    }
    AutoClaimed xautoclaim(const std::string& s, const std::string& g, const std::string& c, Millis min_idle,
                           const std::string& start, int n) override {
        return m_l.with([&] { return m_l.stream().xautoclaim(s, g, c, min_idle, start, n); });
    }
    bool create_group(const std::string& s, const std::string& g, const std::string& start) override {
        return m_l.with([&] { return m_l.stream().create_group(s, g, start); });
    }
    void xack(const std::string& s, const std::string& g, const std::string& id) override {
        m_l.with([&] { m_l.stream().xack(s, g, id); });
    }
    void xack_all(const std::string& s, const std::string& g, const std::vector<std::string>& ids) override {
        m_l.with([&] { m_l.stream().xack_all(s, g, ids); });
    }
    std::vector<StreamEntry> xrange(const std::string& s) override {
        return m_l.with([&] { return m_l.stream().xrange(s); });
    }
    void wait_readers_blocked(int readers, Millis timeout) override {
        m_l.with([&] { m_l.stream().wait_readers_blocked(readers, timeout); });
    }

private:
    RedisLink& m_l;
};

// Every Kv call of a role, locks and the idempotency middleware's SET/GET/DEL/WAIT alike.
class LinkKv : public Kv {
public:
    explicit LinkKv(RedisLink& l) : m_l(l) {}
    bool set_nx_px(const std::string& k, const std::string& v, Millis ttl) override {
        return m_l.with([&] { return m_l.kv().set_nx_px(k, v, ttl); });
    }
    int64_t delete_if_equals(const std::string& k, const std::string& token) override {
        return m_l.with([&] { return m_l.kv().delete_if_equals(k, token); });
    }
    std::string delete_if_equals_method() const override {
        return m_l.delex() ? "DELEX IFEQ" : "compare-and-delete Lua script";
    }
    bool exists(const std::string& k) override {
        return m_l.with([&] { return m_l.kv().exists(k); });
    }
    KvSetResult set(const std::string& k, const std::string& v, const KvSetOptions& o) override {
        return m_l.with([&] { return m_l.kv().set(k, v, o); });
    }
    std::optional<std::string> get(const std::string& k) override {
        return m_l.with([&] { return m_l.kv().get(k); });
    }
    int64_t del(const std::string& k) override {
        return m_l.with([&] { return m_l.kv().del(k); });
    }
    int64_t wait_replicas(int64_t replicas, Millis timeout) override {
        return m_l.with([&] { return m_l.kv().wait_replicas(replicas, timeout); });
    }

private:
    RedisLink& m_l;
};

}  // namespace relab
