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

// What each action may act on and whose errors the roles then see. An action without a row may
// act on any target the lab has and makes no role ride anything out.
struct TargetRule {
    FaultAction action;
    std::vector<std::pair<FaultTarget, FaultOutage>> targets;
    const char* needs = "";  // another target the lab must have
};

const TargetRule k_target_rules[] = {
    {FaultAction::kill, {{FaultTarget::role, FaultOutage::none}, {FaultTarget::redis, FaultOutage::redis},
                         {FaultTarget::postgres, FaultOutage::postgres}}},
    {FaultAction::pause, {{FaultTarget::role, FaultOutage::none}, {FaultTarget::redis, FaultOutage::redis},
                          {FaultTarget::redis_replica, FaultOutage::redis}, {FaultTarget::postgres, FaultOutage::postgres}}},
    {FaultAction::resume, {{FaultTarget::role, FaultOutage::none}, {FaultTarget::redis, FaultOutage::none},
                           {FaultTarget::redis_replica, FaultOutage::none}, {FaultTarget::postgres, FaultOutage::none}}},
    // "redis-replica": after a failover, the old primary comes back (the loader wants the failover first)
    {FaultAction::restart, {{FaultTarget::role, FaultOutage::none}, {FaultTarget::redis, FaultOutage::redis},
                            {FaultTarget::redis_replica, FaultOutage::redis}, {FaultTarget::postgres, FaultOutage::postgres}}},
    {FaultAction::failover, {{FaultTarget::redis, FaultOutage::redis}}, "redis-replica"},
    {FaultAction::drop_link, {{FaultTarget::redis_replica, FaultOutage::redis}, {FaultTarget::clients, FaultOutage::redis},
                              {FaultTarget::role, FaultOutage::redis}}},
    {FaultAction::flood, {{FaultTarget::redis, FaultOutage::none}}},
    {FaultAction::snapshot, {{FaultTarget::redis, FaultOutage::none}}},
    {FaultAction::observe, {{FaultTarget::redis, FaultOutage::none}}},
};

const TargetRule* rule_of(FaultAction a) {
    for (const auto& r : k_target_rules)
        if (r.action == a) return &r;
    return nullptr;
}

const std::pair<FaultTarget, const char*> k_target_names[] = {
    {FaultTarget::redis, "redis"},
    {FaultTarget::redis_replica, "redis-replica"},
    {FaultTarget::postgres, "postgres"},
    {FaultTarget::clients, "clients"},
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

std::string to_string(FaultTarget t) {
    for (const auto& [target, name] : k_target_names)
        if (target == t) return fmt::format("\"{}\"", name);
    return "a role";
}

FaultTarget fault_target_kind(const std::string& name) {
    for (const auto& [target, n] : k_target_names)
        if (name == n) return target;
    return FaultTarget::role;
}

std::optional<std::string> fault_target_refusal(FaultAction action, FaultTarget target) {
    const TargetRule* rule = rule_of(action);
    if (!rule) return std::nullopt;
    std::vector<std::string> allowed;
    for (const auto& [t, outage] : rule->targets) {
        if (t == target) return std::nullopt;
        allowed.push_back(to_string(t));
    }
    std::string list;
    for (size_t i = 0; i < allowed.size(); ++i)
        list += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + allowed[i];
    return fmt::format("{} acts on {}, not on {}", to_string(action), list, to_string(target));
}

std::string fault_action_needs(FaultAction action) {
    const TargetRule* rule = rule_of(action);
    return rule ? rule->needs : "";
}

FaultOutage fault_outage(FaultAction action, FaultTarget target) {
    if (const TargetRule* rule = rule_of(action))
        for (const auto& [t, outage] : rule->targets)
            if (t == target) return outage;
    return FaultOutage::none;
}

FaultTarget fault_target_of(const std::vector<FaultSpec>& faults, size_t index) {
    // target_of names an earlier fault (the loader checks it), so this ends.
    while (index < faults.size() && faults[index].target_of > 0 &&
           static_cast<size_t>(faults[index].target_of - 1) < index)
        index = static_cast<size_t>(faults[index].target_of - 1);
    return index < faults.size() ? fault_target_kind(faults[index].target) : FaultTarget::role;
}

bool faults_cause(const std::vector<FaultSpec>& faults, FaultOutage outage) {
    for (size_t i = 0; i < faults.size(); ++i)
        if (fault_outage(faults[i].action, fault_target_of(faults, i)) == outage) return true;
    return false;
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
            if (target == "postgres") {  // the lab's own PostgreSQL: crash recovery on its data directory
                const Nanos t0 = c.now();
                if (!c.finished(target)) c.kill(target);
                c.start(target);
                return text(fmt::format("PostgreSQL killed (SIGKILL to the postmaster and every backend, as `docker "
                                        "kill`) and restarted on its port and data dir; crash recovery done and "
                                        "connections accepted {:.0f} ms after the kill",
                                        std::chrono::duration<double, std::milli>(c.now() - t0).count()));
            }
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
