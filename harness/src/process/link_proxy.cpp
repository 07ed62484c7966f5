#include "process/link_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "process/proxy_way.h"
#include "util/environment_error.h"

namespace relab {

// Named, not anonymous: Impl's members use these types, and the unity build shares one file.
namespace link_proxy_detail {

// A role's connection and the proxy's own to the server, carried both ways.
struct ProxyPair {
    ProxyWay up;    // role to server: never delayed
    ProxyWay down;  // server to role: the replies a delay holds back
    bool dead = false;
    bool reset = false;  // a reply met reset_peer: both sockets are closed with an RST, not a FIN
};

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

void no_delay(int fd) {
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// A linger of 0 makes close() send an RST and drop what is unsent: "connection reset by peer".
void close_with_reset(int fd) {
    const linger abort{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
    ::close(fd);
}

}  // namespace link_proxy_detail

using link_proxy_detail::ProxyPair;

struct LinkProxy::Impl {
    sockaddr_storage upstream{};
    socklen_t upstream_len = 0;
    int listener = -1;
    int wake_read = -1, wake_write = -1;
    int port = 0;
    mutable std::mutex mutex;
    LinkMode mode;
    bool stop = false;
    int64_t accepted = 0;
    std::vector<std::unique_ptr<ProxyPair>> pairs;
    std::exception_ptr failure;  // the invariant the thread found broken, for set() to rethrow
    std::thread thread;

    void resolve(const std::string& host, int upstream_port) {
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* found = nullptr;
        const int rc = ::getaddrinfo(host.c_str(), std::to_string(upstream_port).c_str(), &hints, &found);
        if (rc != 0 || !found)
            throw EnvironmentError(fmt::format("link proxy: cannot resolve {}: {}", host, ::gai_strerror(rc)));
        std::memcpy(&upstream, found->ai_addr, found->ai_addrlen);
        upstream_len = found->ai_addrlen;
        ::freeaddrinfo(found);
    }

    // Loopback only, on a port the kernel picks: nothing outside the machine reaches a role's link.
    void listen_on_loopback() {
        listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = 0;
        socklen_t len = sizeof addr;
        if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
            ::listen(listener, 64) != 0 || ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
            const std::string why = std::strerror(errno);
            if (listener >= 0) ::close(listener);
            throw EnvironmentError("link proxy: cannot listen on 127.0.0.1: " + why);
        }
        port = ntohs(addr.sin_port);
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
            ::close(listener);
            throw EnvironmentError(std::string("link proxy: pipe2: ") + std::strerror(errno));
        }
        wake_read = fds[0];
        wake_write = fds[1];
    }

    void wake() const {
        const char c = 1;
        [[maybe_unused]] const ssize_t n = ::write(wake_write, &c, 1);  // a full pipe wakes the loop already
    }

    // A connection to the proxy: the proxy's own to the server beside it (a server that refuses
    // closes the role's at once, as the server's own refusal would look to the role).
    void accept_new() {
        for (;;) {
            const int client = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (client < 0) return;
            const int server = ::socket(upstream.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (server < 0 || ::connect(server, reinterpret_cast<const sockaddr*>(&upstream), upstream_len) != 0) {
                if (server >= 0) ::close(server);
                ::close(client);
                continue;
            }
            link_proxy_detail::set_nonblocking(server);
            link_proxy_detail::no_delay(server);
            link_proxy_detail::no_delay(client);
            auto p = std::make_unique<ProxyPair>();
            p->up.from = p->down.to = client;
            p->up.to = p->down.from = server;
            pairs.push_back(std::move(p));
            ++accepted;
        }
    }

    // Reads what `w.from` has; each read is one chunk, due as the mode says.
    void read_from(ProxyWay& w, bool reply, ProxyPair& p) {
        char buf[65536];
        for (;;) {
            const ssize_t n = ::recv(w.from, buf, sizeof buf, 0);
            if (n == 0) {
                w.eof = true;
                return;
            }
            if (n < 0) {
                if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) p.dead = true;
                return;
            }
            if (reply && mode.reset) {  // the reply goes nowhere: the pair is reset in its place
                p.reset = true;
                return;
            }
            w.take(std::string_view(buf, static_cast<size_t>(n)), ProxyClock::now() + (reply ? mode.delay : Millis{0}),
                   mode.blackhole);
        }
    }

    void write_due(ProxyWay& w, ProxyPair& p) {
        const ProxyClock::time_point now = ProxyClock::now();
        while (w.ready(now)) {
            const std::string_view bytes = w.next_bytes();
            const ssize_t n = ::send(w.to, bytes.data(), bytes.size(), MSG_NOSIGNAL);
            if (n < 0) {
                if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) p.dead = true;
                return;
            }
            w.wrote(static_cast<size_t>(n));
            if (static_cast<size_t>(n) < bytes.size()) return;
        }
    }

