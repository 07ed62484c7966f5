// The Kv port for clients of the idempotency fault labs: a connection that survives its server.
// When a call finds the connection broken (restart, failover) or the node demoted (READONLY), the
// call fails as it would in an app, and the next call connects again. With sentinels it asks them
// for the primary (SENTINEL get-master-addr-by-name) and checks that the node it names answers
// ROLE master, as the Redis Sentinel client guidelines say; without, it connects to the primary
// it was given (a restarted server comes back on its port).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "real/redis_client.h"

namespace relab {

// SENTINEL get-master-addr-by-name master_name, asking each sentinel in turn; the one that answers
// goes first next time (the Sentinel client guidelines). `base` gives the password and db. Throws
// RedisConnectionError when no sentinel names the primary.
RedisEndpoint primary_named_by_sentinels(std::vector<RedisEndpoint>& sentinels, const std::string& master_name,
                                         const RedisEndpoint& base);
// A connection to `ep` that ROLE says is a master, or RedisConnectionError (`who` names where ep came from).
std::unique_ptr<RedisClient> connect_to_master(const RedisEndpoint& ep, const std::string& who);

class FailoverKv : public Kv {
public:
    // primary: the data node at the start; its password and db are used for whichever node
    // becomes the primary. sentinels: where to ask for the primary by master_name (empty: none).
    FailoverKv(RedisEndpoint primary, std::vector<RedisEndpoint> sentinels, std::string master_name,
               RedisNamespace ns);
    bool set_nx_px(const std::string& key, const std::string& value, Millis ttl) override;
    int64_t delete_if_equals(const std::string& key, const std::string& token) override;
    std::string delete_if_equals_method() const override;
    bool exists(const std::string& key) override;
    KvSetResult set(const std::string& key, const std::string& value, const KvSetOptions& o) override;
    std::optional<std::string> get(const std::string& key) override;
    int64_t del(const std::string& key) override;
    int64_t wait_replicas(int64_t replicas, Millis timeout) override;

private:
    RealKv& current();
    // The primary the sentinels name (the first that answers is asked first next time).
    RedisEndpoint ask_sentinels();
    template <class F>
    auto with_kv(F&& f) {
        RealKv& kv = current();
        try {
            return f(kv);
        } catch (const RedisConnectionError&) {
            m_kv.reset();
            m_client.reset();
            throw;
        } catch (const RedisError& e) {
            // READONLY: the node was demoted to a replica (a failover); look for the primary again.
            if (e.server_message().rfind("READONLY", 0) == 0) {
                m_kv.reset();
                m_client.reset();
            }
            throw;
        }
    }

    RedisEndpoint m_primary;
    std::vector<RedisEndpoint> m_sentinels;
    std::string m_master_name;
    RedisNamespace m_ns;
    std::unique_ptr<RedisClient> m_client;
    std::unique_ptr<RealKv> m_kv;
};

}  // namespace relab
