#include "scenario/fault_loader.h"

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

// "target": resolved once, here, into a typed target ("matched": known when the fault fires).
void read_target(const Reader& r, const Object& o, const LabTargets& lab, FaultSpec& f) {
    const std::string name = o.req_string("target");
    if (name == "matched") {
        if (!f.trigger.after)
            r.fail(o.path("target"), "\"matched\" needs an \"after\" trigger: it is the actor of the record that "
                                     "trigger matched");
        f.matched = true;
        return;
    }
    f.target = fault_target_named(name);
    if (f.target.kind == FaultTarget::redis_cluster_master || f.target.kind == FaultTarget::redis_cluster_replica)
        f.target.shard = static_cast<int>(o.req_int("shard", 0, 15));
    else if (o.has("shard"))
        r.fail(o.path("shard"), "names the shard whose master \"redis-cluster-master\" (or its replica, "
                                "\"redis-cluster-replica\") is; this fault's target is neither");
    // Reads only: the run's server will do when the lab has none of its own.
    const bool reads_only = f.action == FaultAction::observe && f.target.kind == FaultTarget::redis;
    if (reads_only || lab.has(name)) return;
    if (!f.target.is_role()) r.fail(o.path("target"), missing_server(f.target.kind));
    r.expected(o.path("target"),
               fmt::format("a role of this lab ({}), a server of it or its roles' connections ({}), or \"matched\"",
                           quoted_list(lab.roles), quoted_list(lab.servers)),
               o.at("target"));
}

// A link fault's link ("redis" or "postgres") and a delay's ms.
void read_link(const Reader& r, const Object& o, FaultSpec& f) {
    if (!acts_on_link(f.action)) {
        if (o.has("link")) r.fail(o.path("link"), "applies to a link fault only (delay, blackhole, heal)");
    } else {
        f.link = o.opt_choice("link", "redis", {"redis", "postgres"}) == "redis" ? LinkServer::redis : LinkServer::postgres;
    }
    if (f.action == FaultAction::delay)
        f.ms = o.req_int("ms", 1, 600000);
    else if (o.has("ms"))
        r.fail(o.path("ms"), "applies to a delay only (how much later each reply arrives)");
}

// The action, its notes and name (unique among the earlier faults), and a flood's sizes.
FaultSpec read_fault_action(const Reader& r, const Object& o, const std::vector<FaultSpec>& earlier) {
    FaultSpec f;
    const json& action = o.at("action");
    const auto named = action.is_string() ? fault_action_named(action.get<std::string>()) : std::nullopt;
    if (!named) r.expected(o.path("action"), "one of " + quoted_list(fault_action_names()), action);
    f.action = *named;
    f.note = o.opt_string("note", "");
    f.note_vi = o.opt_string("note_vi", f.note);
    f.documented = o.opt_string("documented", "");
    f.name = o.opt_string("name", "");
    if (!f.name.empty())
        for (const auto& e : earlier)
            if (e.name == f.name) r.fail(o.path("name"), "another fault is named \"" + f.name + "\"");
    if (f.action == FaultAction::flood) {
        f.bytes = o.req_int("bytes", 1);
        f.value_bytes = o.opt_int("value_bytes", f.value_bytes, 1, 1 << 24);
        f.db = o.opt_int("db", -1, 0, 15);
    } else {
        for (const char* key : {"bytes", "value_bytes", "db"})
            if (o.has(key)) r.fail(o.path(key), "applies to a flood only");
    }
    read_link(r, o, f);
    if (f.action == FaultAction::trim)
        f.maxlen = o.req_int("maxlen", 0);
    else if (o.has("maxlen"))
        r.fail(o.path("maxlen"), "applies to a trim only");
    return f;
}

