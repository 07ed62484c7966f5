#include "fault/faults.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace relab {

namespace {

// The simulator's answer for a (action, target) it does not inject: why, for the lab's skip reason.
constexpr const char* kSimNoReplicaRejoin =
    "brings the old primary back as a replica after a failover; the simulator's replication model has no such "
    "rejoin (the real backend runs it)";
constexpr const char* kSimRedisNeverPaused =
    "pauses redis-server (SIGSTOP); the simulator's server model is never paused (the real backend runs it)";
constexpr const char* kSimPostgresNeverPaused =
    "pauses PostgreSQL (SIGSTOP: statements wait, connections stay); the simulator's database model is never paused "
    "(the real backend runs it)";
constexpr const char* kSimNoIdemReplica =
    "needs a replica and Sentinel's failover under the idempotency middleware; the simulator's replication model "
    "serves the stream labs only so far (the real backend runs it)";
constexpr const char* kSimNoMemory =
    "floods a redis-server that has maxmemory and an eviction policy with cache keys; the simulator has no memory or "
    "eviction model (the real backend runs it)";
constexpr const char* kSimNoRdb =
    "takes an RDB snapshot (BGSAVE) for a restart to load; the simulator has no RDB model (the real backend runs it)";

// One target an action may act on: whose errors the roles then see, and whether the simulator
// injects it (nullptr) or why not, in any lab (`sim`) or in an idempotency lab (`sim_idem`).
struct TargetRow {
    FaultTarget target;
    FaultOutage outage = FaultOutage::none;
    const char* sim = nullptr;
    const char* sim_idem = nullptr;
};

// Every fault action, one row each: adding an action is its enumerator in fault_spec.h, a row
// here and its case in apply_fault() below.
struct ActionRow {
    FaultAction action;
    const char* name;
    bool disrupts;  // takes a server away or cuts it off: clients see errors while it lasts
    std::vector<TargetRow> targets;
    const char* needs = "";  // another target the lab must have
};

using T = FaultTarget;
using O = FaultOutage;
const ActionRow k_actions[] = {
    {FaultAction::kill, "kill", true, {{T::role}, {T::redis, O::redis}, {T::postgres, O::postgres}}},
    {FaultAction::pause, "pause", true,
     {{T::role},
      {T::redis, O::redis, kSimRedisNeverPaused},
      {T::redis_replica, O::redis, nullptr, kSimNoIdemReplica},
      {T::postgres, O::postgres, kSimPostgresNeverPaused}}},
    {FaultAction::resume, "resume", false,
     {{T::role},
      {T::redis, O::none, kSimRedisNeverPaused},
      {T::redis_replica, O::none, nullptr, kSimNoIdemReplica},
      {T::postgres, O::none, kSimPostgresNeverPaused}}},
    // "redis-replica": after a failover, the old primary comes back (the loader wants the failover first)
    {FaultAction::restart, "restart", true,
     {{T::role}, {T::redis, O::redis}, {T::redis_replica, O::redis, kSimNoReplicaRejoin}, {T::postgres, O::postgres}}},
    {FaultAction::failover, "failover", true, {{T::redis, O::redis, nullptr, kSimNoIdemReplica}}, "redis-replica"},
    {FaultAction::drop_link, "drop_link", true,
     {{T::redis_replica, O::redis, nullptr, kSimNoIdemReplica}, {T::clients, O::redis}, {T::role, O::redis}}},
    {FaultAction::flood, "flood", false, {{T::redis, O::none, kSimNoMemory}, {T::redis_cache, O::none, kSimNoMemory}}},
    {FaultAction::snapshot, "snapshot", false, {{T::redis, O::none, kSimNoRdb}}},
    {FaultAction::observe, "observe", false, {{T::redis}}},
};

const ActionRow& row_of(FaultAction a) {
    for (const auto& r : k_actions)
        if (r.action == a) return r;
    throw std::logic_error("a FaultAction without its row in fault/faults.cpp's k_actions");
}

const TargetRow* target_row(FaultAction a, FaultTarget t) {
    for (const auto& r : row_of(a).targets)
        if (r.target == t) return &r;
    return nullptr;
}

const std::pair<FaultTarget, const char*> k_target_names[] = {
    {FaultTarget::redis, "redis"},
    {FaultTarget::redis_replica, "redis-replica"},
    {FaultTarget::redis_cache, "redis-cache"},
    {FaultTarget::postgres, "postgres"},
    {FaultTarget::clients, "clients"},
};

}  // namespace

