// The next lab's Redis Cluster, formed while the current lab runs (servers/prefetch.h).
#pragma once

#include <memory>

#include "servers/redis_cluster.h"
#include "servers/prefetch.h"

namespace relab {

class ClusterPrefetch : public Prefetch<EmbeddedRedisCluster, RedisClusterOptions> {
public:
    ClusterPrefetch()
        : Prefetch([](const RedisClusterOptions& o) { return std::make_unique<EmbeddedRedisCluster>(o); }) {}
};

}  // namespace relab
