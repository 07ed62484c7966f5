// `relab role --config FILE`: one actor of one trial, in its own process with its own Redis and
// PostgreSQL connections. The parent writes the config, the role writes its history file.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "real/servers.h"

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
    nlohmann::json scenario;  // the scenario file's JSON
    std::string scenario_file;
    std::string history_path;
    int64_t barrier_timeout_ms = 10000;
};

nlohmann::json role_config_to_json(const RoleConfig& c);
RoleConfig role_config_from_json(const nlohmann::json& j);

// Runs the role; returns the process exit status (0 ok). Errors go to stderr.
int run_role_process(const std::string& config_path);

}  // namespace relab
