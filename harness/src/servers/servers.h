// Throwaway redis-server and PostgreSQL on free loopback ports, or existing servers given by URL.
// Everything started here is owned by RAII objects: destroying them stops the processes (SIGTERM,
// then SIGKILL after a grace period, always followed by wait()) and removes their directories.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace relab {

// The machine lacks something relab needs, or a server did not come up. The message says what to
// do (install a package, free a port, check a URL). Maps to exit status 2.
class EnvironmentError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct RedisEndpoint {
    std::string host = "127.0.0.1";
    int port = 0;
    std::string password;  // never printed
    int db = 0;
    std::string display() const;  // "redis://127.0.0.1:6390/0", password masked
};

struct PgEndpoint {
    std::string host = "127.0.0.1";
    int port = 0;
    std::string user;
    std::string password;  // never printed
    std::string dbname;
    std::string conninfo() const;  // libpq keyword=value string (contains the password)
    std::string display() const;   // "postgresql://user@127.0.0.1:5433/db", password masked
};

// Parses redis://[:password@]host[:port][/db]. Throws EnvironmentError on a bad URL.
RedisEndpoint parse_redis_url(const std::string& url);
// A --redis-url of a topology (redis-py's forms): redis+sentinel://[:password@]host:port[,host:port]/
// master-name[/db] names a primary behind the user's sentinels, redis+cluster://[:password@]host:port[,
// host:port] a Redis Cluster by its seed nodes. The password is the data servers' (the sentinels are
// asked without one). A plain redis:// URL is kind single.
struct RedisUrl {
    enum class Kind { single, sentinel, cluster };
    Kind kind = Kind::single;
    RedisEndpoint single;
    std::vector<RedisEndpoint> nodes;  // the sentinels, or the cluster's seed nodes
    std::string master_name;           // sentinel: the name the sentinels monitor the primary by
    std::string password;              // the data servers'
    int db = 0;
};
// Throws EnvironmentError on a bad URL, saying which form was expected.
RedisUrl parse_redis_topology_url(const std::string& url);
// Parses postgresql://[user[:password]@]host[:port]/dbname (also postgres://).
PgEndpoint parse_pg_url(const std::string& url);

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

// Binaries (redis-server, initdb, postgres) looked up on PATH and in /usr/lib/postgresql/*/bin.
// Throws EnvironmentError naming the Debian package to install.
std::string find_binary(const std::string& name);

// A free TCP port on 127.0.0.1 (bind to port 0, read it back, close).
int free_loopback_port();

}  // namespace relab
