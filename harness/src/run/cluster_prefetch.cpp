#include "run/cluster_prefetch.h"

namespace relab {

ClusterPrefetch::~ClusterPrefetch() {
    drop();
    {
        std::lock_guard<std::mutex> lock(m_mu);
        m_stop = true;
    }
    m_cv.notify_all();
    if (m_worker.joinable()) m_worker.join();
}

void ClusterPrefetch::work() {
    for (;;) {
        std::packaged_task<std::unique_ptr<EmbeddedRedisCluster>()> task;
        {
            std::unique_lock<std::mutex> lock(m_mu);
            m_cv.wait(lock, [&] { return m_stop || !m_tasks.empty(); });
            if (m_tasks.empty()) return;
            task = std::move(m_tasks.front());
            m_tasks.pop_front();
        }
        task();  // its exception, if any, goes to the future
    }
}

void ClusterPrefetch::drop() {
    if (m_ready.valid()) {
        try {
            m_ready.get();  // the cluster, if it formed, is stopped as the pointer goes
        } catch (...) {
            // never taken: its failure is nobody's result
        }
    }
    m_opts.reset();
}

void ClusterPrefetch::start_next() {
    if (!m_next) return;
    const RedisClusterOptions o = *m_next;
    m_next.reset();
    if (m_opts && *m_opts == o) return;
    drop();
    std::packaged_task<std::unique_ptr<EmbeddedRedisCluster>()> task(
        [o] { return std::make_unique<EmbeddedRedisCluster>(o); });
    m_ready = task.get_future();
    m_opts = o;
    {
        std::lock_guard<std::mutex> lock(m_mu);
        m_tasks.push_back(std::move(task));
        if (!m_worker.joinable()) m_worker = std::thread([this] { work(); });
    }
    m_cv.notify_one();
}

std::unique_ptr<EmbeddedRedisCluster> ClusterPrefetch::take(const RedisClusterOptions& o) {
    std::unique_ptr<EmbeddedRedisCluster> out;
    if (!m_opts || !(*m_opts == o)) {
        drop();
        out = std::make_unique<EmbeddedRedisCluster>(o);
    } else {
        m_opts.reset();
        auto ready = std::move(m_ready);
        out = ready.get();
    }
    start_next();
    return out;
}

}  // namespace relab
