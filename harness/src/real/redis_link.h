// A role's Redis connection that comes back after its server does (a restart fault): a call that
// finds the connection broken fails as it would in an app (KvError, unavailable), and the next
// call connects again. The Stream and Kv ports over it, for stream labs.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "real/redis_client.h"

namespace relab {

class RedisLink {
public:
    // With sentinels, every (re)connection asks them for the primary, as a Sentinel-aware client.
    // With an actor, every connection is named "<barrier_prefix><actor>" (CLIENT SETNAME), so the
    // nemesis can close the connections of one role, or of every role of the trial (drop_link).
    RedisLink(RedisEndpoint ep, RedisNamespace ns, std::string barrier_prefix,
              std::vector<RedisEndpoint> sentinels = {}, std::string master_name = "", std::string actor = "");
    RealStream& stream();
    RealKv& kv();
    bool delex() const;  // whether the server has DELEX (asked on the first connection)
    // Runs f(); a broken connection is dropped (so the next call reconnects) and the error rethrown.
    template <class F>
    auto with(F&& f) {
        try {
            return f();
        } catch (const RedisConnectionError&) {
            drop();
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
    std::vector<StreamEntry> xreadgroup(const std::string& g, const std::string& c, const std::string& s, int n,
                                        Millis block) override {
        return m_l.with([&] { return m_l.stream().xreadgroup(g, c, s, n, block); });
    }
    std::vector<StreamEntry> xreadgroup_pending(const std::string& g, const std::string& c, const std::string& s,
                                                int n) override {
        return m_l.with([&] { return m_l.stream().xreadgroup_pending(g, c, s, n); });
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
    std::vector<StreamEntry> xrange(const std::string& s) override {
        return m_l.with([&] { return m_l.stream().xrange(s); });
    }
    void wait_readers_blocked(int readers, Millis timeout) override {
        m_l.with([&] { m_l.stream().wait_readers_blocked(readers, timeout); });
    }

private:
    RedisLink& m_l;
};

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

private:
    RedisLink& m_l;
};

}  // namespace relab
