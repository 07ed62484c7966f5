// The consumer, composed of its parts, each a concept of its own in roles/consumer/:
//   context.h      settings, names, ports, records, riding out a server error
//   delivery.h     where entries come from: pending first, new ones, XAUTOCLAIM rounds
//   acks.h         when XACKs go out (stream.ack)
//   lock.h         the per-order lock around a job (S4)
//   job.h          the job's cost and whether it fails
//   write.h        the write: plain, CAS and the other modes, a batch, a transaction
//   dead_letter.h  a failed job: left pending, or dead-lettered after the cap
//   buffer.h       P3's reorder buffer
//   fanout.h       S3's reader and workers
#include "roles/consumer/acks.h"
#include "roles/consumer/buffer.h"
#include "roles/consumer/context.h"
#include "roles/consumer/dead_letter.h"
#include "roles/consumer/delivery.h"
#include "roles/consumer/fanout.h"
#include "roles/consumer/job.h"
#include "roles/consumer/lock.h"
#include "roles/consumer/write.h"
#include "roles/roles.h"

#include <memory>
#include <optional>
#include <string>

namespace relab {

namespace {

class Consumer final : private DeliverySink, private JobRunner {
public:
    // `costs`: as ConsumerJob's.
    Consumer(const RoleSettings& s, const std::string& actor, RolePorts& p,
             std::shared_ptr<const EventCosts> costs = nullptr)
        : m_c(s, actor, p),
          m_job(m_c, std::move(costs)),
          m_acks(m_c),
          m_lock(m_c),
          m_write(m_c, m_job, m_acks),
          m_dead(m_c, m_acks),
          m_buffer(m_c, m_acks, *this),
          m_fanout(m_c),
          m_delivery(m_c, m_acks, *this) {}

    void name_per_process() { m_c.name_per_process(); }

    // A worker: [its own pending entries first], then new ones, [claiming idle entries as it goes].
    // With fanout (S3) this loop is the reader's, and every entry goes to a worker task instead.
    void run() {
        if (!m_c.settings().fanout.enabled) return m_delivery.read_loop();
        // Each worker is a consumer of its own on its task's ports, sharing the reader's costs.
        FanoutReader::Worker worker = [&settings = m_c.settings(), costs = m_job.costs()](
                                          const std::string& actor, RolePorts& ports, FanoutQueues& queues) {
            Consumer(settings, actor, ports, costs).run_worker(queues);
        };
        m_fanout.run(worker, [this] { m_delivery.read_loop(); });
    }

    void run_reaper() { m_delivery.run_reaper(); }

private:
    void run_worker(FanoutQueues& queues) {
        FanoutWorker(m_c, queues, *this).run();
    }

    // The job for one event: [lock], the job and its write, [release], XACK. Returns false when the
    // job failed and its entry stays pending (a poison entry under the cap, or without one).
    bool run_job(const StreamEntry& entry, const Event& ev) override {
        const std::optional<ConsumerLock::Held> held = m_lock.acquire(entry, ev);
        switch (m_write.run(entry, ev)) {
            case ConsumerWrite::Result::failed:
                m_lock.drop(held);
                return m_dead.job_failed(entry, ev);
            case ConsumerWrite::Result::batched: return true;
            case ConsumerWrite::Result::done: break;
        }
        m_lock.release(held, ev);
        m_acks.acknowledge(entry.id);
        return true;
    }

    // DeliverySink: an entry goes to S3's workers, the reorder buffer, or its job now.
    void process(const StreamEntry& entry, const Event& ev) override {
        if (m_fanout.running())
            m_fanout.dispatch(entry, ev);
        else if (m_c.settings().buffer.enabled)
            m_buffer.take(entry, ev);
        else
            run_job(entry, ev);
    }
    void flush() override {
        m_write.flush();
        m_acks.flush();
    }
    Millis before_read(Millis block) override {
        m_buffer.release_timed_out();
        return m_buffer.block(block);
    }
    bool holds_nothing() const override { return m_buffer.empty() && m_fanout.idle(); }
    bool failed() const override { return m_fanout.failed(); }

    ConsumerContext m_c;
    ConsumerJob m_job;
    StreamAcks m_acks;
    ConsumerLock m_lock;
    ConsumerWrite m_write;
    DeadLetter m_dead;
    ReorderBuffer m_buffer;
    FanoutReader m_fanout;
    ConsumerDelivery m_delivery;
};

}  // namespace

void run_consumer(const RoleSettings& s, const std::string& actor, RolePorts& ports) {
    Consumer c(s, actor, ports);
    if (s.recovery.name_per_process()) c.name_per_process();
    c.run();
}

void run_reaper(const RoleSettings& s, const std::string& actor, RolePorts& ports) {
    Consumer(s, actor, ports).run_reaper();
}

}  // namespace relab