    // Polls every socket until the next chunk is due; under the mutex except in poll().
    void run();
    // The thread's body: a broken invariant ends it with every socket closed, so the roles see
    // their link fail at once rather than hang, and the next set() rethrows it.
    void run_or_fail() {
        try {
            run();
        } catch (const std::logic_error&) {
            std::lock_guard lock(mutex);
            failure = std::current_exception();
            for (const auto& p : pairs) {
                link_proxy_detail::close_with_reset(p->up.from);
                link_proxy_detail::close_with_reset(p->up.to);
            }
            pairs.clear();
            ::close(listener);
            listener = -1;
        }
    }
    int poll_timeout_ms(ProxyClock::time_point now) const;
    void close_finished();
};

int LinkProxy::Impl::poll_timeout_ms(ProxyClock::time_point now) const {
    std::optional<ProxyClock::time_point> next;
    for (const auto& p : pairs)
        for (const ProxyWay* w : {&p->up, &p->down})
            if (!w->queue.empty() && !w->queue.front().held && (!next || w->queue.front().due < *next))
                next = w->queue.front().due;
    if (!next) return -1;
    if (*next <= now) return 0;
    return static_cast<int>(std::chrono::ceil<Millis>(*next - now).count());
}

// A pair ends when a side has closed and everything it sent has gone through (or on an error).
void LinkProxy::Impl::close_finished() {
    std::erase_if(pairs, [](const std::unique_ptr<ProxyPair>& p) {
        if (p->reset) {
            link_proxy_detail::close_with_reset(p->up.from);
            link_proxy_detail::close_with_reset(p->up.to);
            return true;
        }
        const bool done = p->dead || (p->up.eof && p->up.queue.empty()) || (p->down.eof && p->down.queue.empty());
        if (done) {
            ::close(p->up.from);
            ::close(p->up.to);
        }
        return done;
    });
}

void LinkProxy::Impl::run() {
    std::unique_lock lock(mutex);
    while (!stop) {
        const ProxyClock::time_point now = ProxyClock::now();
        std::vector<pollfd> fds{{wake_read, POLLIN, 0}, {listener, POLLIN, 0}};
        std::vector<ProxyPair*> owner{nullptr, nullptr};
        for (const auto& p : pairs)
            for (const ProxyWay* w : {&p->up, &p->down}) {
                fds.push_back({w->from, static_cast<short>(w->eof ? 0 : POLLIN), 0});
                fds.push_back({w->to, static_cast<short>(w->ready(now) ? POLLOUT : 0), 0});
                owner.insert(owner.end(), 2, p.get());
            }
        const int timeout = poll_timeout_ms(now);
        lock.unlock();
        ::poll(fds.data(), fds.size(), timeout);
        lock.lock();
        // A socket that reports an error or a hang-up nobody asked about would wake poll forever.
        for (size_t i = 2; i < fds.size(); ++i)
            if (fds[i].events == 0 && (fds[i].revents & (POLLERR | POLLHUP | POLLNVAL))) owner[i]->dead = true;
        char drain[64];
        while (::read(wake_read, drain, sizeof drain) > 0) {
        }
        if (stop) break;
        accept_new();
        for (auto& p : pairs) {
            if (!p->up.eof) read_from(p->up, false, *p);
            if (!p->down.eof) read_from(p->down, true, *p);
            write_due(p->up, *p);
            write_due(p->down, *p);
        }
        close_finished();
    }
}

LinkProxy::LinkProxy(std::string upstream_host, int upstream_port) : m(std::make_unique<Impl>()) {
    m->resolve(upstream_host, upstream_port);
    m->listen_on_loopback();
    m->thread = std::thread([this] { m->run_or_fail(); });
}

LinkProxy::~LinkProxy() {
    {
        std::lock_guard lock(m->mutex);
        m->stop = true;
    }
    m->wake();
    m->thread.join();
    for (const auto& p : m->pairs) {
        ::close(p->up.from);
        ::close(p->up.to);
    }
    for (int fd : {m->listener, m->wake_read, m->wake_write}) ::close(fd);
}

int LinkProxy::port() const { return m->port; }

int64_t LinkProxy::set(LinkMode mode) {
    int64_t released = 0;
    {
        std::lock_guard lock(m->mutex);
        if (m->failure) std::rethrow_exception(m->failure);
        m->mode = mode;
        if (!mode.blackhole) {
            const ProxyClock::time_point now = ProxyClock::now();
            for (auto& p : m->pairs)
                for (ProxyWay* w : {&p->up, &p->down})
                    for (ProxyChunk& c : w->queue)
                        if (c.held) {
                            c.held = false;
                            c.due = now;
                            released += static_cast<int64_t>(c.bytes.size() - c.sent);
                        }
        }
    }
    m->wake();
    return released;
}

LinkMode LinkProxy::mode() const {
    std::lock_guard lock(m->mutex);
    return m->mode;
}

int64_t LinkProxy::queued_bytes() const {
    std::lock_guard lock(m->mutex);
    int64_t n = 0;
    for (const auto& p : m->pairs)
        for (const ProxyWay* w : {&p->up, &p->down})
            for (const ProxyChunk& c : w->queue) n += static_cast<int64_t>(c.bytes.size() - c.sent);
    return n;
}

int64_t LinkProxy::connections() const {
    std::lock_guard lock(m->mutex);
    return m->accepted;
}

}  // namespace relab