std::string to_string(FaultAction a) {
    for (const auto& r : k_actions)
        if (r.action == a) return r.name;
    return "unknown";
}

std::optional<FaultAction> fault_action_named(const std::string& name) {
    for (const auto& r : k_actions)
        if (name == r.name) return r.action;
    return std::nullopt;
}

std::vector<std::string> fault_action_names() {
    std::vector<std::string> out;
    for (const auto& r : k_actions) out.emplace_back(r.name);
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
    if (target_row(action, target)) return std::nullopt;
    const auto& rows = row_of(action).targets;
    std::string list;
    for (size_t i = 0; i < rows.size(); ++i)
        list += (i == 0 ? "" : i + 1 == rows.size() ? " or " : ", ") + to_string(rows[i].target);
    return fmt::format("{} acts on {}, not on {}", to_string(action), list, to_string(target));
}

std::string fault_action_needs(FaultAction action) { return row_of(action).needs; }

FaultOutage fault_outage(FaultAction action, FaultTarget target) {
    const TargetRow* r = target_row(action, target);
    return r ? r->outage : FaultOutage::none;
}

std::optional<std::string> fault_sim_refusal(FaultAction action, FaultTarget target, bool idempotency_lab) {
    const TargetRow* r = target_row(action, target);
    if (!r) return std::nullopt;  // the loader refuses it first
    if (r->sim) return r->sim;
    if (idempotency_lab && r->sim_idem) return r->sim_idem;
    return std::nullopt;
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

namespace {

// Where recovery_fields() row `name` lives in the "recovery" object: its section's object (the
// top level, or null when the section is off) and its key there.
std::pair<const nlohmann::json*, std::string> recovery_slot(const nlohmann::json& j, const std::string& name) {
    const auto dot = name.find('.');
    if (dot == std::string::npos) return {&j, name};
    const auto section = j.find(name.substr(0, dot));
    return {section == j.end() || !section->is_object() ? nullptr : &*section, name.substr(dot + 1)};
}

}  // namespace

nlohmann::json recovery_to_json(const RecoverySpec& r) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& f : recovery_fields()) {
        const std::string name = f.name;
        const auto dot = name.find('.');
        nlohmann::json& at = dot == std::string::npos ? out : out[name.substr(0, dot)];
        if (!at.is_object()) continue;  // the section is off: its fields stay at their defaults
        const std::string key = dot == std::string::npos ? name : name.substr(dot + 1);
        switch (f.type) {
            case RecoveryField::Type::flag: at[key] = f.flag(r); break;
            case RecoveryField::Type::number: at[key] = f.number(r); break;
            case RecoveryField::Type::choice: at[key] = f.choices.at(f.choice(r)); break;
            case RecoveryField::Type::section:
                at[key] = f.flag(r) ? nlohmann::json::object() : nlohmann::json(nullptr);
                break;
        }
    }
    return out;
}

RecoverySpec recovery_from_json(const nlohmann::json& j) {
    RecoverySpec r;
    if (!j.is_object()) return r;
    for (const auto& f : recovery_fields()) {
        const auto [at, key] = recovery_slot(j, f.name);
        if (!at || !at->contains(key)) continue;
        const nlohmann::json& v = at->at(key);
        switch (f.type) {
            case RecoveryField::Type::flag: f.set_flag(r, v.get<bool>()); break;
            case RecoveryField::Type::number: f.set_number(r, v.get<int64_t>()); break;
            case RecoveryField::Type::choice: {
                const auto it = std::find(f.choices.begin(), f.choices.end(), v.get<std::string>());
                if (it == f.choices.end()) throw std::invalid_argument("recovery." + std::string(f.name) + ": " + v.dump());
                f.set_choice(r, static_cast<size_t>(it - f.choices.begin()));
                break;
            }
            case RecoveryField::Type::section: f.set_flag(r, v.is_object()); break;
        }
    }
    return r;
}

bool disrupts(FaultAction a) { return row_of(a).disrupts; }

namespace {

bool is_server(const std::string& target) {
    return target == "redis" || target == "redis-replica" || target == "redis-cache";
}

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
            nlohmann::json out = text(fmt::format("{} {}started under the same name", target,
                                                  was_running ? "killed (SIGKILL) and " : ""));
            out["killed"] = was_running;
            return out;
        }
        case FaultAction::failover: return c.failover(target);
        case FaultAction::drop_link: return c.drop_link(target);
        case FaultAction::flood: return c.flood(target, f.bytes, f.value_bytes, f.db);
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
