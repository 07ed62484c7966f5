// A small TCP proxy that stands between one role and one server on loopback, so that a fault can
// hang or slow that role's link while the role and the server keep running (toxiproxy's latency
// and timeout toxics, in-process). One thread polls every connection it carries; the bytes a
// blackhole takes stay queued in the proxy and flow, in order, once the link is healed, as the
// bytes of a TCP link that resumes do.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ports/link_mode.h"

namespace relab {

class LinkProxy {
public:
    // Listens on 127.0.0.1, on a port the kernel picks free, and carries every connection made
    // to it to upstream_host:upstream_port. Throws EnvironmentError when it cannot listen.
    LinkProxy(std::string upstream_host, int upstream_port);
    ~LinkProxy();  // stops its thread and closes every socket it opened
    LinkProxy(const LinkProxy&) = delete;
    LinkProxy& operator=(const LinkProxy&) = delete;

    int port() const;
    // The new mode takes effect for the bytes that come from now on; a heal (the default mode)
    // also releases every byte a blackhole held. Returns how many bytes that were.
    int64_t set(LinkMode mode);
    LinkMode mode() const;
    // Bytes read and not yet forwarded (held by a blackhole, or waiting out a delay).
    int64_t queued_bytes() const;
    // Connections accepted since the proxy started.
    int64_t connections() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

}  // namespace relab
