// What a run talks to: throwaway redis-server and PostgreSQL on free loopback ports, or existing
// servers given by URL. Everything started here is owned by RAII objects: destroying them stops the
// processes (SIGTERM, then SIGKILL after a grace period, always followed by wait()) and removes their
// directories.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "clients/endpoint.h"
#include "servers/embedded_postgres.h"
#include "servers/embedded_redis.h"
#include "servers/local_server.h"

namespace relab {

// What a run talks to: embedded servers it started, or external ones from URLs.
struct ServerSet {
    RedisEndpoint redis;
    PgEndpoint pg;
    bool redis_external = false;
    // redis+sentinel://: the user's sentinels and the name of the primary they watch; `redis` is the
    // primary they named as the run started.
    std::vector<RedisEndpoint> sentinels;
    std::string sentinel_master;
    // redis+cluster://: the user's cluster by its seed nodes, for the labs that shard over a Redis
    // Cluster; `redis`, for every other lab, is one relab starts itself.
    std::vector<RedisEndpoint> cluster_seeds;
    // The URL as given, password masked (for skip reasons and errors); empty without one.
    std::string redis_url_display;
    bool pg_external = false;
    std::unique_ptr<EmbeddedRedis> embedded_redis;
    std::unique_ptr<EmbeddedPostgres> embedded_pg;
};

// redis_url / pg_url empty: start embedded servers. Throws EnvironmentError. The options apply to
// embedded servers only; external ones are used as they are.
ServerSet start_servers(const std::string& redis_url, const std::string& pg_url,
                        const RedisOptions& redis_opts = {}, const PgOptions& pg_opts = {});

}  // namespace relab
