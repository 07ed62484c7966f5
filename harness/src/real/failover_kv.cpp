#include "real/failover_kv.h"

#include <fmt/format.h>

namespace relab {

namespace {
// Short, so a stopped or dead server does not hold a client for long while it looks around.
constexpr Millis k_discovery_timeout{500};
constexpr Millis k_call_timeout{5000};
}  // namespace

FailoverKv::FailoverKv(std::vector<RedisEndpoint> endpoints, RedisNamespace ns)
    : m_endpoints(std::move(endpoints)), m_ns(std::move(ns)) {}

RealKv& FailoverKv::current() {
    if (m_kv) return *m_kv;
    std::string tried;
    for (const auto& ep : m_endpoints) {
        try {
            auto client = std::make_unique<RedisClient>(ep, k_discovery_timeout);
            const RedisReply role = client->call({"ROLE"});
            if (role.type == RedisReply::Type::array && !role.elements.empty() && role.elements[0].str == "master") {
                client->set_timeout(k_call_timeout);
                m_client = std::move(client);
                m_kv = std::make_unique<RealKv>(*m_client, m_ns, false);
                return *m_kv;
            }
            tried += fmt::format(" {} is a {};", ep.display(), role.elements.empty() ? "?" : role.elements[0].str);
        } catch (const RedisError& e) {
            tried += fmt::format(" {}: {};", ep.display(), e.server_message());
        }
    }
    throw RedisConnectionError("CONNECT", "", "no primary reachable:" + tried);
}

bool FailoverKv::set_nx_px(const std::string& key, const std::string& value, Millis ttl) {
    return with_kv([&](RealKv& kv) { return kv.set_nx_px(key, value, ttl); });
}
int64_t FailoverKv::delete_if_equals(const std::string& key, const std::string& token) {
    return with_kv([&](RealKv& kv) { return kv.delete_if_equals(key, token); });
}
std::string FailoverKv::delete_if_equals_method() const { return "compare-and-delete Lua script"; }
bool FailoverKv::exists(const std::string& key) {
    return with_kv([&](RealKv& kv) { return kv.exists(key); });
}
KvSetResult FailoverKv::set(const std::string& key, const std::string& value, const KvSetOptions& o) {
    return with_kv([&](RealKv& kv) { return kv.set(key, value, o); });
}
std::optional<std::string> FailoverKv::get(const std::string& key) {
    return with_kv([&](RealKv& kv) { return kv.get(key); });
}
int64_t FailoverKv::del(const std::string& key) {
    return with_kv([&](RealKv& kv) { return kv.del(key); });
}
int64_t FailoverKv::wait_replicas(int64_t replicas, Millis timeout) {
    return with_kv([&](RealKv& kv) { return kv.wait_replicas(replicas, timeout); });
}

}  // namespace relab