// "after": the history record whose arrival fires the fault.
FaultTrigger::After read_after(const Reader& r, const Object& o) {
    const Object a(r, o.at("after"), o.path("after"), {"op", "actor", "fields"});
    FaultTrigger::After after;
    after.op = read_op(a, "op");
    after.actor = a.opt_string("actor", "");
    if (a.has("fields")) {
        if (!a.at("fields").is_object()) r.expected(a.path("fields"), "an object", a.at("fields"));
        check_op_fields(r, after.op, a.at("fields"), a.path("fields"));
        after.fields = a.at("fields");
    }
    return after;
}

// When the fault fires (at_ms, after, or both), and how often it repeats.
FaultTrigger read_trigger(const Reader& r, const Object& o) {
    FaultTrigger t;
    if (!o.has("at_ms") && !o.has("after"))
        r.fail(o.path(), "a fault needs a trigger: \"at_ms\" (from the trial origin), \"after\" (a history "
                         "record, e.g. {\"op\": \"receive\", \"fields\": {\"event\": {\"type\": \"created\"}}}) "
                         "or both (whichever comes later)");
    t.at_ms = o.maybe_int("at_ms", 0);
    if (o.has("after")) t.after = read_after(r, o);
    t.delay_ms = o.opt_int("delay_ms", 0, 0);
    if (o.has("delay_ms") && !t.after)
        r.fail(o.path("delay_ms"), "delay_ms counts from an \"after\" trigger's record; with at_ms, add it to at_ms");
    if (o.has("every_ms") && t.at_ms && t.after)
        r.fail(o.path("every_ms"), "a repeated fault has one trigger: \"at_ms\" or \"after\"");
    t.until_published = o.has("until");
    if (t.until_published) {
        o.opt_choice("until", "", {"published"});
        if (!o.has("every_ms"))
            r.fail(o.path("until"), "\"until\" ends a repeated fault's repeats: give \"every_ms\" as well");
    }
    t.count = static_cast<int>(
        o.opt_int("count", t.until_published ? k_fault_count_until_published : 1, 1, k_fault_count_until_published));
    t.every_ms = o.opt_int("every_ms", 0, 1);
    if (t.count > 1 && t.every_ms == 0) r.fail(o.path("count"), "a repeated fault (count > 1) needs \"every_ms\"");
    if (t.every_ms > 0 && !o.has("count") && !t.until_published)
        r.fail(o.path("every_ms"), "a repeated fault needs \"count\" (how many times it fires) or \"until\": "
                                   "\"published\" (while the workload is published)");
    return t;
}

// The fault's target ("target", or "target_of" an earlier fault, the i-th being this one), and
// whether its action may act on it in this lab.
void read_fault_target(const Reader& r, const Object& o, const LabTargets& lab, const std::vector<FaultSpec>& earlier,
                       size_t i, FaultSpec& f) {
    if (o.has("target") == o.has("target_of"))
        r.fail(o.path(), fmt::format("a fault needs exactly one of \"target\" (a role or server: {}; or \"matched\", the "
                                     "actor whose record the after trigger matched) or \"target_of\" (the "
                                     "1-based index of an earlier fault whose target this one acts on)",
                                     quoted_list(lab.all)));
    if (o.has("target_of")) {
        if (i == 0) r.fail(o.path("target_of"), "names an earlier fault (1-based); this is the first fault");
        f.target_of = static_cast<int>(o.req_int("target_of", 1, static_cast<int64_t>(i)));
    } else {
        read_target(r, o, lab, f);
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
    std::vector<FaultSpec> out;
    r.array(v, path, false);
    const LabTargets lab(actors);
    for (size_t i = 0; i < v.size(); ++i) {
        const Object o(r, v[i], child(path, i),
                       {"action", "target", "target_of", "at_ms", "after", "delay_ms", "every_ms", "count", "until",
                        "note", "note_vi", "name", "bytes", "value_bytes", "db", "link", "ms", "maxlen", "documented", "shard"});
        FaultSpec f = read_fault_action(r, o, out);
        f.trigger = read_trigger(r, o);
        read_fault_target(r, o, lab, out, i, f);
        out.push_back(std::move(f));
    }
    return out;
}

}  // namespace relab
