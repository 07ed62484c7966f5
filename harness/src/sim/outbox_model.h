// The source system's tables in memory: tmp_src_orders (the order's own state) and tmp_outbox
// (events waiting to be published), as RealOutbox uses them. Each call is one atomic step: the
// real record_change is one transaction, and nothing else writes these tables concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ports/ports.h"

namespace relab::sim {

class OutboxModel {
public:
    // tmp_src_orders as given, tmp_outbox empty with ids restarting at 1.
    void reset(const std::vector<OrderRow>& source_rows);

    // UPDATE tmp_src_orders (a missing order changes no row, as in SQL) + INSERT INTO tmp_outbox;
    // returns the new outbox id.
    int64_t record_change(int64_t order, const std::string& status, int64_t version);
    std::vector<OutboxRow> unpublished(OutboxOrder order) const;
    // UPDATE tmp_outbox SET published_at = now(), stream_id = ... WHERE id = ...
    void mark_published(int64_t id, const std::string& entry_id, Nanos now);
    void count_failed_attempt(int64_t id);

    struct Row {
        OutboxRow row;
        std::optional<Nanos> published_at;
        std::string stream_id;
    };
    const std::vector<Row>& outbox() const { return m_outbox; }
    std::vector<OrderRow> source_rows() const;

private:
    Row* find(int64_t id);

    std::map<int64_t, OrderRow> m_source;
    std::vector<Row> m_outbox;  // by id: row i has id i + 1
};

}  // namespace relab::sim
