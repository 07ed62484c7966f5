// The next lab's Redis Cluster, formed while the current lab runs (run/prefetch.h).
#pragma once

#include <memory>

#include "real/redis_cluster.h"
#include "run/prefetch.h"

namespace relab {

class ClusterPrefetch : public Prefetch<EmbeddedRedisCluster, RedisClusterOptions> {
public:
    ClusterPrefetch()
        : Prefetch([](const RedisClusterOptions& o) { return std::make_unique<EmbeddedRedisCluster>(o); }) {}
};

}  // namespace relab
