// The job a consumer runs for an event, as its lab models it: what it costs (a sleep: a generated
// workload's own cost for the event, else job_cost_ms by the event's type) and whether it fails (a
// poison event, "fails": true, fails on every delivery).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "roles/consumer/context.h"

namespace relab {

// A generated workload's job cost per event, in µs, by "order:type:version".
using EventCosts = std::unordered_map<std::string, int64_t>;

class ConsumerJob {
public:
    // `costs`: the event costs another consumer of the process already indexed (S3's reader, for
    // its workers); null: index them here.
    explicit ConsumerJob(const ConsumerContext& c, std::shared_ptr<const EventCosts> costs = nullptr);

    // Sleeps for the job's cost.
    void spend_cost(const Event& ev) const;
    bool poisoned(const Event& ev) const;
    // Read only once built: shared by S3's worker threads.
    const std::shared_ptr<const EventCosts>& costs() const { return m_event_cost_us; }

private:
    const ConsumerContext& m_c;
    std::shared_ptr<const EventCosts> m_event_cost_us;
};

}  // namespace relab
