// The Redis Cluster lab of article 002 (section 2.3), on a cluster of masters the lab forms itself:
// CLUSTER KEYSLOT of a user's idempotency key and lock with and without a hash tag, one Lua script
// (EVAL) over both, and a hot user's claims counted per node (DBSIZE, INFO commandstats), with and
// without the tag. Every command goes to the node owning its key's slot (ClusterClient, redirections
// refused: the lab's cluster never moves a slot).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "check/outcome.h"
#include "servers/redis_cluster.h"

namespace relab {

// The probe (families/probe.h, open_cluster_probe) forms the cluster once and runs the lab's trials on
// it, each after FLUSHALL on every node; a trial's history holds "observe" records whose fields the
// expectation's every_trial_has matches, and trial 1 the lab's measurements. It throws
// EnvironmentError when the cluster cannot be formed, RedisError when a node refuses a command.
// The Redis Cluster the probe needs for `s` (an idem_cluster lab), so it can be formed ahead.
RedisClusterOptions idem_cluster_options(const Scenario& s);

// "3000 / 0 / 0": one figure per node, in node order.
std::string per_node_text(const std::vector<int64_t>& counts);

// The calls=N of `command`'s line in INFO commandstats ("cmdstat_set:calls=3000,usec=..."); 0 when
// the command has no line yet (never called since the last reset).
int64_t command_calls(const std::string& commandstats, const std::string& command);

// A random (version 4) UUID as the article's client keys look: 8f3a1c92-4d5e-4f1a-9b2c-3d4e5f6a7b8c.
std::string uuid_v4(uint64_t high, uint64_t low);

}  // namespace relab
