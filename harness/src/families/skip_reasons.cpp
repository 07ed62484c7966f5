// Why a backend cannot run a lab of a family: what the simulator does not model, and what a Redis
// before 7.0 cannot answer. The rows of families/families.cpp point here.
#include "families/skip_reasons.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "fault/faults.h"

namespace relab {

namespace {

// Why the simulator cannot inject some fault of the lab's schedule (fault/faults.cpp's table says,
// action by action), or nullopt: what it models in no lab first, then what not under the
// idempotency middleware.
std::optional<std::string> faults_skip_reason(const Scenario& s) {
    for (const bool idempotency_lab : {false, s.kind == LabKind::idem_clients})
        for (size_t i = 0; i < s.faults.size(); ++i)
            if (auto reason = fault_sim_refusal(s.faults[i].action, fault_target_of(s.faults, i), idempotency_lab))
                return reason;
    return std::nullopt;
}

// What the simulator cannot model of a lab's own servers and their faults (either kind).
std::optional<std::string> servers_skip_reason(const Scenario& s) {
    if (s.servers.own) {
        for (const auto& [name, value] : s.servers.redis_config) {
            if (name.rfind("maxmemory", 0) == 0)
                return fmt::format("runs redis-server with {} {}; the simulator has no memory or eviction model (the "
                                   "real backend runs it)",
                                   name, value);
            const bool modelled = (name == "appendonly" && (value == "yes" || value == "no")) ||
                                  (name == "appendfsync" && value == "always") || (name == "save" && value.empty());
            if (!modelled)
                return fmt::format("runs redis-server with {} {}; the simulator models a restart only with appendonly "
                                   "yes (appendfsync always: nothing lost) or no persistence at all (everything lost) "
                                   "(the real backend runs it)",
                                   name, value);
        }
    }
    if (s.servers.postgres) {
        for (const auto& [name, value] : s.servers.postgres_config) {
            // A process crash (the OS survives) loses no committed transaction whatever fsync says;
            // what the model keeps is exactly the committed rows, so only settings that keep that true.
            // Without a fault of PostgreSQL nothing crashes it, so synchronous_commit=off (the load labs')
            // loses nothing: every commit the roles saw stays, as the model keeps them.
            const bool postgres_faulted = std::any_of(s.faults.begin(), s.faults.end(),
                                                      [](const FaultSpec& f) { return f.target.kind == FaultTarget::postgres; });
            const bool modelled = name == "fsync" || name == "full_page_writes" || name == "recovery_init_sync_method" ||
                                  name.rfind("log_", 0) == 0 ||
                                  (name == "synchronous_commit" &&
                                   (!postgres_faulted || (value != "off" && value != "false" && value != "0")));
            if (!modelled)
                return fmt::format("runs PostgreSQL with {} {}; the simulator's database keeps exactly the committed "
                                   "rows across a restart (synchronous_commit on) and models no other setting (the "
                                   "real backend runs it)",
                                   name, value);
        }
    }
    return std::nullopt;
}

// A program is a real process on real servers; virtual time cannot run it.
std::optional<std::string> programs_skip_reason(const Scenario& s) {
    if (!s.exec.any()) return std::nullopt;
    std::string roles;
    for (const auto& [role, e] : s.exec.by_role) roles += (roles.empty() ? "" : ", ") + role;
    const bool one = s.exec.by_role.size() == 1;
    return "its " + roles + " " + (one ? "is a program" : "are programs") + " of your own (exec), which " +
           (one ? "runs" : "run") +
           " on real servers only; the simulator runs relab's own roles on virtual time (the real backend runs it)";
}

// Whether a Redis step of the cases sends SET ... NX GET.
bool sends_set_nx_get(const SessionsLab& lab) {
    for (const auto& c : lab.cases)
        for (const auto& session : c.sessions)
            for (const auto& step : session.steps) {
                if (!step.redis) continue;
                const auto& argv = step.redis->argv;
                auto has = [&](const char* word) {
                    return std::any_of(argv.begin() + 1, argv.end(), [&](const std::string& a) {
                        std::string up = a;
                        for (char& ch : up) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
                        return up == word;
                    });
                };
                if (argv.size() > 1 && (argv[0] == "SET" || argv[0] == "set") && has("NX") && has("GET")) return true;
            }
    return false;
}

}  // namespace

std::optional<std::string> idem_sim_skip_reason(const Scenario& s) {
    if (auto reason = programs_skip_reason(s)) return reason;
    if (auto reason = servers_skip_reason(s)) return reason;
    if (auto reason = faults_skip_reason(s)) return reason;
    if (s.idem().middleware.wait)
        return "WAIT needs replicas; the simulator has no replication model (the real backend runs it)";
    return std::nullopt;
}

std::optional<std::string> stream_sim_skip_reason(const Scenario& s) {
    if (auto reason = programs_skip_reason(s)) return reason;
    if (auto reason = servers_skip_reason(s)) return reason;
    if (auto reason = faults_skip_reason(s)) return reason;
    const StreamLab& flow = s.flow();
    if (flow.producer.wait)
        return "the producer's WAIT counts replicas acknowledging its XADD; the simulator's replica is a snapshot, "
               "with no replication offsets to acknowledge (the real backend runs it)";
    if (flow.write.isolation != WriteIsolation::none)
        return "write.isolation \"" + to_string(flow.write.isolation) +
               "\" runs each job in a transaction at that level; the simulator's PostgreSQL applies each statement "
               "on its own, with no transactions, snapshots or serialization failures (the real backend runs it)";
    return std::nullopt;
}

std::optional<std::string> nx_get_skip_reason(const Scenario& s, const std::string& redis_version) {
    int major = 0;
    try {
        major = std::stoi(redis_version);
    } catch (const std::exception&) {
        return std::nullopt;  // unknown: let the server answer for itself
    }
    if (major >= 7) return std::nullopt;
    const bool needs = (s.kind == LabKind::idem_clients && !s.servers.own) ||
                       (counts_cases(s.kind) && sends_set_nx_get(s.sessions()));
    if (!needs) return std::nullopt;
    return fmt::format("SET ... NX GET needs Redis 7.0; this server is {} (the Lua fallback, idem-lua, works on it)",
                       redis_version);
}

}  // namespace relab
