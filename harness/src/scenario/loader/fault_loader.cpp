#include "scenario/loader/fault_loader.h"

#include <algorithm>

#include <fmt/format.h>

namespace relab {

using nlohmann::json;
using namespace scenario_json;

namespace {

// How a lab gets each server it may fault, for the error naming it.
std::string how_to_get(FaultTarget target) {
    switch (target) {
        case FaultTarget::redis: return "give the lab \"servers\": {\"redis\": {...}}";
        case FaultTarget::redis_replica: return "give the lab \"servers\": {\"replica\": true}";
        case FaultTarget::redis_cache: return "give the lab \"servers\": {\"cache\": {...}}";
        case FaultTarget::postgres: return "give the lab \"servers\": {\"postgres\": {...}}";
        case FaultTarget::redis_cluster_master:
        case FaultTarget::redis_cluster_replica:
            return "give the lab \"shard\": {\"cluster\": {\"replicas\": 1}}, a Redis Cluster with a replica per master";
        case FaultTarget::role:
        case FaultTarget::clients: break;
    }
    return "";
}

// Why a fault may not name a server the lab lacks: a fault changes a server for everyone on it.
std::string missing_server(FaultTarget target) {
    if (target == FaultTarget::redis)
        return "a fault on \"redis\" needs the lab's own server: add \"servers\" (a fault changes a server for "
               "everyone on it)";
    if (target == FaultTarget::redis_replica) return "needs a replica: \"servers\": {\"replica\": true}";
    if (target == FaultTarget::postgres)
        return "a fault on \"postgres\" needs the lab's own PostgreSQL (the run's is never faulted): " + how_to_get(target);
    return "a fault on " + to_string(target) + " needs the lab's own server: " + how_to_get(target);
}

// The lab's roles and its servers, by name, and "clients" (every Redis connection of its roles).
struct LabTargets {
    std::vector<std::string> roles, servers, all;
    explicit LabTargets(const std::vector<std::string>& actors) {
        for (const auto& a : actors) (fault_target_kind(a) == FaultTarget::role ? roles : servers).push_back(a);
        servers.push_back("clients");
        all = roles;
        all.insert(all.end(), servers.begin(), servers.end());
    }
    bool has(const std::string& name) const { return std::find(all.begin(), all.end(), name) != all.end(); }
    bool has(FaultTarget kind) const {
        return std::any_of(servers.begin(), servers.end(), [&](const std::string& s) { return fault_target_kind(s) == kind; });
    }
};

// A target the fault names ("matched" aside) must be one of the lab's roles or servers.
void check_target(const Reader& r, const Object& o, const LabTargets& lab, const FaultSpec& f) {
    if (f.matched) return;
    const std::string name = o.req_string("target");
    // Reads only: the run's server will do when the lab has none of its own.
    const bool reads_only = f.action == FaultAction::observe && f.target.kind == FaultTarget::redis;
    if (reads_only || lab.has(name)) return;
    if (!f.target.is_role()) r.fail(o.path("target"), missing_server(f.target.kind));
    r.expected(o.path("target"),
               fmt::format("a role of this lab ({}), a server of it or its roles' connections ({}), or \"matched\"",
                           quoted_list(lab.roles), quoted_list(lab.servers)),
               o.at("target"));
}

// The fault's target ("target", or "target_of" an earlier fault, the i-th being this one), and
// whether its action may act on it in this lab.
void check_fault_target(const Reader& r, const Object& o, const LabTargets& lab, const std::vector<FaultSpec>& earlier,
                        size_t i, const FaultSpec& f) {
    if (o.has("target") == o.has("target_of"))
        r.fail(o.path(), fmt::format("a fault needs exactly one of \"target\" (a role or server: {}; or \"matched\", the "
                                     "actor whose record the after trigger matched) or \"target_of\" (the "
                                     "1-based index of an earlier fault whose target this one acts on)",
                                     quoted_list(lab.all)));
    if (o.has("target_of")) {
        if (i == 0) r.fail(o.path("target_of"), "names an earlier fault (1-based); this is the first fault");
        if (f.target_of > static_cast<int>(i))
            r.expected(o.path("target_of"), integer_range_text(1, static_cast<int64_t>(i)), o.at("target_of"));
    } else {
        check_target(r, o, lab, f);
    }
    // What each action may act on is fault/faults.cpp's table.
    std::vector<FaultSpec> with_this = earlier;
    with_this.push_back(f);
    const FaultTarget kind = fault_target_of(with_this, i);
    if (auto refusal = fault_target_refusal(f.action, kind))
        r.fail(o.path(o.has("target") ? "target" : "target_of"), *refusal);
    const std::optional<FaultTarget> needs = fault_action_needs(f.action);
    if (needs && !lab.has(*needs))
        r.fail(o.path("action"), fmt::format("{} needs {} in the lab: {}", to_string(f.action), to_string(*needs),
                                             how_to_get(*needs)));
    if (acts_on_link(f.action) && lab.has(FaultTarget::redis_replica))
        r.fail(o.path("action"), "a link fault goes through a proxy in front of the lab's primary, and a lab with a "
                                 "replica's roles ask Sentinel for the primary and connect to it directly: drop the "
                                 "replica or the link fault");
    if (kind == FaultTarget::redis_replica && f.action == FaultAction::restart &&
        std::none_of(earlier.begin(), earlier.end(), [](const FaultSpec& e) { return e.action == FaultAction::failover; }))
        r.fail(o.path("action"), "restarting \"redis-replica\" brings the old primary back after a failover: "
                                 "schedule a failover before it");
}

}  // namespace

std::vector<FaultSpec> read_faults(const Reader& r, const json& v, const std::string& path,
                                   const std::vector<std::string>& actors) {
    r.array(v, path, false);
    const LabTargets lab(actors);
    std::vector<FaultSpec> out;
    for (size_t i = 0; i < v.size(); ++i) {
        const Object o(r, v[i], child(path, i), desc::keys<FaultSpec>());
        FaultSpec f = desc::read_file<FaultSpec>(r, v[i], child(path, i));
        if (!f.name.empty())
            for (const auto& e : out)
                if (e.name == f.name) r.fail(o.path("name"), "another fault is named \"" + f.name + "\"");
        check_fault_target(r, o, lab, out, i, f);
        out.push_back(std::move(f));
    }
    return out;
}

}  // namespace relab
