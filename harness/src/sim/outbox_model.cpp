#include "sim/outbox_model.h"

#include <algorithm>

namespace relab::sim {

void OutboxModel::reset(const std::vector<OrderRow>& source_rows) {
    m_source.clear();
    for (const auto& r : source_rows) m_source[r.id] = r;
    m_outbox.clear();
    m_locks.clear();
}

int64_t OutboxModel::record_change(int64_t order, const std::string& status, int64_t version) {
    auto it = m_source.find(order);
    if (it != m_source.end()) {
        it->second.status = status;
        it->second.version = version;
    }
    Row r;
    r.row.id = static_cast<int64_t>(m_outbox.size()) + 1;
    r.row.aggregate_id = order;
    r.row.type = status;
    r.row.version = version;
    m_outbox.push_back(std::move(r));
    return m_outbox.back().row.id;
}

std::vector<OutboxRow> OutboxModel::unpublished(OutboxOrder order) const {
    std::vector<OutboxRow> out;
    for (const auto& r : m_outbox)
        if (!r.published_at) out.push_back(r.row);
    if (order == OutboxOrder::by_aggregate_then_id)
        std::stable_sort(out.begin(), out.end(),
                         [](const OutboxRow& a, const OutboxRow& b) { return a.aggregate_id < b.aggregate_id; });
    return out;
}

OutboxModel::Row* OutboxModel::find(int64_t id) {
    if (id < 1 || id > static_cast<int64_t>(m_outbox.size())) return nullptr;
    return &m_outbox[static_cast<size_t>(id - 1)];
}

void OutboxModel::mark_published(int64_t id, const std::string& entry_id, Nanos now) {
    if (Row* r = find(id)) {
        r->published_at = now;
        r->stream_id = entry_id;
    }
}

void OutboxModel::count_failed_attempt(int64_t id) {
    if (Row* r = find(id)) ++r->row.attempts;
}

std::optional<OutboxRow> OutboxModel::claim(ClaimScope scope, const std::vector<int64_t>& skip, const void* owner,
                                            const std::function<bool(const void*)>& live) {
    auto locked_by_other = [&](int64_t id) {
        const auto it = m_locks.find(id);
        return it != m_locks.end() && it->second != owner && live(it->second);
    };
    auto skipped = [&](int64_t key) { return std::find(skip.begin(), skip.end(), key) != skip.end(); };
    std::map<int64_t, bool> head_seen;  // aggregate -> its first unpublished row was seen
    for (const auto& r : m_outbox) {
        if (r.published_at) continue;
        const int64_t id = r.row.id;
        if (scope == ClaimScope::aggregate_head) {
            // Only an aggregate's first unpublished row: once it is seen (claimable or not), the
            // aggregate's later rows are not heads.
            if (head_seen[r.row.aggregate_id]) continue;
            head_seen[r.row.aggregate_id] = true;
            if (skipped(r.row.aggregate_id) || locked_by_other(id)) continue;
        } else if (skipped(id) || locked_by_other(id)) {
            continue;
        }
        m_locks[id] = owner;
        return r.row;
    }
    return std::nullopt;
}

void OutboxModel::release(const void* owner) {
    for (auto it = m_locks.begin(); it != m_locks.end();)
        it = it->second == owner ? m_locks.erase(it) : std::next(it);
}

const void* OutboxModel::lock_holder(int64_t id) const {
    const auto it = m_locks.find(id);
    return it == m_locks.end() ? nullptr : it->second;
}

std::vector<OrderRow> OutboxModel::source_rows() const {
    std::vector<OrderRow> out;
    for (const auto& [id, r] : m_source) out.push_back(r);
    return out;
}

}  // namespace relab::sim
