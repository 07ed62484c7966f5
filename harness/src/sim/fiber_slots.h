// The scheduler's fibers, one slot each, numbered in spawn order: the fiber and what the scheduler
// knows of it (a wake-up queued, paused, a wake-up held while paused, the fibers joining it). The
// slots and their stacks are kept across trials, so a trial's fibers reuse the last one's stacks.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/fiber.h"

namespace relab::sim {

using FiberId = int;
inline constexpr FiberId kNoFiber = -1;

class FiberSlots {
public:
    struct Slot {
        std::unique_ptr<Fiber> fiber;
        std::vector<FiberId> joiners;
        bool wake_pending = false;
        bool paused = false;
        bool held_wake = false;  // woken while paused
    };

    explicit FiberSlots(size_t stack_bytes) : m_stack_bytes(stack_bytes) {}

    // No fiber in use (their slots, with their stacks, wait for the next ones).
    void reset();
    // A fiber that runs `body` at its first resume, its wake-up already pending; its id.
    FiberId add(std::string name, std::function<void()> body);
    // Throws std::out_of_range for an id no fiber in use has.
    Slot& operator[](FiberId f) {
        if (static_cast<unsigned>(f) >= static_cast<unsigned>(m_used)) no_fiber(f);
        return m_slots[static_cast<size_t>(f)];
    }
    const Slot& operator[](FiberId f) const {
        if (static_cast<unsigned>(f) >= static_cast<unsigned>(m_used)) no_fiber(f);
        return m_slots[static_cast<size_t>(f)];
    }
    // The fibers in use: ids 0 .. size() - 1.
    int size() const { return m_used; }
    // Those of them that have not finished.
    int live() const { return m_live; }
    void finished_one() { --m_live; }
    void none_live() { m_live = 0; }
    // Names of the fibers that have not finished, in spawn order.
    std::vector<std::string> unfinished() const;

private:
    [[noreturn]] static void no_fiber(FiberId f);

    size_t m_stack_bytes;
    std::vector<Slot> m_slots;  // kept across resets for their stacks
    int m_used = 0;             // slots in use this run
    int m_live = 0;
};

}  // namespace relab::sim
