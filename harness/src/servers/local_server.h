// What the servers relab starts itself share: finding their binaries, a free loopback port, the
// ends of their logs for an error message, and asking whether they answer yet.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "clients/endpoint.h"

namespace relab {

// Binaries (redis-server, initdb, postgres) looked up on PATH and in /usr/lib/postgresql/*/bin.
// Throws EnvironmentError naming the Debian package to install.
std::string find_binary(const std::string& name);

// A free TCP port on 127.0.0.1 (bind to port 0, read it back, close).
int free_loopback_port();

// The embedded servers' own steps (servers/embedded_redis.cpp, servers/embedded_postgres.cpp,
// servers/servers.cpp); nothing outside servers/ calls them.
namespace local_server {

inline constexpr std::chrono::milliseconds poll_interval{20};
inline constexpr int port_attempts = 4;  // the first port and 3 replacements

// Multi-line client messages on one line, without the password should a library echo it.
std::string one_line(std::string text, const std::string& secret = {});
// The last lines of the logs that exist, each prefixed with the log's name.
std::string log_tails(const std::vector<std::string>& paths, size_t max_lines = 15);
bool any_log_contains(const std::vector<std::string>& paths, const std::string& needle);
void sleep_poll();

struct RedisProbe {
    std::string error;       // empty: the server answered PONG
    long long process_id = 0;  // from INFO server
};
// Connects, AUTH/SELECT as the endpoint says, PING, and reads the server's pid.
RedisProbe probe_redis(const RedisEndpoint& ep, std::chrono::milliseconds timeout);
// "" when a session could run SELECT 1, else the client's message (password removed).
std::string probe_pg(const PgEndpoint& ep, int connect_timeout_s);

// Fixed settings first, then the caller's, which replace a default of the same name. Names that
// relab chooses itself are refused.
std::vector<std::pair<std::string, std::string>> merge_settings(
    std::vector<std::pair<std::string, std::string>> defaults,
    const std::map<std::string, std::string>& config, const std::vector<std::string>& reserved,
    const std::string& server);

}  // namespace local_server

}  // namespace relab
