#include "real/redis_link.h"

namespace relab {

RedisLink::RedisLink(RedisEndpoint ep, RedisNamespace ns, std::string barrier_prefix)
    : m_ep(std::move(ep)), m_ns(std::move(ns)), m_barrier_prefix(std::move(barrier_prefix)) {
    connect();
}

void RedisLink::connect() {
    auto client = std::make_unique<RedisClient>(m_ep);
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
