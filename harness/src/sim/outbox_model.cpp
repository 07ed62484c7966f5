#include "sim/outbox_model.h"

#include <algorithm>

namespace relab::sim {

void OutboxModel::reset(const std::vector<OrderRow>& source_rows) {
    m_source.clear();
    for (const auto& r : source_rows) m_source[r.id] = r;
    m_outbox.clear();
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

std::vector<OrderRow> OutboxModel::source_rows() const {
    std::vector<OrderRow> out;
    for (const auto& [id, r] : m_source) out.push_back(r);
    return out;
}

}  // namespace relab::sim
