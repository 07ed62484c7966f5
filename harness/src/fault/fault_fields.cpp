// A fault's fields as its description reads and writes them (fault/fault_spec.h): the custom keys
// (an action by name, a target by name, a cluster target's shard, a flood's database, "until") and
// the rules across one fault's own fields. What needs the rest of the lab (the targets it has, the
// earlier faults) is the loader's (scenario/loader/fault_loader.cpp).
#include <fmt/format.h>

#include "fault/fault_spec.h"
#include "fault/faults.h"

namespace relab::desc {

using scenario_json::child;
using scenario_json::quoted_list;

FaultAction Codec<FaultAction>::read(const Reader& r, const json& v, const std::string& path, const Limits&, Read) {
    const auto named = v.is_string() ? fault_action_named(v.get<std::string>()) : std::nullopt;
    if (!named) r.expected(path, "one of " + quoted_list(fault_action_names()), v);
    return *named;
}

json Codec<FaultAction>::write(FaultAction a, Write) { return to_string(a); }

void Codec<FaultAction>::schema(ordered_json& p, const Limits&) {
    p["type"] = "string";
    p["enum"] = fault_action_names();
}

void Described<FaultTrigger::After>::after_fields_read(const Reader& r, const json& v, const std::string& path,
                                                       FaultTrigger::After& a) {
    if (!v.is_object()) r.expected(path, "an object", v);
    scenario_json::check_op_fields(r, a.op, v, path);
    a.fields = v;
}

void Described<FaultTrigger>::until_read(const Reader& r, const json& v, const std::string& path, FaultTrigger& t) {
    if (v != "published") r.expected(path, "one of \"published\"", v);
    t.until_published = true;
}

void Described<FaultTrigger>::check(const Object& o, FaultTrigger& t) {
    const Reader& r = o.reader();
    if (!o.has("at_ms") && !o.has("after"))
        r.fail(o.path(), "a fault needs a trigger: \"at_ms\" (from the trial origin), \"after\" (a history "
                         "record, e.g. {\"op\": \"receive\", \"fields\": {\"event\": {\"type\": \"created\"}}}) "
                         "or both (whichever comes later)");
    if (o.has("delay_ms") && !t.after)
        r.fail(o.path("delay_ms"), "delay_ms counts from an \"after\" trigger's record; with at_ms, add it to at_ms");
    if (o.has("every_ms") && t.at_ms && t.after)
        r.fail(o.path("every_ms"), "a repeated fault has one trigger: \"at_ms\" or \"after\"");
    if (t.until_published && !o.has("every_ms"))
        r.fail(o.path("until"), "\"until\" ends a repeated fault's repeats: give \"every_ms\" as well");
    if (t.until_published && !o.has("count")) t.count = k_fault_count_until_published;
    if (t.count > 1 && t.every_ms == 0) r.fail(o.path("count"), "a repeated fault (count > 1) needs \"every_ms\"");
    if (t.every_ms > 0 && !o.has("count") && !t.until_published)
        r.fail(o.path("every_ms"), "a repeated fault needs \"count\" (how many times it fires) or \"until\": "
                                   "\"published\" (while the workload is published)");
}

void Described<FaultSpec>::target_read(const Reader&, const json& v, const std::string& path, FaultSpec& f) {
    const std::string name = Reader("").string(v, path, true);
    if (name == "matched")
        f.matched = true;
    else
        f.target = fault_target_named(name);
}

json Described<FaultSpec>::target_write(const FaultSpec& f) {
    if (f.matched) return "matched";
    if (f.target_of > 0) return json();
    Target unsharded = f.target;
    unsharded.shard = -1;
    return target_name(unsharded);
}

void Described<FaultSpec>::shard_read(const Reader& r, const json& v, const std::string& path, FaultSpec& f) {
    f.target.shard = static_cast<int>(r.integer(v, path, 0, 15));
}

void Described<FaultSpec>::db_read(const Reader& r, const json& v, const std::string& path, FaultSpec& f) {
    f.db = r.integer(v, path, 0, 15);
}

namespace {

// The keys only some actions take: each refused on any other, and required where it must be.
void check_action_keys(const Object& o, const FaultSpec& f) {
    const Reader& r = o.reader();
    if (f.action != FaultAction::flood) {
        for (const char* key : {"bytes", "value_bytes", "db"})
            if (o.has(key)) r.fail(o.path(key), "applies to a flood only");
    } else if (!o.has("bytes")) {
        r.fail(o.path("bytes"), "required field is missing");
    }
    if (!acts_on_link(f.action) && o.has("link"))
        r.fail(o.path("link"), "applies to a link fault only (delay, blackhole, heal)");
    if (f.action == FaultAction::delay && !o.has("ms")) r.fail(o.path("ms"), "required field is missing");
    if (f.action != FaultAction::delay && o.has("ms"))
        r.fail(o.path("ms"), "applies to a delay only (how much later each reply arrives)");
    if (f.action == FaultAction::trim && !o.has("maxlen")) r.fail(o.path("maxlen"), "required field is missing");
    if (f.action != FaultAction::trim && o.has("maxlen")) r.fail(o.path("maxlen"), "applies to a trim only");
}

}  // namespace

void Described<FaultSpec>::check(const Object& o, FaultSpec& f) {
    const Reader& r = o.reader();
    if (!o.has("note_vi")) f.note_vi = f.note;
    check_action_keys(o, f);
    if (f.matched && !f.trigger.after)
        r.fail(o.path("target"), "\"matched\" needs an \"after\" trigger: it is the actor of the record that "
                                 "trigger matched");
    const bool cluster = f.target.kind == FaultTarget::redis_cluster_master ||
                         f.target.kind == FaultTarget::redis_cluster_replica;
    if (o.has("target") && !f.matched && cluster && !o.has("shard"))
        r.fail(o.path("shard"), "required field is missing");
    if (o.has("shard") && !(o.has("target") && cluster))
        r.fail(o.path("shard"), "names the shard whose master \"redis-cluster-master\" (or its replica, "
                                "\"redis-cluster-replica\") is; this fault's target is neither");
}

}  // namespace relab::desc
