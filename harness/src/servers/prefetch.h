// Servers the next lab or trial needs, started in the background while the current one runs: at
// --jobs 1 their start-up otherwise falls between labs. Two kinds take seconds for reasons of their
// own: a Redis Cluster (a new master reports cluster_state:ok only 2 s after it starts,
// CLUSTER_WRITABLE_DELAY) and a lab's own primary with a replica and three Sentinels (which find
// each other by hello messages every 2 s).
//
// One long-lived worker thread starts them: a server dies with the thread that spawned it
// (PR_SET_PDEATHSIG), so every server it started must be gone before the Prefetch is.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace relab {

template <class T, class Spec>
class Prefetch {
public:
    using Make = std::function<std::unique_ptr<T>(const Spec&)>;
    explicit Prefetch(Make make) : m_make(std::move(make)) {}
    Prefetch(const Prefetch&) = delete;
    Prefetch& operator=(const Prefetch&) = delete;
    // Waits for one still starting (then stops it), and ends the worker thread.
    ~Prefetch() {
        drop();
        {
            std::lock_guard<std::mutex> lock(m_mu);
            m_stop = true;
        }
        m_cv.notify_all();
        if (m_worker.joinable()) m_worker.join();
    }

    // What the next lab or trial needs (nullopt: nothing). It starts at start_next(), or once the
    // current one took its own (take()), so the current one never takes the next one's.
    void want_next(std::optional<Spec> spec) { m_next = std::move(spec); }

    // Starts what want_next named on the worker thread, unless one with that spec is starting already.
    void start_next() {
        if (!m_next) return;
        const Spec spec = std::move(*m_next);
        m_next.reset();
        if (m_started && *m_started == spec) return;
        drop();
        std::packaged_task<std::unique_ptr<T>()> task([make = m_make, spec] { return make(spec); });
        m_ready = task.get_future();
        m_started = spec;
        {
            std::lock_guard<std::mutex> lock(m_mu);
            m_tasks.push_back(std::move(task));
            if (!m_worker.joinable()) m_worker = std::thread([this] { work(); });
        }
        m_cv.notify_one();
    }

    // The one started with `spec` (waiting for it; what it threw, if starting failed), or one
    // started now when none was; then start_next().
    std::unique_ptr<T> take(const Spec& spec) {
        std::unique_ptr<T> out;
        if (m_started && *m_started == spec) {
            m_started.reset();
            auto ready = std::move(m_ready);
            out = ready.get();
            ++m_taken_ahead;
        } else {
            drop();
            out = m_make(spec);
        }
        start_next();
        return out;
    }

    // How many take()s found theirs started ahead.
    int taken_ahead() const { return m_taken_ahead; }

private:
    void drop() {
        if (m_ready.valid()) {
            try {
                m_ready.get();  // stopped as the pointer goes
            } catch (...) {
                // never taken: its failure is nobody's result
            }
        }
        m_started.reset();
    }

    void work() {
        for (;;) {
            std::packaged_task<std::unique_ptr<T>()> task;
            {
                std::unique_lock<std::mutex> lock(m_mu);
                m_cv.wait(lock, [&] { return m_stop || !m_tasks.empty(); });
                if (m_tasks.empty()) return;
                task = std::move(m_tasks.front());
                m_tasks.pop_front();
            }
            task();  // what it throws goes to the future
        }
    }

    Make m_make;
    std::optional<Spec> m_next;
    std::optional<Spec> m_started;
    std::future<std::unique_ptr<T>> m_ready;
    int m_taken_ahead = 0;
    std::mutex m_mu;
    std::condition_variable m_cv;
    std::deque<std::packaged_task<std::unique_ptr<T>()>> m_tasks;
    bool m_stop = false;
    std::thread m_worker;
};

}  // namespace relab
