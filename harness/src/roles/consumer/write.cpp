#include "roles/consumer/write.h"

#include <fmt/format.h>

#include "roles/event.h"
#include "roles/order_sql.h"
#include "util/json_object.h"

namespace relab {

namespace {

// What a write record says: the statement, what it did and, for the modes that have them, the
// version, the row's fate and the inbox's decision.
nlohmann::json write_data(const OrderWrite& w, const WriteResult& res) {
    nlohmann::json wd =
        json_object("status", w.status, "mode", to_string(w.mode), "affected", res.affected, "sql", res.sql);
    const WriteModeInfo& mode = write_mode_info(w.mode);
    if (mode.sets_version) wd["version"] = w.version;
    // P4: the change the write added, or the amount it set, as the statement has it.
    if (mode.amount == AmountWrite::add) wd["delta"] = w.delta;
    if (mode.amount == AmountWrite::set) wd["amount"] = w.amount;
    if (!res.row_action.empty()) wd["row_action"] = res.row_action;
    if (mode.statement == WriteStatement::insert_then_update) wd["insert_conflict"] = res.insert_conflict;
    if (w.dedupe) {
        // The job ran and decided: applied, or skipped as a copy of an event already applied.
        wd["dedupe"] = res.duplicate ? "skipped" : "applied";
        if (res.duplicate)
            wd["reason"] = fmt::format("duplicate: ({}, v{}) is already in tmp_inbox", w.order, w.event_version);
    }
    return wd;
}

}  // namespace

// The job, then its write on its own (autocommit) or held for the batch, then its side effect.
ConsumerWrite::Result ConsumerWrite::run_plain(const StreamEntry& entry, const Event& ev) {
    m_job.spend_cost(ev);
    if (m_job.poisoned(ev)) return Result::failed;
    OrderWrite w = order_write_of(entry, ev);
    const WriteSpec& spec = m_c.settings().write;
    if (spec.commit == WriteSpec::Commit::batch) {
        // The write waits for the read's other jobs: flush sends them in one transaction and
        // acknowledges them after it (the loader allows no lock or side effect here).
        m_batch.push_back(BatchedWrite{entry.id, ev, std::move(w)});
        return Result::batched;
    }
    RolePorts& p = m_c.ports();
    const WriteResult res = m_c.with_store_retry([&] { return p.orders.write_state(w); });
    m_c.record(Op::write, write_data(w, res), entry.id, &ev);
    // The job's email or webhook goes out once the job is done, whatever its write did, as
    // application code that sends it after the UPDATE does.
    if (spec.side_effect) {
        const int64_t seq = m_c.with_store_retry([&] { return p.orders.send_side_effect(w.order, ev.type, ev.v); });
        m_c.record(Op::side_effect,
                   json_object("order", w.order, "version", ev.v, "seq", seq, "applied", res.affected > 0), entry.id,
                   &ev);
    }
    return Result::done;
}

// write.isolation: the job in one transaction at that level, as application code that reads the
// row, runs the job and writes does. A serialization failure (40001: another consumer committed
// a change to the row after this snapshot) is recorded and the whole transaction, job and all,
// runs again, up to write.serialization_retries times; only a committed try is a write. When they
// run out the entry is acknowledged unwritten, as a consumer that logs the error and moves on
// does. Returns false when the job failed (a poison entry: rolled back, nothing written).
bool ConsumerWrite::run_in_transaction(const StreamEntry& entry, const Event& ev) {
    const OrderWrite w = order_write_of(entry, ev);
    const WriteIsolation level = m_c.settings().write.isolation;
    for (int attempt = 1;; ++attempt) {
        std::optional<int64_t> seen;
        try {
            std::optional<WriteResult> res = m_c.with_store_retry([&] { return try_transaction(ev, w, seen); });
            if (!res) return false;
            nlohmann::json wd = write_data(w, *res);
            wd["sql"] = job_transaction_sql(level, w.order, res->sql);
            wd["isolation"] = to_string(level);
            wd["attempts"] = attempt;
            m_c.record(Op::write, std::move(wd), entry.id, &ev);
            return true;
        } catch (const SerializationFailure& e) {
            const bool retry = attempt <= m_c.settings().write.serialization_retries;
            nlohmann::json data =
                json_object("attempt", attempt, "isolation", to_string(level), "error", e.what(), "retry", retry);
            if (seen) data["snapshot_version"] = *seen;
            m_c.record(Op::serialization_failure, std::move(data), entry.id, &ev);
            if (!retry) return true;
        }
    }
}

// One try of the job's transaction: BEGIN ISOLATION LEVEL …; SELECT version (the snapshot, in
// `seen`); the job; the UPDATE; COMMIT. nullopt: the job failed and the transaction rolled back.
// Any exception rolls it back first (SerializationFailure, a lost connection): under SERIALIZABLE
// even the first SELECT may be refused, and a block left aborted would refuse the next BEGIN.
std::optional<WriteResult> ConsumerWrite::try_transaction(const Event& ev, const OrderWrite& w,
                                                          std::optional<int64_t>& seen) {
    OrderStore& orders = m_c.ports().orders;
    try {
        seen = orders.begin_job(m_c.settings().write.isolation, w.order);
        m_job.spend_cost(ev);
        if (m_job.poisoned(ev)) {
            orders.rollback_job();
            return std::nullopt;
        }
        WriteResult res = orders.write_state(w);
        orders.commit_job();
        return res;
    } catch (...) {
        orders.rollback_job();
        throw;
    }
}

OrderWrite ConsumerWrite::order_write_of(const StreamEntry& entry, const Event& ev) const {
    const WriteSpec& spec = m_c.settings().write;
    OrderWrite w;
    w.order = ev.order;
    w.status = ev.type;
    w.mode = spec.mode;
    w.version = spec.version_source == VersionSource::entry_id ? entry_id_as_version(entry.id) : ev.v;
    w.dedupe = spec.dedupe == WriteDedupe::aggregate_version;
    w.event_version = ev.v;
    w.delta = ev.delta.value_or(0);
    w.amount = ev.amount.value_or(0);
    return w;
}

void ConsumerWrite::flush_batch() {
    std::vector<BatchedWrite> batch = std::move(m_batch);
    m_batch.clear();
    std::vector<OrderWrite> ws;
    ws.reserve(batch.size());
    for (const auto& b : batch) ws.push_back(b.write);
    const std::vector<WriteResult> results = m_c.with_store_retry([&] { return m_c.ports().orders.write_states(ws); });
    for (size_t i = 0; i < batch.size(); ++i) {
        nlohmann::json wd = write_data(batch[i].write, results.at(i));
        wd["batch"] = batch.size();
        m_c.record(Op::write, std::move(wd), batch[i].entry, &batch[i].ev);
    }
    for (const auto& b : batch) m_acks.acknowledge(b.entry);
}

}  // namespace relab
