#include "scenario/fault_loader.h"

#include <algorithm>

#include <fmt/format.h>

namespace relab {

using nlohmann::json;
using namespace scenario_json;

RecoverySpec read_recovery(const Object& o) {
    const Reader& r = o.reader();
    RecoverySpec rec;
    if (o.has("recreate_group")) {
        const json& v = o.at("recreate_group");
        if (!v.is_boolean()) r.expected(o.path("recreate_group"), "true or false", v);
        rec.recreate_group = v.get<bool>();
    }
    if (o.has("pending_first")) {
        const json& v = o.at("pending_first");
        if (!v.is_boolean()) r.expected(o.path("pending_first"), "true or false", v);
        rec.pending_first = v.get<bool>();
    }
    if (o.has("autoclaim") && !o.at("autoclaim").is_null()) {
        const Object a(r, o.at("autoclaim"), o.path("autoclaim"), {"min_idle_ms", "every_ms", "count", "in"});
        auto& ac = rec.autoclaim;
        ac.enabled = true;
        ac.min_idle_ms = a.opt_int("min_idle_ms", ac.min_idle_ms, 0);
        ac.every_ms = a.opt_int("every_ms", ac.every_ms, 1);
        ac.count = static_cast<int>(a.opt_int("count", ac.count, 1, 10000));
        ac.in_reaper = a.opt_choice("in", "reaper", {"reaper", "consumers"}) == "reaper";
    }
    return rec;
}

std::vector<FaultSpec> read_faults(const Reader& r, const json& v, const std::string& path,
                                   const std::vector<std::string>& actors) {
    std::vector<FaultSpec> out;
    r.array(v, path, false);
    for (size_t i = 0; i < v.size(); ++i) {
        const Object o(r, v[i], child(path, i),
                       {"action", "target", "target_of", "at_ms", "after", "delay_ms", "every_ms", "count", "note",
                        "note_vi", "name", "bytes", "value_bytes", "documented"});
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
            for (const auto& earlier : out)
                if (earlier.name == f.name) r.fail(o.path("name"), "another fault is named \"" + f.name + "\"");
        if (f.action == FaultAction::flood) {
            f.bytes = o.req_int("bytes", 1);
            f.value_bytes = o.opt_int("value_bytes", f.value_bytes, 1, 1 << 24);
        } else {
            for (const char* key : {"bytes", "value_bytes"})
                if (o.has(key)) r.fail(o.path(key), "applies to a flood only");
        }

        FaultTrigger& t = f.trigger;
        if (!o.has("at_ms") && !o.has("after"))
            r.fail(o.path(), "a fault needs a trigger: \"at_ms\" (from the trial origin), \"after\" (a history "
                             "record, e.g. {\"op\": \"receive\", \"fields\": {\"event\": {\"type\": \"created\"}}}) "
                             "or both (whichever comes later)");
        t.at_ms = o.maybe_int("at_ms", 0);
        if (o.has("after")) {
            const Object a(r, o.at("after"), o.path("after"), {"op", "actor", "fields"});
            FaultTrigger::After after;
            after.op = read_op(a, "op");
            after.actor = a.opt_string("actor", "");
            if (a.has("fields")) {
                if (!a.at("fields").is_object()) r.expected(a.path("fields"), "an object", a.at("fields"));
                check_op_fields(r, after.op, a.at("fields"), a.path("fields"));
                after.fields = a.at("fields");
            }
            t.after = std::move(after);
        }
        t.delay_ms = o.opt_int("delay_ms", 0, 0);
        if (o.has("delay_ms") && !t.after)
            r.fail(o.path("delay_ms"), "delay_ms counts from an \"after\" trigger's record; with at_ms, add it to at_ms");
        if (o.has("every_ms") && t.at_ms && t.after)
            r.fail(o.path("every_ms"), "a repeated fault has one trigger: \"at_ms\" or \"after\"");
        t.count = static_cast<int>(o.opt_int("count", 1, 1, 100000));
        t.every_ms = o.opt_int("every_ms", 0, 1);
        if (t.count > 1 && t.every_ms == 0) r.fail(o.path("count"), "a repeated fault (count > 1) needs \"every_ms\"");
        if (t.every_ms > 0 && !o.has("count"))
            r.fail(o.path("every_ms"), "a repeated fault needs \"count\": how many times it fires");

        if (o.has("target") == o.has("target_of"))
            r.fail(o.path(), fmt::format("a fault needs exactly one of \"target\" (a role: {}; or \"matched\", the "
                                         "actor whose record the after trigger matched) or \"target_of\" (the "
                                         "1-based index of an earlier fault whose target this one acts on)",
                                         quoted_list(actors)));
        if (o.has("target_of")) {
            if (i == 0) r.fail(o.path("target_of"), "names an earlier fault (1-based); this is the first fault");
            f.target_of = static_cast<int>(o.req_int("target_of", 1, static_cast<int64_t>(i)));
        } else {
            f.target = o.req_string("target");
            if (f.target == "matched") {
                if (!t.after) r.fail(o.path("target"), "\"matched\" needs an \"after\" trigger: it is the actor of the "
                                                         "record that trigger matched");
            } else if (f.action == FaultAction::observe && f.target == "redis") {
                // Reads only: the run's server will do when the lab has none of its own.
            } else if ((f.target == "redis" || f.target == "redis-replica") &&
                       std::find(actors.begin(), actors.end(), f.target) == actors.end()) {
                r.fail(o.path("target"), f.target == "redis"
                                             ? "a fault on \"redis\" needs the lab's own server: add \"servers\" (a "
                                               "fault changes a server for everyone on it)"
                                             : "needs a replica: \"servers\": {\"replica\": true}");
            } else if (std::find(actors.begin(), actors.end(), f.target) == actors.end()) {
                r.expected(o.path("target"), fmt::format("a role of this lab ({}) or \"matched\"", quoted_list(actors)),
                           o.at("target"));
            }
        }
        if ((f.action == FaultAction::failover && f.target != "redis") ||
            (f.action == FaultAction::drop_link && f.target != "redis-replica"))
            r.fail(o.path("target"), fmt::format("{} acts on {}", to_string(f.action),
                                                 f.action == FaultAction::failover
                                                     ? "\"redis\" (the primary; the lab needs \"servers\": {\"replica\": true})"
                                                     : "\"redis-replica\""));
        if (f.target == "redis-replica" && f.action == FaultAction::kill)
            r.fail(o.path("action"), "the replica can be paused, resumed, have its link dropped or (after a failover, "
                                     "as the old primary) be restarted");
        if (f.target == "redis-replica" && f.action == FaultAction::restart &&
            std::none_of(out.begin(), out.end(), [](const FaultSpec& e) { return e.action == FaultAction::failover; }))
            r.fail(o.path("action"), "restarting \"redis-replica\" brings the old primary back after a failover: "
                                     "schedule a failover before it");
        const bool server_only = f.action == FaultAction::flood || f.action == FaultAction::snapshot ||
                                 f.action == FaultAction::observe;
        if (server_only && f.target != "redis")
            r.fail(o.path("target"), fmt::format("{} acts on \"redis\" (the lab's own server: add \"servers\")",
                                                 to_string(f.action)));
        out.push_back(std::move(f));
    }
    return out;
}

}  // namespace relab
