#include "fault/faults.h"

#include <chrono>
#include <cmath>
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
    {FaultAction::flood, "flood"},
    {FaultAction::snapshot, "snapshot"},
    {FaultAction::observe, "observe"},
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

bool disrupts(FaultAction a) {
    switch (a) {
        case FaultAction::kill:
        case FaultAction::pause:
        case FaultAction::restart:
        case FaultAction::failover:
        case FaultAction::drop_link: return true;
        case FaultAction::resume:
        case FaultAction::flood:
        case FaultAction::snapshot:
        case FaultAction::observe: return false;
    }
    return false;
}

namespace {

bool is_server(const std::string& target) { return target == "redis" || target == "redis-replica"; }

nlohmann::json text(std::string s) { return {{"text", std::move(s)}}; }

// A server restarted on its port and data directory: what it had before, what it kept.
nlohmann::json restart_server(const std::string& target, Control& c) {
    const nlohmann::json before = c.describe(target);
    const Nanos t0 = c.now();
    if (!c.finished(target)) c.kill(target);
    c.start(target);
    const nlohmann::json after = c.describe(target);
    const double ms = std::chrono::duration<double, std::milli>(c.now() - t0).count();
    return {{"keys_before", before.value("keys", 0)},
            {"keys_after", after.value("keys", 0)},
            {"persistence", before.value("persistence", "")},
            {"restart_ms", std::lround(ms)},
            {"text", fmt::format("redis-server killed (SIGKILL, as `docker kill`; {}) and restarted on its port and "
                                 "data dir in {:.0f} ms: keys {} → {}",
                                 before.value("persistence", ""), ms, before.value("keys", 0), after.value("keys", 0))}};
}

}  // namespace

nlohmann::json apply_fault(const FaultSpec& f, const std::string& target, Control& c) {
    switch (f.action) {
        case FaultAction::kill:
            if (c.finished(target)) throw std::runtime_error(target + " is not running");
            c.kill(target);
            return text(fmt::format("{} killed (SIGKILL)", target));
        case FaultAction::pause:
            if (c.finished(target)) throw std::runtime_error(target + " is not running");
            c.pause(target);
            return text(fmt::format("{} paused (SIGSTOP)", target));
        case FaultAction::resume:
            if (!c.paused(target)) throw std::runtime_error(target + " is not paused");
            c.resume(target);
            return text(fmt::format("{} resumed (SIGCONT)", target));
        case FaultAction::restart: {
            if (target == "redis-replica") {  // after a failover: the old primary comes back
                const Nanos t0 = c.now();
                c.start(target);
                return text(fmt::format("the old primary started again, empty; Sentinel made it a replica of the new "
                                        "one and its first sync was done {:.0f} ms after the restart",
                                        std::chrono::duration<double, std::milli>(c.now() - t0).count()));
            }
            if (is_server(target)) return restart_server(target, c);
            const bool was_running = !c.finished(target);
            if (was_running) c.kill(target);
            c.start(target);
            return text(fmt::format("{} {}started under the same name", target, was_running ? "killed and " : ""));
        }
        case FaultAction::failover: return c.failover(target);
        case FaultAction::drop_link: return c.drop_link(target);
        case FaultAction::flood: return c.flood(target, f.bytes, f.value_bytes);
        case FaultAction::snapshot: return c.snapshot(target);
        case FaultAction::observe: {
            nlohmann::json d = c.describe(target);
            d["text"] = fmt::format("{}: {} keys ({})", target, d.value("keys", 0), d.value("persistence", ""));
            return d;
        }
    }
    throw std::logic_error("unknown fault action");
}

}  // namespace relab
