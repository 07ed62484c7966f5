#include "roles/consumer/fanout.h"

#include <stdexcept>

#include <fmt/format.h>

#include "util/json_object.h"

namespace relab {

void FanoutReader::run(const Worker& worker, const std::function<void()>& read) {
    RolePorts& p = m_c.ports();
    if (!p.tasks) throw std::logic_error("fanout: this backend gives the consumer no tasks to run workers on");
    m_queues = std::make_shared<FanoutQueues>();
    // However the reader ends (a harness error, killed), its workers stop with it.
    struct StopWorkers {
        FanoutQueues& q;
        ~StopWorkers() {
            std::lock_guard<std::mutex> lock(q.mu);
            q.stop = true;
            q.abort = true;
        }
    } stop_workers{*m_queues};
    for (int i = 1; i <= m_c.settings().fanout.workers; ++i) {
        const std::string actor = fmt::format("{}.w{}", m_c.actor(), i);
        p.tasks->spawn(actor, [worker, actor, shared = m_queues](RolePorts& ports) { worker(actor, ports, *shared); });
    }
    wait_workers_ready();
    if (!p.tasks->failed()) read();
    {
        std::lock_guard<std::mutex> lock(m_queues->mu);
        m_queues->stop = true;
        if (p.tasks->failed()) m_queues->abort = true;  // its job will never be over
    }
    p.tasks->join_all();
}

// As a service starts its worker pool before it consumes: the reader reads (and the start
// barrier sees it blocked) only once every worker has its connections.
void FanoutReader::wait_workers_ready() {
    RolePorts& p = m_c.ports();
    for (;;) {
        {
            std::lock_guard<std::mutex> lock(m_queues->mu);
            if (m_queues->ready == m_c.settings().fanout.workers) return;
        }
        if (p.tasks->failed()) return;  // run's join rethrows it
        p.clock.sleep_for(Millis{m_c.settings().fanout.poll_ms});
    }
}

bool FanoutReader::idle() const {
    if (!m_queues) return true;
    std::lock_guard<std::mutex> lock(m_queues->mu);
    return m_queues->in_flight == 0;
}

void FanoutReader::dispatch(const StreamEntry& entry, const Event& ev) {
    const bool per_key = m_c.settings().fanout.dispatch == FanoutSpec::Dispatch::per_key;
    const int64_t key = per_key ? ev.order : 0;
    size_t ahead = 0;
    {
        FanoutQueues& f = *m_queues;
        std::lock_guard<std::mutex> lock(f.mu);
        auto& q = f.fifo[key];
        ahead = q.size() + (per_key && f.busy.count(key) ? 1 : 0);
        q.push_back(FanoutQueues::Job{entry, ev, m_c.ports().clock.now()});
        ++f.in_flight;
        if (per_key && q.size() == 1 && !f.busy.count(key)) f.runnable.push_back(key);
    }
    m_c.record(Op::dispatch, json_object("key", key, "ahead", ahead), entry.id, &ev);
}

void FanoutWorker::run() {
    try {
        work();
    } catch (...) {
        std::lock_guard<std::mutex> lock(m_q.mu);
        m_q.abort = true;  // the other workers end too; the reader sees the failure and ends the role
        throw;
    }
}

void FanoutWorker::work() {
    {
        std::lock_guard<std::mutex> lock(m_q.mu);
        ++m_q.ready;  // the task's ports (its connections) are up
    }
    RolePorts& p = m_c.ports();
    for (;;) {
        {
            std::lock_guard<std::mutex> lock(m_q.mu);
            if (m_q.abort) return;
        }
        auto job = take();
        if (!job) {
            {
                std::lock_guard<std::mutex> lock(m_q.mu);
                if (m_q.stop && m_q.in_flight == 0) return;
            }
            p.clock.sleep_for(Millis{m_c.settings().fanout.poll_ms});
            continue;
        }
        const auto& [key, j] = *job;
        m_c.record(Op::take, json_object("waited_ms", (p.clock.now() - j.queued_at).count() / 1'000'000), j.entry.id,
                   &j.ev);
        try {
            m_jobs.run_job(j.entry, j.ev);
        } catch (const KvError& e) {
            m_c.ride_out(e);  // the XACK (or the lock) failed in a lab that faults Redis: the entry stays pending
        }
        job_over(key);
    }
}

std::optional<std::pair<int64_t, FanoutQueues::Job>> FanoutWorker::take() {
    std::lock_guard<std::mutex> lock(m_q.mu);
    int64_t key = 0;
    if (per_key()) {
        if (m_q.runnable.empty()) return std::nullopt;
        key = m_q.runnable.front();
        m_q.runnable.pop_front();
        m_q.busy.insert(key);
    }
    auto it = m_q.fifo.find(key);
    if (it == m_q.fifo.end() || it->second.empty()) return std::nullopt;
    std::pair<int64_t, FanoutQueues::Job> out{key, std::move(it->second.front())};
    it->second.pop_front();
    return out;
}

void FanoutWorker::job_over(int64_t key) {
    std::lock_guard<std::mutex> lock(m_q.mu);
    --m_q.in_flight;
    if (!per_key()) return;
    m_q.busy.erase(key);
    if (!m_q.fifo[key].empty()) m_q.runnable.push_back(key);
}

}  // namespace relab
