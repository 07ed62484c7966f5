// A consumer's write, described once: which statements it runs and in which order, and what it
// reports (the rows affected, what happened to the row, the statement as the timeline shows it).
// The PostgreSQL client and the simulator both run their writes through it, each supplying the
// statements against its own database, so the two cannot drift apart.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ports/ports.h"

namespace relab {

// The statements a store runs for a write, each against its own database (the text of each is
// roles/order_sql.h's).
class OrderStatements {
public:
    virtual ~OrderStatements() = default;
    // One UPDATE: the rows it changed.
    virtual int64_t update(const OrderUpdate& u) = 0;
    // The UPDATEs of one read in one transaction, sent at once: the rows each changed.
    virtual std::vector<int64_t> update_all(const std::vector<OrderUpdate>& us) = 0;
    // BEGIN; the inbox's claim on (order, event_version); the UPDATE when the claim added the row;
    // COMMIT. nullopt: the inbox had the event, and the transaction rolled back.
    virtual std::optional<int64_t> update_once(const OrderWrite& w, const OrderUpdate& u) = 0;
    // An INSERT of the row: the rows it added, or nullopt on a unique violation (23505).
    virtual std::optional<int64_t> insert(const OrderRow& row) = 0;
    // The upsert, its DO UPDATE under `guard`: the rows it affected and whether it inserted.
    struct Upserted {
        int64_t affected = 0;
        bool inserted = false;
    };
    virtual Upserted upsert(const OrderRow& row, VersionGuard guard) = 0;
};

// OrderStore::write_state, by the mode's row (ports/write_mode.h).
WriteResult write_order_state(const OrderWrite& w, OrderStatements& db);
// OrderStore::write_states (write.commit "batch"): UPDATEs without the inbox only, else
// std::logic_error.
std::vector<WriteResult> write_order_states(const std::vector<OrderWrite>& ws, OrderStatements& db);

}  // namespace relab
