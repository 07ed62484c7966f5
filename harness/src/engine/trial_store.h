// The TrialStore port: a trial's data as a lab family prepares it and reads it back, the same calls
// on both backends. The real backend implements it over the trial's PostgreSQL schema and Redis
// namespace; the simulator over its table, stream and order models.
#pragma once

#include <string>
#include <vector>

#include "ports/ports.h"

namespace relab {

class TrialStore {
public:
    virtual ~TrialStore() = default;

    // The tables a stream lab uses beside tmp_orders.
    struct Tables {
        bool inbox = false;         // tmp_inbox (write.dedupe)
        bool source = false;        // the source app's tables and its outbox (a dispatcher)
        bool side_effects = false;  // tmp_side_effects (write.side_effect)
    };
    // tmp_orders holding exactly `initial`, and `tables` empty, as one step.
    virtual void reset_orders(const std::vector<OrderRow>& initial, Tables tables) = 0;
    // XGROUP CREATE stream group $ MKSTREAM.
    virtual void create_group(const std::string& stream, const std::string& group) = 0;
    virtual std::vector<OrderRow> rows() = 0;
    virtual std::vector<SideEffectRow> side_effects() = 0;
    // Every entry of the lab's stream (a logical name), in log order.
    virtual std::vector<StreamEntry> xrange(const std::string& stream) = 0;

    // The idempotency labs' orders table; with layer4 its unique index on idem_key.
    virtual void reset_placed_orders(bool layer4) = 0;
    virtual std::vector<PlacedOrder> placed_orders() = 0;
};

}  // namespace relab
