// A lab whose faults act on links (delay, blackhole, heal): a TCP proxy of relab's own on loopback
// in front of each server a role reaches, per role, kept across its restarts, which the link
// faults then hang, slow or heal (process/link_proxy.h). Any other lab's roles reach the servers
// themselves.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "ports/link_mode.h"
#include "ports/target.h"
#include "process/link_proxy.h"
#include "process/role_process.h"
#include "scenario/scenario.h"

namespace relab {

class RoleLinkProxies {
public:
    explicit RoleLinkProxies(const Scenario& s) : m_s(s) {}

    // The config a role's process gets: in a lab whose faults act on links, its Redis and
    // PostgreSQL are its own proxies in front of them (opened at its first spawn); else `c` as it
    // is. Throws HarnessError for a lab whose roles find the servers themselves (Sentinel, a cluster).
    RoleConfig through(RoleConfig c);
    // Control::set_link: what role `t`'s link to `server` does from now on; logic_error for a
    // target with no proxy.
    nlohmann::json set(const Target& t, LinkServer server, const LinkMode& mode);
    // No role has a proxy (yet).
    bool empty() const { return m_links.empty(); }

private:
    struct Links {
        std::unique_ptr<LinkProxy> redis, pg;
    };
    const Scenario& m_s;
    std::map<std::string, Links> m_links;  // by actor
};

}  // namespace relab
