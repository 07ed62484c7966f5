// What a fault, and each Control primitive, acts on: a role of the trial by its actor, one of the
// lab's servers, or every Redis connection of the roles. The scenario loader resolves a fault's
// target from its name once; past it the code switches on the kind, and names come back only at
// the edges (the records, the reports, error messages), from fault/faults.cpp's name table.
#pragma once

#include <string>
#include <utility>

namespace relab {

enum class FaultTarget {
    role,           // a role's process: "C1", "producer", "dispatcher", ...; "matched"
    redis,          // the lab's own redis-server (the primary)
    redis_replica,  // its replica ("redis-replica")
    redis_cache,    // a separate instance for the cache ("redis-cache"; "servers": {"cache": {...}})
    postgres,       // the lab's own PostgreSQL ("servers": {"postgres": {...}})
    clients,        // every Redis connection of the trial's roles ("clients")
    redis_cluster_master,  // S2: the master of the lab's Redis Cluster that serves shard `shard`'s stream
    redis_cluster_replica,  // S2: the replica of that master
};

struct Target {
    FaultTarget kind = FaultTarget::role;
    std::string actor;  // a role's actor; empty for every other kind
    int shard = -1;     // redis_cluster_master and _replica: the shard (0-based) whose master it is; -1 otherwise

    static Target role(std::string actor) { return {FaultTarget::role, std::move(actor)}; }
    static Target of(FaultTarget kind) { return {kind, {}}; }
    bool is_role() const { return kind == FaultTarget::role; }
    bool operator==(const Target&) const = default;
};

}  // namespace relab
