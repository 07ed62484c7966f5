#include "fault/faults.h"

#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace relab {

namespace {

const std::pair<FaultAction, const char*> k_names[] = {
    {FaultAction::kill, "kill"},
    {FaultAction::pause, "pause"},
    {FaultAction::resume, "resume"},
    {FaultAction::restart, "restart"},
    {FaultAction::failover, "failover"},
    {FaultAction::drop_link, "drop_link"},
};

}  // namespace

std::string to_string(FaultAction a) {
    for (const auto& [action, name] : k_names)
        if (action == a) return name;
    return "unknown";
}

std::optional<FaultAction> fault_action_named(const std::string& name) {
    for (const auto& [action, n] : k_names)
        if (name == n) return action;
    return std::nullopt;
}

std::vector<std::string> fault_action_names() {
    std::vector<std::string> out;
    for (const auto& [action, name] : k_names) out.emplace_back(name);
    return out;
}

std::string apply_fault(FaultAction action, const std::string& target, Control& c) {
    switch (action) {
        case FaultAction::kill:
            if (c.finished(target)) throw std::runtime_error(target + " is not running");
            c.kill(target);
            return fmt::format("{} killed (SIGKILL)", target);
        case FaultAction::pause:
            if (c.finished(target)) throw std::runtime_error(target + " is not running");
            c.pause(target);
            return fmt::format("{} paused (SIGSTOP)", target);
        case FaultAction::resume:
            if (!c.paused(target)) throw std::runtime_error(target + " is not paused");
            c.resume(target);
            return fmt::format("{} resumed (SIGCONT)", target);
        case FaultAction::restart: {
            const bool was_running = !c.finished(target);
            if (was_running) c.kill(target);
            c.start(target);
            return fmt::format("{} {}started under the same name", target, was_running ? "killed and " : "");
        }
        case FaultAction::failover: return c.failover(target);
        case FaultAction::drop_link: return c.drop_link(target);
    }
    throw std::logic_error("unknown fault action");
}

}  // namespace relab
