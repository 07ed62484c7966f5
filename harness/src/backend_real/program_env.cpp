#include "backend_real/program_env.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "roles/roles.h"
#include "roles/idem_client.h"

namespace relab {

namespace {

using Env = std::map<std::string, std::string>;

// RFC 3986's unreserved characters stay; everything else is %XX, so a password or a schema name
// cannot break the URL.
std::string url_escaped(const std::string& s) {
    std::string out;
    for (const unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
            out += static_cast<char>(c);
        else
            out += fmt::format("%{:02X}", c);
    }
    return out;
}

std::string upper(std::string s) {
    for (auto& c : s) c = std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::toupper(c)) : '_';
    return s;
}

void add_servers(Env& env, const RoleConfig& c) {
    const RedisEndpoint& r = c.redis;
    env["RELAB_REDIS_HOST"] = r.host;
    env["RELAB_REDIS_PORT"] = std::to_string(r.port);
    env["RELAB_REDIS_DB"] = std::to_string(r.db);
    env["RELAB_REDIS_PASSWORD"] = r.password;
    env["RELAB_REDIS_URL"] = fmt::format("redis://{}{}:{}/{}", r.password.empty() ? "" : ":" + url_escaped(r.password) + "@",
                                         r.host, r.port, r.db);
    env["RELAB_CLIENT_NAME"] = c.key_prefix + c.actor;
    env["RELAB_KEY_PREFIX"] = c.key_prefix;
    env["RELAB_STOP_KEY"] = c.key_prefix + kStopKey;
    const PgEndpoint& p = c.pg;
    const std::string app = program_application_name(c.actor);
    env["RELAB_PG_HOST"] = p.host;
    env["RELAB_PG_PORT"] = std::to_string(p.port);
    env["RELAB_PG_DBNAME"] = p.dbname;
    env["RELAB_PG_USER"] = p.user;
    env["RELAB_PG_PASSWORD"] = p.password;
    env["RELAB_PG_SCHEMA"] = c.schema;
    env["RELAB_PG_APPLICATION_NAME"] = app;
    const std::string auth = p.user.empty() ? "" : url_escaped(p.user) + (p.password.empty() ? "" : ":" + url_escaped(p.password)) + "@";
    env["RELAB_PG_URL"] = fmt::format("postgresql://{}{}:{}/{}?application_name={}&options={}", auth, p.host, p.port,
                                      url_escaped(p.dbname), url_escaped(app), url_escaped("-csearch_path=" + c.schema));
}

void add_stream(Env& env, const Scenario& s, const RoleConfig& c) {
    const StreamLab& flow = s.flow();
    env["RELAB_STREAM"] = c.key_prefix + flow.stream.key;
    env["RELAB_GROUP"] = flow.stream.group;
    env["RELAB_CONSUMER"] = c.actor;
    env["RELAB_CONSUMERS"] = std::to_string(flow.consumers);
    env["RELAB_READ_COUNT"] = std::to_string(flow.stream.read_count);
    env["RELAB_BLOCK_MS"] = std::to_string(flow.stream.block_ms);
    env["RELAB_TABLE"] = "tmp_orders";
    nlohmann::json costs = nlohmann::json::object();
    for (const auto& [type, ms] : flow.job_cost_ms) {
        costs[type] = ms;
        env["RELAB_JOB_COST_MS_" + upper(type)] = std::to_string(ms);
    }
    env["RELAB_JOB_COST_MS"] = costs.dump();
    env["RELAB_WRITE_MODE"] = to_string(flow.write.mode);
    env["RELAB_VERSION_SOURCE"] = to_string(flow.write.version_source);
    if (flow.lock.enabled) {
        env["RELAB_LOCK_KEY"] = c.key_prefix + flow.lock.key;
        env["RELAB_LOCK_TTL_MS"] = std::to_string(flow.lock.ttl_ms);
        env["RELAB_LOCK_RETRY_MS"] = std::to_string(flow.lock.retry_ms);
    }
    if (flow.recovery.pending_first) env["RELAB_PENDING_FIRST"] = "1";
    const auto& claim = flow.recovery.autoclaim;
    if (claim.enabled && !claim.in_reaper()) {  // each consumer claims in its loop; else relab's reaper does
        env["RELAB_AUTOCLAIM_MIN_IDLE_MS"] = std::to_string(claim.min_idle_ms);
        env["RELAB_AUTOCLAIM_EVERY_MS"] = std::to_string(claim.every_ms);
        env["RELAB_AUTOCLAIM_COUNT"] = std::to_string(claim.count);
    }
    nlohmann::json events = nlohmann::json::array();
    for (const auto& e : flow.events)
        events.push_back({{"order", e.order}, {"type", e.type}, {"version", e.version}, {"at_ms", e.at_ms}});
    env["RELAB_EVENTS"] = events.dump();
}

void add_idem(Env& env, const Scenario& s, const RoleConfig& c) {
    const IdemMiddlewareSpec& m = s.idem().middleware;
    env["RELAB_KEY_FORMAT"] = m.key_format;
    env["RELAB_CLAIM_TTL_MS"] = std::to_string(m.claim_ttl_ms);
    env["RELAB_DONE_TTL_MS"] = std::to_string(m.done_ttl_ms);
    env["RELAB_WORK_MS"] = std::to_string(m.work_ms);
    env["RELAB_READY_KEY"] = c.key_prefix + kIdemReadyKey + c.actor;
    env["RELAB_GO_KEY"] = c.key_prefix + kIdemGoKey;
    env["RELAB_ORDERS_TABLE"] = "orders";
    for (const auto& client : s.idem().clients) {
        if (client.name != c.actor) continue;
        nlohmann::json requests = nlohmann::json::array();
        for (const auto& q : idem_client_requests(client))
            requests.push_back({{"user_id", q.user_id},
                                {"client_key", q.client_key},
                                {"payload", q.payload},
                                {"send_at_ms", q.send_at_ms},
                                {"work_ms", q.work_ms.value_or(m.work_ms)}});
        env["RELAB_REQUESTS"] = requests.dump();
        env["RELAB_RETRY"] = nlohmann::json{{"on", client.retry.on_codes},
                                            {"every_ms", client.retry.every_ms},
                                            {"max_attempts", client.retry.max_attempts}}
                                 .dump();
    }
}

}  // namespace

