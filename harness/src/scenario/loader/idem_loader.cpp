// Loading an idempotency lab: its "idem" section walked from its description (idem/idem_spec.h),
// then what the lab's kind and the rest of the file decide (which parts apply, the lab's own servers
// and faults, the faults a resend waits for); and a session's Redis step.
#include "scenario/loader/idem_loader.h"

#include <algorithm>

#include <fmt/format.h>

#include "scenario/loader/exec_loader.h"
#include "scenario/loader/fault_loader.h"
#include "scenario/loader/servers_loader.h"
#include "util/check.h"

namespace relab::scenario_json {

namespace {

// An idempotency lab's faults: its targets are its clients and its own servers, and no repeat may
// wait for publishing roles it does not have.
void read_idem_faults(const Reader& r, const Object& top, Scenario& s) {
    std::vector<std::string> actors;
    for (const auto& c : s.idem().clients) actors.push_back(c.name);
    if (s.servers.own) actors.push_back("redis");
    if (s.servers.replica) actors.push_back("redis-replica");
    if (s.servers.cache) actors.push_back("redis-cache");
    s.faults = read_faults(r, top.at("faults"), top.path("faults"), actors);
    for (size_t i = 0; i < s.faults.size(); ++i)
        if (s.faults[i].trigger.until_published)
            r.fail(child(child(top.path("faults"), i), "until"),
                   "\"until\": \"published\" ends the repeats when a stream lab's publishing roles are done; "
                   "an idempotency lab's clients publish nothing: give \"count\"");
}

// The fields of "idem" that belong to a lab with clients: "servers" and "faults" only to say they
// moved to the top level, "program" read by exec_loader.h.
const std::vector<std::string> k_idem_also_fields = {"servers", "faults", "program"};

// A cluster lab or a benchmark runs no middleware and no clients: their fields would be ignored.
void refuse_idem_clients_fields(const Reader& r, const Object& o, LabKind kind) {
    if (sends_requests(kind)) return;
    const bool cluster = kind_row(kind).forms_cluster;
    for (const char* key : {"middleware", "layer4", "clients", "servers", "faults", "documented_duplicates",
                            "documented_duplicates_note", "documented_duplicates_note_vi", "program"})
        if (o.has(key))
            r.fail(o.path(key), cluster ? "does not apply to a cluster lab (\"cluster\"), which forms its own Redis "
                                          "Cluster and sends the claims itself"
                                        : "does not apply to a benchmark (\"benchmark\"), which measures the claim "
                                          "itself with one client and runs no middleware");
    if (cluster && o.has("benchmark"))
        r.fail(o.path("benchmark"), "a lab is a cluster lab (\"cluster\") or a benchmark, not both");
}

// "idem" of a lab with clients: its clients, and its program (the clients, middleware and business
// logic as one program per client, exec_spec.h).
void read_idem_clients(const Reader& r, const Object& o, Scenario& s) {
    if (o.has("servers"))
        r.fail(o.path("servers"), "moved to the top level: \"servers\" (the same field as a stream lab's)");
    if (s.idem().clients.empty())
        r.fail(o.path("clients"), "required field is missing (a lab needs clients, a benchmark or a cluster)");
    if (o.has("faults"))
        r.fail(o.path("faults"), "moved to the top level: \"faults\", the vocabulary every lab shares (crash_restart "
                                 "is {\"action\": \"restart\", \"target\": \"redis\"}; kill_client {\"action\": \"kill\", "
                                 "\"target\": CLIENT}; pause_replica a pause and a drop_link of \"redis-replica\")");
    if (o.has("program"))
        s.exec.by_role["idem_client"] = read_program(Object(r, o.at("program"), o.path("program"), with_exec_fields({})));
}

// "idem": the described section, the kind it makes the lab, and what that kind leaves out.
void read_idem_section(const Reader& r, const Object& top, Scenario& s) {
    for (const char* foreign : {"stream", "orders", "events", "job_cost_ms", "consumers", "write", "lock", "producer",
                                "dispatcher", "stream_line", "buffer", "fanout", "shard", "generate", "sim", "show_throughput"})
        if (top.has(foreign))
            r.fail(top.path(foreign), "does not apply to an idempotency workload (\"idem\"), which has clients instead");
    s.idem() = desc::read_file<IdemSpec>(r, top.at("idem"), top.path("idem"), k_idem_also_fields);
    // The loader marked the kind from the same section (lab_kind.h): what it holds must agree.
    RELAB_CHECK(kind_row(s.kind).forms_cluster == s.idem().cluster.has_value(), "an idem lab's kind and its cluster disagree");
    std::vector<std::string> known = desc::keys<IdemSpec>();
    known.insert(known.end(), k_idem_also_fields.begin(), k_idem_also_fields.end());
    const Object o(r, top.at("idem"), top.path("idem"), known);
    refuse_idem_clients_fields(r, o, s.kind);
    if (sends_requests(s.kind)) read_idem_clients(r, o, s);
}

// Every fault a request's resends wait for is one of the lab's.
void refuse_unknown_resend_faults(const Reader& r, const Object& top, const Scenario& s) {
    auto check = [&](const std::string& name, const std::string& path) {
        if (name.empty() || std::any_of(s.faults.begin(), s.faults.end(), [&](const FaultSpec& f) { return f.name == name; }))
            return;
        r.fail(path, "resend_after_fault names no fault: add \"name\": \"" + name + "\" to one under /faults");
    };
    const std::string clients = child(top.path("idem"), "clients");
    for (size_t i = 0; i < s.idem().clients.size(); ++i) {
        const IdemClient& c = s.idem().clients[i];
        for (size_t k = 0; k < c.requests.size(); ++k)
            check(c.requests[k].resend_after_fault, child(child(child(clients, i), "requests"), k));
        if (c.generate) check(c.generate->resend_after_fault, child(child(clients, i), "generate"));
    }
}

}  // namespace

// A step of a session with "client": "redis".
SessionStep read_redis_step(const Reader& r, const json& v, const std::string& path) {
    Object o(r, v, path,
             {"at_ms", "redis", "expect_reply", "expect_error", "expect_integer", "documented", "note", "note_vi",
              "project", "via"});
    SessionStep step;
    step.at_ms = o.opt_int("at_ms", -1, 0);
    RedisStep rs;
    rs.argv = r.strings(r.array(o.at("redis"), o.path("redis"), true), o.path("redis"));
    if (rs.argv[0].empty()) r.expected(child(o.path("redis"), 0), "a command name", o.at("redis")[0]);
    rs.expect_reply = o.maybe_string("expect_reply", false);
    rs.expect_error = o.maybe_string("expect_error");
    if (rs.expect_reply && rs.expect_error)
        r.fail(o.path("expect_error"), "a step cannot both expect a reply and an error");
    if (o.has("expect_integer")) {
        Object range(r, o.at("expect_integer"), o.path("expect_integer"), {"min", "max"});
        rs.expect_min = range.maybe_int("min", k_int64_min);
        rs.expect_max = range.maybe_int("max", k_int64_min);
        if (!rs.expect_min && !rs.expect_max)
            r.expected(range.path(), "an object with \"min\" and/or \"max\"", o.at("expect_integer"));
        if (rs.expect_min && rs.expect_max && *rs.expect_min > *rs.expect_max)
            r.fail(range.path("max"), fmt::format("expected max >= min ({}), got {}", *rs.expect_min, *rs.expect_max));
    }
    if (o.has("via")) {
        const std::string via = o.req_string("via");
        if (via != "redis-cli") r.fail(o.path("via"), "unknown; the one value is \"redis-cli\" (run the command through the redis-cli binary and compare what it prints)");
        rs.via_redis_cli = true;
    }
    rs.documented = o.opt_string("documented", "", false);
    rs.note = o.opt_string("note", "", false);
    rs.note_vi = o.opt_string("note_vi", rs.note, false);
    if (o.has("project")) {
        const Object po(r, o.at("project"), o.path("project"), {"keys", "label", "label_vi", "documented"});
        MemoryProjection p;
        p.keys = po.req_int("keys", 1);
        p.label = po.req_string("label");
        p.label_vi = po.opt_string("label_vi", p.label);
        p.documented = po.opt_string("documented", "", false);
        rs.project = std::move(p);
    }
    step.redis = std::move(rs);
    return step;
}

// Clients and a middleware (or a benchmark, or a cluster) instead of a stream.
void read_idem_lab(const Reader& r, const Object& top, Scenario& s) {
    read_idem_section(r, top, s);
    if (top.has("recovery")) r.fail(top.path("recovery"), "applies to stream labs (consumers and their pending entries)");
    if (top.has("soak")) r.fail(top.path("soak"), "applies to stream labs (a workload published into a consumer group)");
    if (!kind_row(s.kind).runs_roles)
        for (const char* key : {"faults", "servers"})
            if (top.has(key))
                r.fail(top.path(key), "applies to stream labs and idempotency labs with clients; a benchmark or "
                                      "a cluster lab starts its own servers and schedules no fault");
    if (top.has("servers"))
        s.servers = read_servers(Object(r, top.at("servers"), top.path("servers"), {"redis", "replica", "cache"}));
    if (top.has("faults")) read_idem_faults(r, top, s);
    refuse_unknown_resend_faults(r, top, s);
}

}  // namespace relab::scenario_json
