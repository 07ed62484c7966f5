#include "real/redis_link.h"

#include "real/failover_kv.h"

namespace relab {

RedisLink::RedisLink(RedisEndpoint ep, RedisNamespace ns, std::string barrier_prefix,
                     std::vector<RedisEndpoint> sentinels, std::string master_name, std::string actor)
    : m_ep(std::move(ep)), m_ns(std::move(ns)), m_barrier_prefix(std::move(barrier_prefix)),
      m_sentinels(std::move(sentinels)), m_master_name(std::move(master_name)), m_actor(std::move(actor)) {
    connect();
}

void RedisLink::connect() {
    std::unique_ptr<RedisClient> client =
        m_sentinels.empty()
            ? std::make_unique<RedisClient>(m_ep)
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
