// A throwaway PostgreSQL relab starts itself (initdb and postgres) on a free loopback port. Owned
// by its object: destroying it stops the server and removes its data directory.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "clients/endpoint.h"

namespace relab {

struct PgOptions {
    std::map<std::string, std::string> config;  // "-c name=value" settings
    std::chrono::milliseconds start_timeout{30000};
    int preferred_port = 0;  // tried first; 0 = a free one. A taken port is replaced (3 retries).
};

// initdb into a temp dir and a postgres child on a free loopback port, running as an unprivileged
// user ("postgres", or $RELAB_PG_USER) when relab runs as root. Answers a query before the
// constructor returns. The database is "relab", the user the OS user it runs as; no password.
class EmbeddedPostgres {
public:
    explicit EmbeddedPostgres(const PgOptions& opts = {});
    ~EmbeddedPostgres();
    EmbeddedPostgres(const EmbeddedPostgres&) = delete;
    EmbeddedPostgres& operator=(const EmbeddedPostgres&) = delete;

    const PgEndpoint& endpoint() const;
    int pid() const;
    const std::string& data_dir() const;
    void stop();  // idempotent
    // SIGKILL to the postmaster and every process it started, as `docker kill` kills a
    // container's: no shutdown checkpoint, every connection closed, the data directory kept.
    // Returns once they are all gone. Idempotent.
    void crash();
    // crash(), then postgres again on the same port and data directory: crash recovery replays
    // the WAL, so every committed transaction is there. Returns once it accepts connections;
    // throws EnvironmentError if it does not come up.
    void restart();
    bool running() const;
    // SIGSTOP / SIGCONT to the postmaster and every process it started: connections stay open and
    // every statement waits until resume().
    void pause();
    void resume() noexcept;
    bool paused() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace relab