std::string program_application_name(const std::string& actor) { return actor; }

std::map<std::string, std::string> program_env(const Scenario& s, const RoleConfig& c, const ExecSpec& e) {
    Env env;
    env["RELAB_ROLE"] = c.role;
    env["RELAB_ACTOR"] = c.actor;
    env["RELAB_TRIAL"] = std::to_string(c.trial);
    env["RELAB_SEED"] = std::to_string(c.seed);
    add_servers(env, c);
    if (c.role == "idem_client")
        add_idem(env, s, c);
    else
        add_stream(env, s, c);
    if (e.trace) env["RELAB_TRACE_FD"] = std::to_string(k_trace_fd);
    for (const auto& [k, v] : e.env) env[k] = v;
    return env;
}

std::vector<std::string> program_env_names(const std::string& role) {
    Scenario s;
    s.flow().job_cost_ms = {{"created", 1}};
    s.flow().lock.enabled = true;
    s.flow().recovery.pending_first = true;
    s.flow().recovery.autoclaim.enabled = true;
    s.flow().recovery.autoclaim.in = RecoverySpec::Autoclaim::In::consumers;
    IdemClient client;
    client.name = "A";
    s.idem().clients.push_back(client);
    RoleConfig c;
    c.role = role;
    c.actor = "A";
    std::vector<std::string> names;
    for (const auto& [k, v] : program_env(s, c, ExecSpec{}))
        if (k.rfind("RELAB_JOB_COST_MS_", 0) != 0) names.push_back(k);
    return names;
}

}  // namespace relab
