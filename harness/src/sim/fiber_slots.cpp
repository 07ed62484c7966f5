#include "sim/fiber_slots.h"

#include <stdexcept>

#include <fmt/format.h>

namespace relab::sim {

void FiberSlots::reset() {
    for (int i = 0; i < m_used; ++i) {
        m_slots[static_cast<size_t>(i)].joiners.clear();
        m_slots[static_cast<size_t>(i)].wake_pending = false;
        m_slots[static_cast<size_t>(i)].paused = false;
        m_slots[static_cast<size_t>(i)].held_wake = false;
    }
    m_used = 0;
    m_live = 0;
}

FiberId FiberSlots::add(std::string name, std::function<void()> body) {
    if (static_cast<size_t>(m_used) == m_slots.size()) {
        m_slots.emplace_back();
        m_slots.back().fiber = std::make_unique<Fiber>(m_stack_bytes);
    }
    const FiberId id = m_used++;
    Slot& s = m_slots[static_cast<size_t>(id)];
    s.joiners.clear();
    s.wake_pending = true;
    s.paused = false;
    s.held_wake = false;
    s.fiber->start(std::move(name), std::move(body));
    ++m_live;
    return id;
}

std::vector<std::string> FiberSlots::unfinished() const {
    std::vector<std::string> out;
    for (int i = 0; i < m_used; ++i) {
        const Fiber& f = *m_slots[static_cast<size_t>(i)].fiber;
        if (f.state() != FiberState::finished) out.push_back(f.name());
    }
    return out;
}

void FiberSlots::no_fiber(FiberId f) { throw std::out_of_range(fmt::format("no fiber {}", f)); }

}  // namespace relab::sim
