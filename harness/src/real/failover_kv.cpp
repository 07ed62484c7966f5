#include "real/failover_kv.h"

#include <algorithm>

#include <fmt/format.h>

namespace relab {

namespace {
// Short, so a stopped or dead server does not hold a client for long while it looks around.
constexpr Millis k_discovery_timeout{500};
constexpr Millis k_call_timeout{5000};
}  // namespace

FailoverKv::FailoverKv(RedisEndpoint primary, std::vector<RedisEndpoint> sentinels, std::string master_name,
                       RedisNamespace ns)
    : m_primary(std::move(primary)), m_sentinels(std::move(sentinels)), m_master_name(std::move(master_name)),
      m_ns(std::move(ns)) {}

RedisEndpoint primary_named_by_sentinels(std::vector<RedisEndpoint>& sentinels, const std::string& master_name,
                                         const RedisEndpoint& base) {
    std::string tried;
    for (size_t i = 0; i < sentinels.size(); ++i) {
        const RedisEndpoint& s = sentinels[i];
        try {
            RedisClient sentinel(s, k_discovery_timeout);
            const RedisReply r = sentinel.call({"SENTINEL", "get-master-addr-by-name", master_name});
            if (r.type != RedisReply::Type::array || r.elements.size() != 2) {
                tried += fmt::format(" sentinel {}:{} knows no '{}';", s.host, s.port, master_name);
                continue;
            }
            RedisEndpoint out = base;
            out.host = r.elements[0].str;
            out.port = std::stoi(r.elements[1].str);
            // The guidelines: the sentinel that answered goes first next time.
            std::rotate(sentinels.begin(), sentinels.begin() + static_cast<std::ptrdiff_t>(i),
                        sentinels.begin() + static_cast<std::ptrdiff_t>(i) + 1);
            return out;
        } catch (const RedisError& e) {
            tried += fmt::format(" sentinel {}:{}: {};", s.host, s.port, e.server_message());
        }
    }
    throw RedisConnectionError("SENTINEL", "", "no sentinel named the primary:" + tried);
}

std::unique_ptr<RedisClient> connect_to_master(const RedisEndpoint& ep, const std::string& who) {
    std::string why;
    try {
        auto client = std::make_unique<RedisClient>(ep, k_discovery_timeout);
        const RedisReply role = client->call({"ROLE"});
        if (role.type == RedisReply::Type::array && !role.elements.empty() && role.elements[0].str == "master") {
            client->set_timeout(k_call_timeout);
            return client;
        }
        why = fmt::format("{} is a {}", ep.display(), role.elements.empty() ? "?" : role.elements[0].str);
    } catch (const RedisError& e) {
        why = fmt::format("{}: {}", ep.display(), e.server_message());
    }
    throw RedisConnectionError("CONNECT", "", fmt::format("no primary reachable ({}: {})", who, why));
}

RedisEndpoint FailoverKv::ask_sentinels() { return primary_named_by_sentinels(m_sentinels, m_master_name, m_primary); }

RealKv& FailoverKv::current() {
    if (m_kv) return *m_kv;
    const RedisEndpoint ep = m_sentinels.empty() ? m_primary : ask_sentinels();
    m_client = connect_to_master(ep, m_sentinels.empty() ? "the configured primary" : "the one Sentinel names");
    m_kv = std::make_unique<RealKv>(*m_client, m_ns, false);
    return *m_kv;
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
