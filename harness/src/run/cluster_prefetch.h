// The next lab's Redis Cluster, formed in the background while the current lab runs. A new master
// reports cluster_state:ok only 2 s after it starts (CLUSTER_WRITABLE_DELAY), and at --jobs 1 that
// wait otherwise lands between two labs, once per sharded lab.
#pragma once

#include <condition_variable>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "real/redis_cluster.h"

namespace relab {

class ClusterPrefetch {
public:
    ClusterPrefetch() = default;
    ClusterPrefetch(const ClusterPrefetch&) = delete;
    ClusterPrefetch& operator=(const ClusterPrefetch&) = delete;
    // Waits for a cluster still forming (its servers are then stopped and their folders removed),
    // then ends the worker thread. Every cluster it formed must be gone by then: a server dies with
    // the thread that started it (PR_SET_PDEATHSIG).
    ~ClusterPrefetch();

    // The next lab needs a cluster with `o` (nullopt: none). It starts forming at start_next(), or
    // once the current lab took its own cluster (take()), so the current lab never takes the next's.
    void want_next(std::optional<RedisClusterOptions> o) { m_next = std::move(o); }
    // Starts forming the wanted cluster on the worker thread, unless one with its options is
    // forming already.
    void start_next();
    // The cluster started with `o` (waiting for it to form; its EnvironmentError, if forming
    // failed), or a new one formed now when none was started with `o`; then start_next().
    std::unique_ptr<EmbeddedRedisCluster> take(const RedisClusterOptions& o);

private:
    void drop();
    void work();
    std::optional<RedisClusterOptions> m_next;
    std::optional<RedisClusterOptions> m_opts;
    std::future<std::unique_ptr<EmbeddedRedisCluster>> m_ready;
    // One long-lived thread forms them: the servers outlive the call that started them.
    std::mutex m_mu;
    std::condition_variable m_cv;
    std::deque<std::packaged_task<std::unique_ptr<EmbeddedRedisCluster>()>> m_tasks;
    bool m_stop = false;
    std::thread m_worker;
};

}  // namespace relab
