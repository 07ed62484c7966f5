// S3, worker per key (RoleSettings::fanout): one reader and W worker tasks in one consumer
// process. The reader reads as any consumer does and puts every entry on an in-memory FIFO (one
// per order with per_key, one for all with any_worker); a worker takes a job, runs it (cost,
// write, XACK only after the write) and takes the next. With per_key an order is one worker's
// until its job is over, so its events run in stream order while other orders run beside it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "roles/consumer/context.h"

namespace relab {

// The FIFOs the reader and its workers share. Every member is read and changed under `mu`, which
// is never held across a port call: in the simulator the tasks are fibers of one thread and a
// port call suspends the fiber.
struct FanoutQueues {
    struct Job {
        StreamEntry entry;
        Event ev;
        Nanos queued_at;
    };
    std::mutex mu;
    std::map<int64_t, std::deque<Job>> fifo;  // per key: the order (per_key), or 0 for all (any_worker)
    std::set<int64_t> busy;                   // per_key: orders a worker is on now
    std::deque<int64_t> runnable;             // per_key: orders with a job waiting and no worker on them
    int in_flight = 0;                        // jobs dispatched and not yet over (acknowledged or failed)
    int ready = 0;                            // workers connected and waiting for jobs
    bool stop = false;                        // the reader is done: workers end once the FIFOs are empty
    bool abort = false;                       // a task failed or the reader died: workers end now
};

// The reader's side.
class FanoutReader {
public:
    // One worker task's whole life: it runs as `actor` on its own ports (its own connections).
    using Worker = std::function<void(const std::string& actor, RolePorts& ports, FanoutQueues& queues)>;

    explicit FanoutReader(const ConsumerContext& c) : m_c(c) {}

    // Starts the workers (actors <actor>.w1 .. .wN), waits until each has its connections, runs
    // `read` (the reader's loop, which dispatches), then lets the workers end once every job is
    // over and waits for them; a worker's failure ends the reader and is rethrown here.
    void run(const Worker& worker, const std::function<void()>& read);
    bool running() const { return m_queues != nullptr; }
    // The reader puts the entry on its FIFO: no XACK, the worker sends it.
    void dispatch(const StreamEntry& entry, const Event& ev);
    // No job dispatched and not yet over (true when not running).
    bool idle() const;
    // A worker has ended by an exception: the reader should stop reading.
    bool failed() const { return m_queues && m_c.ports().tasks->failed(); }

private:
    void wait_workers_ready();

    const ConsumerContext& m_c;
    std::shared_ptr<FanoutQueues> m_queues;
};

// A worker's side: takes a job, runs it, hands its order back; idle, it looks again every
// poll_ms; ends when the reader stopped and nothing is left, or at once when a task failed.
class FanoutWorker {
public:
    FanoutWorker(const ConsumerContext& c, FanoutQueues& q, JobRunner& jobs) : m_c(c), m_q(q), m_jobs(jobs) {}

    void run();

private:
    void work();
    // The next job a free worker may take: per_key, the head of the first order waiting that no
    // worker is on (the order is then this worker's until its job is over); any_worker, the head
    // of the one FIFO.
    std::optional<std::pair<int64_t, FanoutQueues::Job>> take();
    void job_over(int64_t key);
    bool per_key() const { return m_c.settings().fanout.dispatch == FanoutSpec::Dispatch::per_key; }

    const ConsumerContext& m_c;
    FanoutQueues& m_q;
    JobRunner& m_jobs;
};

}  // namespace relab
