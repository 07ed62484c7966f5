// A job's run and its write to tmp_orders (RoleSettings::write): the job (ConsumerJob), then the
// write in the lab's mode (plain, CAS, upsert, ...) and the job's side effect; with write.commit
// "batch" the writes wait for the read's end (flush); with write.isolation the job and the write
// run in one transaction at that level, run again after a serialization failure. Every write is
// recorded; acknowledging is the caller's, except for a batch's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "roles/consumer/acks.h"
#include "roles/consumer/context.h"
#include "roles/consumer/job.h"

namespace relab {

class ConsumerWrite {
public:
    enum class Result {
        done,     // the job is over, written or not: the entry is to be acknowledged
        batched,  // write.commit "batch": written and acknowledged at the next flush
        failed,   // the job failed (a poison entry): nothing written, the entry not acknowledged
    };

    ConsumerWrite(const ConsumerContext& c, const ConsumerJob& job, StreamAcks& acks)
        : m_c(c), m_job(job), m_acks(acks) {}

    Result run(const StreamEntry& entry, const Event& ev) {
        if (m_c.settings().write.isolation == WriteIsolation::none) return run_plain(entry, ev);
        return run_in_transaction(entry, ev) ? Result::done : Result::failed;
    }
    // write.commit "batch": the read's writes in one transaction (one round trip), each recorded
    // with the batch's size once it committed, then acknowledged. On a store error the role ends,
    // or in a lab that faults PostgreSQL the whole batch is tried again: none of it took effect.
    void flush() {
        if (!m_batch.empty()) flush_batch();
    }

private:
    struct BatchedWrite {
        std::string entry;
        Event ev;
        OrderWrite write;
    };

    Result run_plain(const StreamEntry& entry, const Event& ev);
    void flush_batch();
    bool run_in_transaction(const StreamEntry& entry, const Event& ev);
    std::optional<WriteResult> try_transaction(const Event& ev, const OrderWrite& w, std::optional<int64_t>& seen);
    OrderWrite order_write_of(const StreamEntry& entry, const Event& ev) const;

    const ConsumerContext& m_c;
    const ConsumerJob& m_job;
    StreamAcks& m_acks;
    std::vector<BatchedWrite> m_batch;  // write.commit "batch": jobs run in this read, writes not yet sent
};

}  // namespace relab
