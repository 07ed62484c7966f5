#include "roles/consumer/job.h"

#include <algorithm>

namespace relab {

namespace {

std::string event_cost_key(int64_t order, const std::string& type, int64_t v) {
    return std::to_string(order) + ':' + type + ':' + std::to_string(v);
}

}  // namespace

ConsumerJob::ConsumerJob(const ConsumerContext& c, std::shared_ptr<const EventCosts> costs)
    : m_c(c), m_event_cost_us(std::move(costs)) {
    if (m_event_cost_us) return;
    // A generated workload's own cost per event (drawn from the lab's seed), indexed once per
    // process: a soak's 100,000 events, once per worker, made every restart slow and large.
    auto costs_here = std::make_shared<EventCosts>();
    for (const auto& e : c.settings().events)
        if (e.cost_us >= 0) (*costs_here)[event_cost_key(e.order, e.type, e.version)] = e.cost_us;
    m_event_cost_us = std::move(costs_here);
}

void ConsumerJob::spend_cost(const Event& ev) const {
    // Only a generated workload has costs of its own: no key to build for the others.
    const auto own = m_event_cost_us->empty() ? m_event_cost_us->end()
                                              : m_event_cost_us->find(event_cost_key(ev.order, ev.type, ev.v));
    const auto& job_cost_ms = m_c.settings().job_cost_ms;
    if (own != m_event_cost_us->end()) {
        if (own->second > 0) m_c.ports().clock.sleep_for(Micros{own->second});
    } else if (const auto cost = job_cost_ms.find(ev.type); cost != job_cost_ms.end()) {
        m_c.ports().clock.sleep_for(Millis{cost->second});
    }
}

bool ConsumerJob::poisoned(const Event& ev) const {
    const auto& events = m_c.settings().events;
    return std::any_of(events.begin(), events.end(), [&](const EventSpec& e) {
        return e.fails && e.order == ev.order && e.type == ev.type && e.version == ev.v;
    });
}

}  // namespace relab
