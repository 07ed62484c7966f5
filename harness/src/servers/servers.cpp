#include "servers/servers.h"

#include <chrono>

#include <fmt/format.h>

#include "clients/redis_client.h"

namespace relab {

namespace {

using std::chrono::milliseconds;

// The primary the user's sentinels name (the first that answers), checked to answer ROLE master.
RedisEndpoint primary_named_by(const RedisUrl& url, const std::string& shown) {
    std::string errors;
    for (const auto& sentinel : url.nodes) try {
            RedisClient c(sentinel, milliseconds(2000));
            const RedisReply r = c.call({"SENTINEL", "get-master-addr-by-name", url.master_name});
            if (r.elements.size() != 2) {
                errors += fmt::format(" {}:{} knows no primary named '{}';", sentinel.host, sentinel.port, url.master_name);
                continue;
            }
            RedisEndpoint primary;
            primary.host = r.elements[0].str;
            primary.port = std::stoi(r.elements[1].str);
            primary.password = url.password;
            primary.db = url.db;
            return primary;
        } catch (const RedisError& e) {
            errors += fmt::format(" {}:{}: {};", sentinel.host, sentinel.port, e.what());
        }
    throw EnvironmentError("no sentinel of " + shown + " named its primary:" + errors +
                           " check the sentinels' addresses and the master name, or drop --redis-url");
}

// The seed nodes, once one of them says the cluster is whole (cluster_state:ok).
std::vector<RedisEndpoint> check_user_cluster(const RedisUrl& url, const std::string& shown) {
    std::string errors;
    for (const auto& seed : url.nodes) try {
            RedisClient c(seed, milliseconds(2000));
            const std::string info = c.call({"CLUSTER", "INFO"}).str;
            if (info.find("cluster_state:ok") != std::string::npos) return url.nodes;
            errors += fmt::format(" {}:{} is not in a whole cluster (cluster_state is not ok);", seed.host, seed.port);
        } catch (const RedisError& e) {
            errors += fmt::format(" {}:{}: {};", seed.host, seed.port, e.what());
        }
    throw EnvironmentError("no seed node of " + shown + " answered for a working Redis Cluster:" + errors +
                           " check the addresses, or drop --redis-url");
}

}  // namespace

ServerSet start_servers(const std::string& redis_url, const std::string& pg_url, const RedisOptions& redis_opts,
                        const PgOptions& pg_opts) {
    ServerSet set;
    // External servers are checked first: a wrong URL fails fast, before anything is started.
    if (!redis_url.empty()) {
        const RedisUrl url = parse_redis_topology_url(redis_url);
        set.redis_url_display = mask_url(redis_url);
        if (url.kind == RedisUrl::Kind::cluster) set.cluster_seeds = check_user_cluster(url, set.redis_url_display);
        if (url.kind == RedisUrl::Kind::sentinel) {
            set.sentinels = url.nodes;
            set.sentinel_master = url.master_name;
        }
        set.redis = url.kind == RedisUrl::Kind::sentinel ? primary_named_by(url, set.redis_url_display) : url.single;
        set.redis_external = url.kind != RedisUrl::Kind::cluster;
    }
    if (set.redis_external) {
        local_server::RedisProbe probe = local_server::probe_redis(set.redis, milliseconds(5000));
        if (!probe.error.empty())
            throw EnvironmentError("cannot reach redis at " + set.redis.display() + ": " + probe.error +
                                   "; start it or drop --redis-url to let relab start its own");
    }
    if (!pg_url.empty()) {
        set.pg = parse_pg_url(pg_url);
        set.pg_external = true;
        std::string error = local_server::probe_pg(set.pg, 5);
        if (!error.empty())
            throw EnvironmentError("cannot reach postgresql at " + set.pg.display() + ": " + error +
                                   "; start it or drop --pg-url to let relab start its own");
    }
    if (!set.redis_external) {
        set.embedded_redis = std::make_unique<EmbeddedRedis>(redis_opts);
        set.redis = set.embedded_redis->endpoint();
    }
    if (!set.pg_external) {
        set.embedded_pg = std::make_unique<EmbeddedPostgres>(pg_opts);
        set.pg = set.embedded_pg->endpoint();
    }
    return set;
}

}  // namespace relab
