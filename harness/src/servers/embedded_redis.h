// A throwaway redis-server relab starts itself, on a free loopback port. Owned by its object:
// destroying it stops the process and removes its directory.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "clients/endpoint.h"

namespace relab {

struct RedisOptions {
    // Extra "--name value" settings (maxmemory, maxmemory-policy, appendonly, save, ...).
    std::map<std::string, std::string> config;
    std::chrono::milliseconds start_timeout{10000};
    int preferred_port = 0;  // tried first; 0 = a free one. A taken port is replaced (3 retries).
    // A Redis Cluster node: cluster-enabled yes, its nodes.conf in the data dir, and the cluster bus
    // on a second free port (cluster-port) instead of port + 10000, which may be taken or above
    // 65535. The node starts empty: no slots, no peers (EmbeddedRedisCluster forms the cluster).
    bool cluster = false;
};

// A redis-server child process: loopback, free port, no persistence unless config asks,
// --enable-debug-command local. Answers PING before the constructor returns.
class EmbeddedRedis {
public:
    explicit EmbeddedRedis(const RedisOptions& opts = {});
    ~EmbeddedRedis();
    EmbeddedRedis(const EmbeddedRedis&) = delete;
    EmbeddedRedis& operator=(const EmbeddedRedis&) = delete;

    const RedisEndpoint& endpoint() const;
    int pid() const;
    const std::string& data_dir() const;
    int cluster_bus_port() const;  // 0 unless RedisOptions::cluster
    // The last lines of its logs, each on a new line, for an error message; "(no log output)" when
    // there are none (also after stop(), which removes them).
    std::string log_tail(size_t max_lines = 15) const;
    void stop();  // idempotent
    // SIGKILL, as `docker kill` does: no final save, the data directory stays. Idempotent.
    void crash();
    // crash(), then redis-server again on the same port, directory and settings: it loads what
    // its RDB or AOF kept. Throws EnvironmentError if it does not come up (e.g. the port was taken).
    void restart();

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace relab
