#include "scenario/idem/idem_loader.h"
#include "scenario/exec_loader.h"

#include <set>

namespace relab {


namespace scenario_json {

namespace {

bool opt_bool(const Object& o, const std::string& key, bool fallback) {
    if (!o.has(key)) return fallback;
    const json& v = o.at(key);
    if (!v.is_boolean()) o.reader().expected(o.path(key), "true or false", v);
    return v.get<bool>();
}

// The article's figure and the note on why the measured one differs, as every documented item has them.
template <class T>
void read_documented(const Object& o, T& item) {
    item.documented = o.opt_string("documented", "", false);
    item.note = o.opt_string("note", "", false);
    item.note_vi = o.opt_string("note_vi", item.note, false);
}

std::vector<int64_t> int_list(const Reader& r, const json& v, const std::string& path, int64_t lo, bool non_empty) {
    r.array(v, path, non_empty);
    std::vector<int64_t> out;
    for (size_t i = 0; i < v.size(); ++i) out.push_back(r.integer(v[i], child(path, i), lo, k_int64_max));
    return out;
}

MemoryProjection read_projection(const Object& o) {
    MemoryProjection p;
    p.keys = o.req_int("keys", 1);
    p.label = o.req_string("label");
    p.label_vi = o.opt_string("label_vi", p.label);
    p.documented = o.opt_string("documented", "", false);
    return p;
}

IdemRetry read_retry(const Object& o) {
    const Reader& r = o.reader();
    IdemRetry retry;
    if (o.has("on")) {
        retry.on_codes.clear();
        for (int64_t code : int_list(r, o.at("on"), o.path("on"), 100, false)) {
            if (code > 599) r.expected(o.path("on"), "HTTP status codes (100..599)", o.at("on"));
            retry.on_codes.push_back(static_cast<int>(code));
        }
    }
    retry.every_ms = o.opt_int("every_ms", retry.every_ms, 1);
    retry.max_attempts = static_cast<int>(o.opt_int("max_attempts", retry.max_attempts, 1, 1000));
    return retry;
}

std::string read_key_format(const Object& o, const std::string& key, const std::string& fallback) {
    std::string f = o.opt_string(key, fallback);
    if (f.find("{client_key}") == std::string::npos)
        o.reader().expected(o.path(key), "a key format containing {client_key}", o.at(key));
    return f;
}

IdemRequest read_request(const Object& o) {
    const Reader& r = o.reader();
    IdemRequest q;
    q.user_id = o.opt_int("user_id", q.user_id, 0);
    q.client_key = o.req_string("client_key");
    q.payload = o.opt_string("payload", q.payload, false);
    if (o.has("at_ms")) {
        const json& at = o.at("at_ms");
        q.send_at_ms = at.is_array() ? int_list(r, at, o.path("at_ms"), 0, true)
                                     : std::vector<int64_t>{r.integer(at, o.path("at_ms"), 0, k_int64_max)};
        if (!std::is_sorted(q.send_at_ms.begin(), q.send_at_ms.end()))
            r.expected(o.path("at_ms"), "send times in increasing order", at);
    }
    if (o.has("key_format")) q.key_format = read_key_format(o, "key_format", "");
    if (o.has("fail_attempts"))
        for (int64_t a : int_list(r, o.at("fail_attempts"), o.path("fail_attempts"), 1, false))
            q.fail_attempts.push_back(static_cast<int>(a));
    if (o.has("work_ms")) q.work_ms = o.req_int("work_ms", 0);
    q.resend_after_fault = o.opt_string("resend_after_fault", "");
    return q;
}

// {"count": N, "start_ms", "every_ms", "resend_after_ms": [...], "user_id", "payload",
// "resend_after_fault"}: N requests
// with keys "<client>-<i>", the i-th sent at start + i*every and resent after each delay.
std::vector<IdemRequest> generate_requests(const Object& o, const std::string& client) {
    const Reader& r = o.reader();
    const int64_t count = o.req_int("count", 1, 100000);
    const int64_t start = o.opt_int("start_ms", 0, 0);
    const int64_t every = o.opt_int("every_ms", 10, 0);
    std::vector<int64_t> resend;
    if (o.has("resend_after_ms")) resend = int_list(r, o.at("resend_after_ms"), o.path("resend_after_ms"), 1, false);
    std::sort(resend.begin(), resend.end());
    const int64_t user = o.opt_int("user_id", 7, 0);
    const std::string payload = o.opt_string("payload", IdemRequest{}.payload, false);
    const std::string after_fault = o.opt_string("resend_after_fault", "");
    std::vector<IdemRequest> out;
    for (int64_t i = 0; i < count; ++i) {
        IdemRequest q;
        q.user_id = user;
        q.client_key = fmt::format("{}-{}", client, i + 1);
        q.payload = payload;
        q.resend_after_fault = after_fault;
        const int64_t at = start + i * every;
        q.send_at_ms = {at};
        for (int64_t d : resend) q.send_at_ms.push_back(at + d);
        out.push_back(std::move(q));
    }
    return out;
}

IdemClient read_client(const Object& o) {
    const Reader& r = o.reader();
    IdemClient c;
    c.name = o.req_string("name");
    if (o.has("requests")) {
        const json& list = r.array(o.at("requests"), o.path("requests"), true);
        for (size_t i = 0; i < list.size(); ++i)
            c.requests.push_back(read_request(Object(r, list[i], child(o.path("requests"), i),
                                                     {"user_id", "client_key", "payload", "at_ms", "key_format",
                                                      "fail_attempts", "work_ms", "resend_after_fault"})));
    }
    if (o.has("generate")) {
        auto more = generate_requests(Object(r, o.at("generate"), o.path("generate"),
                                             {"count", "start_ms", "every_ms", "resend_after_ms", "user_id", "payload",
                                              "resend_after_fault"}),
                                      c.name);
        c.requests.insert(c.requests.end(), more.begin(), more.end());
    }
    if (c.requests.empty()) r.fail(o.path(), "a client needs \"requests\" or \"generate\"");
    if (o.has("retry"))
        c.retry = read_retry(Object(r, o.at("retry"), o.path("retry"), {"on", "every_ms", "max_attempts"}));
    c.arrival_jitter_us = o.opt_int("arrival_jitter_us", 0, 0, 60'000'000);
    return c;
}

IdemMiddlewareSpec read_middleware(const Object& o) {
    const Reader& r = o.reader();
    IdemMiddlewareSpec m;
    m.key_format = read_key_format(o, "key_format", m.key_format);
    m.claim_ttl_ms = o.opt_int("claim_ttl_ms", m.claim_ttl_ms, 1);
    m.done_ttl_ms = o.opt_int("done_ttl_ms", m.done_ttl_ms, 1);
    m.done_keepttl = opt_bool(o, "done_keepttl", m.done_keepttl);
    m.check_owner = opt_bool(o, "check_owner", m.check_owner);
    m.release_on_error = opt_bool(o, "release_on_error", m.release_on_error);
    m.work_ms = o.opt_int("work_ms", m.work_ms, 0);
    const std::vector<std::string> claims(std::begin(k_idem_claim_names), std::end(k_idem_claim_names));
    const std::string claim = o.opt_choice("claim", claims.front(), claims);
    m.claim = static_cast<IdemClaim>(std::find(claims.begin(), claims.end(), claim) - claims.begin());
    m.add_get_gap_ms = o.opt_int("add_get_gap_ms", m.add_get_gap_ms, 0, 3600000);
    if (o.has("add_get_gap_ms") && m.claim != IdemClaim::add_get)
        r.fail(o.path("add_get_gap_ms"), "applies to \"claim\": \"add_get\" only (the pause between add and get)");
    m.accept_async = opt_bool(o, "accept_async", m.accept_async);
    if (o.has("wait")) {
        Object w(r, o.at("wait"), o.path("wait"), {"replicas", "timeout_ms", "fail_closed"});
        m.wait_replicas = w.req_int("replicas", 1, 100);
        m.wait_timeout_ms = w.opt_int("timeout_ms", m.wait_timeout_ms, 1);
        m.wait_fail_closed = opt_bool(w, "fail_closed", m.wait_fail_closed);
    }
    return m;
}


IdemBenchmark read_benchmark(const Object& o) {
    IdemBenchmark b;
    b.duration_ms = o.opt_int("duration_ms", b.duration_ms, 100, 60000);
    b.redis_benchmark_requests = o.opt_int("redis_benchmark_requests", b.redis_benchmark_requests, 100, 10000000);
    b.pgbench_seconds = o.opt_int("pgbench_seconds", b.pgbench_seconds, 1, 60);
    b.documented_fsync_ratio = static_cast<double>(o.opt_int("documented_fsync_ratio", 200, 1));
    b.documented_async_ratio = static_cast<double>(o.opt_int("documented_async_ratio", 10, 1));
    b.tools = opt_bool(o, "tools", b.tools);
    return b;
}

ClusterKeyPair read_pair(const Object& o) {
    const Reader& r = o.reader();
    ClusterKeyPair p;
    p.name = o.req_string("name");
    p.keys = r.strings(r.array(o.at("keys"), o.path("keys"), true), o.path("keys"));
    if (p.keys.size() < 2) r.expected(o.path("keys"), "at least two key names (a script over one key needs no hash tag)", o.at("keys"));
    for (size_t i = 0; i < p.keys.size(); ++i)
        if (p.keys[i].empty()) r.expected(child(o.path("keys"), i), "a non-empty key name", o.at("keys")[i]);
    read_documented(o, p);
    return p;
}

ClusterLoad read_load(const Object& o) {
    ClusterLoad l;
    l.name = o.req_string("name");
    l.key_format = read_key_format(o, "key_format", "");
    read_documented(o, l);
    return l;
}

IdemCluster read_cluster(const Object& o) {
    const Reader& r = o.reader();
    IdemCluster c;
    c.masters = static_cast<int>(o.opt_int("masters", c.masters, 1, 16));
    c.node_timeout_ms = o.opt_int("node_timeout_ms", c.node_timeout_ms, 100, 600000);
    std::set<std::string> names;
    if (o.has("pairs")) {
        const json& list = r.array(o.at("pairs"), o.path("pairs"), true);
        for (size_t i = 0; i < list.size(); ++i) {
            Object po(r, list[i], child(o.path("pairs"), i), {"name", "keys", "documented", "note", "note_vi"});
            c.pairs.push_back(read_pair(po));
            if (!names.insert(c.pairs.back().name).second)
                r.fail(po.path("name"), "duplicate pair name \"" + c.pairs.back().name + "\"");
        }
    }
    c.script = o.opt_string("script", "");
    if (o.has("script_args")) c.script_args = r.strings(o.at("script_args"), o.path("script_args"));
    if (c.script.empty() && o.has("script_args")) r.fail(o.path("script_args"), "arguments without a \"script\"");
    if (!c.script.empty() && c.pairs.empty())
        r.fail(o.path("script"), "the script runs over the keys of each pair: add \"pairs\"");
    if (o.has("hot_user")) {
        Object h(r, o.at("hot_user"), o.path("hot_user"), {"claims", "loads"});
        c.claims = h.req_int("claims", 1, 1000000);
        const json& list = r.array(h.at("loads"), h.path("loads"), true);
        names.clear();
        for (size_t i = 0; i < list.size(); ++i) {
            Object lo(r, list[i], child(h.path("loads"), i), {"name", "key_format", "documented", "note", "note_vi"});
            if (!lo.has("key_format")) r.fail(lo.path("key_format"), "required field is missing");
            c.loads.push_back(read_load(lo));
            if (!names.insert(c.loads.back().name).second)
                r.fail(lo.path("name"), "duplicate load name \"" + c.loads.back().name + "\"");
        }
    }
    if (c.pairs.empty() && c.loads.empty()) r.fail(o.path(), "a cluster lab needs \"pairs\" or \"hot_user\" (or both)");
    return c;
}

}  // namespace

LabServers read_servers(const Object& o) {
    const Reader& r = o.reader();
    LabServers s;
    s.own = true;
    if (o.has("redis")) {
        const json& cfg = o.at("redis");
        if (!cfg.is_object()) r.expected(o.path("redis"), "an object of redis-server settings (name: value)", cfg);
        for (const auto& [name, value] : cfg.items())
            s.redis_config[name] = r.string(value, child(o.path("redis"), name), false);
    }
    s.replica = opt_bool(o, "replica", false);
    if (o.has("cache")) {
        const json& cfg = o.at("cache");
        if (!cfg.is_object()) r.expected(o.path("cache"), "an object of the cache redis-server's settings (name: value)", cfg);
        s.cache = true;
        for (const auto& [name, value] : cfg.items())
            s.cache_config[name] = r.string(value, child(o.path("cache"), name), false);
    }
    if (o.has("postgres")) {
        const json& cfg = o.at("postgres");
        if (!cfg.is_object()) r.expected(o.path("postgres"), "an object of PostgreSQL settings (name: value)", cfg);
        s.postgres = true;
        for (const auto& [name, value] : cfg.items())
            s.postgres_config[name] = r.string(value, child(o.path("postgres"), name), false);
    }
    return s;
}


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
    read_documented(o, rs);
    if (o.has("project"))
        rs.project = read_projection(Object(r, o.at("project"), o.path("project"), {"keys", "label", "label_vi", "documented"}));
    step.redis = std::move(rs);
    return step;
}

namespace {

// "idem" of an idem_clients lab: the middleware, the clients and their requests, the lab's own
// servers and its faults.
void read_idem_clients(const Reader& r, const Object& o, IdemSpec& idem) {
    if (o.has("middleware"))
        idem.middleware = read_middleware(Object(r, o.at("middleware"), o.path("middleware"),
                                                 {"key_format", "claim_ttl_ms", "done_ttl_ms", "done_keepttl",
                                                  "check_owner", "release_on_error", "work_ms", "wait", "claim",
                                                  "add_get_gap_ms", "accept_async"}));
    idem.layer4 = opt_bool(o, "layer4", false);
    if (o.has("servers"))
        r.fail(o.path("servers"), "moved to the top level: \"servers\" (the same field as a stream lab's)");
    std::set<std::string> names;
    if (o.has("clients")) {
        const json& list = r.array(o.at("clients"), o.path("clients"), true);
        for (size_t i = 0; i < list.size(); ++i) {
            Object co(r, list[i], child(o.path("clients"), i), {"name", "requests", "generate", "retry", "arrival_jitter_us"});
            IdemClient c = read_client(co);
            if (!names.insert(c.name).second) r.fail(co.path("name"), "duplicate client name \"" + c.name + "\"");
            idem.clients.push_back(std::move(c));
        }
    }
    if (idem.clients.empty())
        r.fail(o.path("clients"), "required field is missing (a lab needs clients, a benchmark or a cluster)");
    if (o.has("faults"))
        r.fail(o.path("faults"), "moved to the top level: \"faults\", the vocabulary every lab shares (crash_restart "
                                 "is {\"action\": \"restart\", \"target\": \"redis\"}; kill_client {\"action\": \"kill\", "
                                 "\"target\": CLIENT}; pause_replica a pause and a drop_link of \"redis-replica\")");
    idem.documented_duplicates = o.opt_string("documented_duplicates", "", false);
    idem.documented_duplicates_note = o.opt_string("documented_duplicates_note", "", false);
    idem.documented_duplicates_note_vi =
        o.opt_string("documented_duplicates_note_vi", idem.documented_duplicates_note, false);
}

}  // namespace

void read_idem_workload(const Object& top, Scenario& s) {
    const Reader& r = top.reader();
    for (const char* foreign : {"stream", "orders", "events", "job_cost_ms", "consumers", "write", "lock", "producer",
                                "dispatcher", "stream_line"})
        if (top.has(foreign))
            r.fail(top.path(foreign), "does not apply to an idempotency workload (\"idem\"), which has clients instead");
    Object o(r, top.at("idem"), top.path("idem"),
             {"middleware", "layer4", "clients", "servers", "faults", "benchmark", "cluster", "scaling", "scaling_vi",
              "documented_duplicates", "documented_duplicates_note", "documented_duplicates_note_vi", "program"});
    IdemSpec& idem = s.idem;
    // The kind, from what "idem" holds; the clients' fields do not apply to the other two.
    const std::vector<const char*> clients_fields = {"middleware", "layer4", "clients", "servers", "faults",
                                                     "documented_duplicates", "documented_duplicates_note",
                                                     "documented_duplicates_note_vi", "program"};
    s.kind = o.has("cluster") ? LabKind::idem_cluster : o.has("benchmark") ? LabKind::idem_benchmark : LabKind::idem_clients;
    switch (s.kind) {
        case LabKind::idem_cluster:
            for (const char* foreign : clients_fields)
                if (o.has(foreign))
                    r.fail(o.path(foreign), "does not apply to a cluster lab (\"cluster\"), which forms its own Redis "
                                            "Cluster and sends the claims itself");
            if (o.has("benchmark"))
                r.fail(o.path("benchmark"), "a lab is a cluster lab (\"cluster\") or a benchmark, not both");
            idem.cluster = read_cluster(Object(r, o.at("cluster"), o.path("cluster"),
                                               {"masters", "node_timeout_ms", "pairs", "script", "script_args", "hot_user"}));
            break;
        case LabKind::idem_benchmark:
            for (const char* foreign : clients_fields)
                if (o.has(foreign))
                    r.fail(o.path(foreign), "does not apply to a benchmark (\"benchmark\"), which measures the claim "
                                            "itself with one client and runs no middleware");
            idem.benchmark = read_benchmark(Object(r, o.at("benchmark"), o.path("benchmark"),
                                                   {"duration_ms", "redis_benchmark_requests", "pgbench_seconds", "tools",
                                                    "documented_fsync_ratio", "documented_async_ratio"}));
            break;
        case LabKind::idem_clients:
            read_idem_clients(r, o, idem);
            // The clients, middleware and business logic as one program per client (exec_spec.h).
            if (o.has("program"))
                s.exec.by_role["idem_client"] = read_program(Object(r, o.at("program"), o.path("program"),
                                                                  with_exec_fields({})));
            break;
        case LabKind::stream:
        case LabKind::sessions: throw std::logic_error("read_idem_workload: not an idempotency kind");
    }
    idem.scaling = o.opt_string("scaling", "", false);
    idem.scaling_vi = o.opt_string("scaling_vi", idem.scaling, false);
}

}  // namespace scenario_json

}  // namespace relab
