#include "backend_real/role_link_proxies.h"

#include <stdexcept>

#include <fmt/format.h>

#include "fault/fault_spec.h"
#include "ports/ports.h"

namespace relab {

RoleConfig RoleLinkProxies::through(RoleConfig c) {
    if (!faults_act_on_links(m_s.faults)) return c;
    if (!c.redis_sentinels.empty() || !c.redis_cluster.empty())
        throw HarnessError(fmt::format("{}: a link fault needs the roles to reach Redis through relab's proxy; "
                                       "with Sentinel or a Redis Cluster they find the servers themselves",
                                       m_s.id));
    Links& l = m_links[c.actor];
    if (!l.redis) l.redis = std::make_unique<LinkProxy>(c.redis.host, c.redis.port);
    if (!l.pg) l.pg = std::make_unique<LinkProxy>(c.pg.host, c.pg.port);
    c.redis.host = c.pg.host = "127.0.0.1";
    c.redis.port = l.redis->port();
    c.pg.port = l.pg->port();
    return c;
}

nlohmann::json RoleLinkProxies::set(const Target& t, LinkServer server, const LinkMode& mode) {
    const auto it = m_links.find(t.actor);
    if (!t.is_role() || it == m_links.end())
        throw std::logic_error(fmt::format("no link proxy for {}: its lab's faults act on no link", target_name(t)));
    LinkProxy& proxy = server == LinkServer::redis ? *it->second.redis : *it->second.pg;
    return {{"released", proxy.set(mode)}, {"unit", "bytes"}};
}

}  // namespace relab
