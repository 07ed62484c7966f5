#include "clients/redis_link.h"

#include <algorithm>

#include <fmt/format.h>

namespace relab {

namespace {
// Short, so a stopped or dead server does not hold a client for long while it looks around.
constexpr Millis k_discovery_timeout{500};
constexpr Millis k_call_timeout{5000};
}  // namespace

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

bool link_must_reconnect(const RedisError& e) {
    if (e.kind() == KvError::Kind::unavailable) return true;  // RedisConnectionError
    // READONLY You can't write against a read only replica: the node was demoted (a failover).
    return e.kind() == KvError::Kind::reply && e.server_message().rfind("READONLY", 0) == 0;
}

RedisLink::RedisLink(RedisEndpoint ep, RedisNamespace ns, std::string barrier_prefix,
                     std::vector<RedisEndpoint> sentinels, std::string master_name, std::string actor)
    : m_ep(std::move(ep)), m_ns(std::move(ns)), m_barrier_prefix(std::move(barrier_prefix)),
      m_sentinels(std::move(sentinels)), m_master_name(std::move(master_name)), m_actor(std::move(actor)) {
    connect();
}

void RedisLink::connect() {
    std::unique_ptr<RedisClient> client =
        m_sentinels.empty()
            ? connect_to_master(m_ep, "the configured primary")
            : connect_to_master(primary_named_by_sentinels(m_sentinels, m_master_name, m_ep), "the one Sentinel names");
    if (!m_actor.empty()) client->call({"CLIENT", "SETNAME", m_barrier_prefix + m_actor});
    if (!m_delex) m_delex = detect_redis_features(*client).delex;
    m_stream = std::make_unique<RealStream>(*client, m_ns, m_barrier_prefix);
    m_kv = std::make_unique<RealKv>(*client, m_ns, *m_delex);
    m_client = std::move(client);
}

void RedisLink::drop() {
    m_stream.reset();
    m_kv.reset();
    m_client.reset();
}

RealStream& RedisLink::stream() {
    if (!m_client) connect();
    return *m_stream;
}

RealKv& RedisLink::kv() {
    if (!m_client) connect();
    return *m_kv;
}

bool RedisLink::delex() const { return m_delex.value_or(false); }  // asked by the constructor

}  // namespace relab
