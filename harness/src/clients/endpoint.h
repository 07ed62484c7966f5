// Where a server is: a Redis or PostgreSQL endpoint, read from the URLs a user gives (redis://,
// redis+sentinel://, redis+cluster://, postgresql://). Clients connect to these; the servers relab
// starts itself report theirs. Passwords are kept but never printed.
#pragma once

#include <string>
#include <vector>

#include "util/environment_error.h"

namespace relab {

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

// The URL with everything between "://" and the last '@' replaced, for error messages.
std::string mask_url(const std::string& url);

}  // namespace relab
