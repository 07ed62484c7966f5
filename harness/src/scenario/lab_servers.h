// The servers a lab starts for itself, per trial, with the settings it needs: a scenario's
// top-level "servers", for stream and idempotency labs alike (scenario.h). Read by the loader
// (read_servers), started by the real backend (servers/lab_redis.h), modelled by the simulator.
#pragma once

#include <map>
#include <string>

namespace relab {

struct LabServers {
    bool own = false;
    std::map<std::string, std::string> redis_config;  // maxmemory, maxmemory-policy, appendonly, save...
    bool replica = false;                              // a replica of the primary (replicaof)
    // A separate redis-server for the cache ("redis-cache", a flood's target), with its settings: the
    // article's fix keeps the idempotency keys off the cache's instance.
    bool cache = false;
    std::map<std::string, std::string> cache_config;
    // A PostgreSQL of the lab's own (stream labs), started for each trial with these settings
    // ("synchronous_commit", ...): a fault target ("postgres") that never harms the run's server.
    bool postgres = false;
    std::map<std::string, std::string> postgres_config;
    bool operator==(const LabServers&) const = default;
};

}  // namespace relab
