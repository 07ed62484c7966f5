// `relab role --config FILE`: one actor of one trial, in its own process with its own Redis and
// PostgreSQL connections. The parent writes the config, the role writes its history file. The
// config carries the lab's settings already resolved (RoleSettings, built by the parent from the
// loaded Scenario): a role process never reads or parses a scenario file.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "clients/endpoint.h"
#include "roles/role_settings.h"
#include "process/role_spawner.h"

namespace relab {

struct RoleConfig {
    std::string role;   // "consumer" | "producer"
    std::string actor;  // "C1", "producer"
    int trial = 0;
    uint64_t seed = 0;
    RedisEndpoint redis;
    PgEndpoint pg;
    std::string schema;
    std::string key_prefix;
    std::string barrier_prefix;
    RoleSettings settings;  // role_settings() of the lab, as the parent has it
    std::string history_path;
    int64_t barrier_timeout_ms = 10000;
    // Idempotency failover labs: the sentinels a client asks for the primary (SENTINEL
    // get-master-addr-by-name redis_master_name) when its connection breaks or READONLY answers.
    // Empty: the client reconnects to `redis`.
    std::vector<RedisEndpoint> redis_sentinels;
    std::string redis_master_name;
    // S2's sharded labs: the nodes of the lab's Redis Cluster. Not empty: the role's Stream and Kv
    // route every key to its slot's master and follow MOVED/ASK (clients/cluster_client.h).
    std::vector<RedisEndpoint> redis_cluster;
};

nlohmann::json role_config_to_json(const RoleConfig& c);
RoleConfig role_config_from_json(const nlohmann::json& j);

// Where a role process finds the passwords of its config (SplitRoleConfig::secrets).
inline constexpr const char* k_role_secrets_env = "RELAB_ROLE_SECRETS";

// A role's config as it travels: the file's JSON with every password blanked, and the passwords
// apart (JSON: pointer -> password), which go in the role's environment, never in a file or argv.
struct SplitRoleConfig {
    nlohmann::json file;
    std::string secrets;
};
SplitRoleConfig split_role_config(const RoleConfig& c);
RoleConfig join_role_config(nlohmann::json file, const std::string& secrets);

// Runs the role; returns the process exit status (0 ok). Errors go to stderr.
int run_role_process(const std::string& config_path);

// The PostgreSQL a role connects to, as RoleSpawner's shells are keyed (JSON: the endpoint and
// schema, password included: it travels only on the spawner's socket). A role's Redis is not in
// it: a shell's Redis connection is taken only by a role of that endpoint (RedisClient::open_ahead).
std::string role_ahead_key(const RoleConfig& c);

// Writes DIR/ACTOR.json (owner-only; its passwords blanked, see SplitRoleConfig) and starts the
// role with the passwords in $RELAB_ROLE_SECRETS, stdout to DIR/ACTOR.out and stderr to
// stderr_path: forked by `spawner` (role_spawner.h), or, without one, as `relab_exe role --config`.
std::unique_ptr<RoleProcess> spawn_role_process(RoleSpawner* spawner, const std::string& relab_exe, const RoleConfig& c,
                                                const std::string& dir, const std::string& stderr_path);

// The last max_bytes of a role's stderr file, trailing blanks trimmed: what an error message quotes
// when a role process failed.
std::string tail_of_file(const std::string& path, size_t max_bytes = 2000);

}  // namespace relab
