// A role's link to one of the lab's servers, as a link fault (delay, blackhole, reset_peer, heal) leaves it:
// the real backend's TCP proxy (process/link_proxy.h) and the simulator's connection model
// (sim/sim_network.h) both carry a role's calls this way.
#pragma once

#include <optional>
#include <string>

#include "ports/ports.h"
#include "util/enum_names.h"

namespace relab {

// Which of a role's links: to the lab's Redis, or to its PostgreSQL.
enum class LinkServer { redis, postgres };
inline constexpr EnumName<LinkServer> k_link_servers[] = {{LinkServer::redis, "redis"}, {LinkServer::postgres, "postgres"}};
constexpr const auto& enum_names(LinkServer) { return k_link_servers; }

inline std::string to_string(LinkServer s) { return s == LinkServer::redis ? "redis" : "postgres"; }

// What the link does to the bytes it carries; the default passes them at once (a healed link).
struct LinkMode {
    // Both ways: the bytes are taken and held, neither forwarded nor answered, until a heal lets
    // them through in order (toxiproxy's `timeout` toxic with timeout 0, which holds the data).
    bool blackhole = false;
    // Each reply (server to role) reaches the role this long after the server sent it: every
    // round trip costs this much more (toxiproxy's `latency` toxic on the downstream).
    Millis delay{0};
    // Set to the link's server: each connection is closed with a TCP RST in place of the server's
    // next reply, so a statement the server has run is never answered (toxiproxy's `reset_peer`
    // toxic; it lasts, as the toxic does, until a heal). The role sees that server's lost connection.
    std::optional<LinkServer> reset{};
    bool operator==(const LinkMode&) const = default;
};

}  // namespace relab
