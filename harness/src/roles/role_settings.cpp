#include "roles/role_settings.h"

#include <optional>
#include <stdexcept>

#include "roles/roles.h"

namespace relab {

RoleSettings role_settings(const Scenario& s) {
    RoleSettings r;
    r.stream = s.stream;
    r.events = s.events;
    r.job_cost_ms = s.job_cost_ms;
    r.consumers = s.consumers;
    r.write = s.write;
    r.lock = s.lock;
    r.buffer = s.buffer;
    r.fanout = s.fanout;
    r.producer = s.producer;
    r.dispatcher = s.dispatcher;
    r.shard = s.shard;
    r.recovery = s.recovery;
    r.redis_faults_scheduled = redis_faults_scheduled(s);
    r.postgres_faults_scheduled = postgres_faults_scheduled(s);
    r.idem_clients = s.idem.clients;
    r.idem_middleware = s.idem.middleware;
    r.idem_store_outages = r.redis_faults_scheduled ? StoreOutages::scheduled : StoreOutages::none_scheduled;
    return r;
}

using json = nlohmann::json;

namespace {

// The idempotency clients and middleware, field by field; every other part of the settings is
// written and read by its description (roles/role_settings.h).

template <class T>
void read(const json& j, const char* name, T& out) {
    if (!j.is_object() || !j.contains(name))
        throw std::invalid_argument(std::string("role settings: missing field '") + name + "'");
    try {
        j.at(name).get_to(out);
    } catch (const json::exception& e) {
        throw std::invalid_argument(std::string("role settings: field '") + name + "': " + e.what());
    }
}

// The object or array under `name`, which must be there.
const json& sub(const json& j, const char* name) {
    if (!j.is_object() || !j.contains(name))
        throw std::invalid_argument(std::string("role settings: missing field '") + name + "'");
    return j.at(name);
}

template <class T>
void read_optional(const json& j, const char* name, std::optional<T>& out) {
    if (!j.is_object() || !j.contains(name))
        throw std::invalid_argument(std::string("role settings: missing field '") + name + "'");
    if (j.at(name).is_null()) {
        out.reset();
        return;
    }
    T v{};
    read(j, name, v);
    out = std::move(v);
}

template <class T>
json optional_json(const std::optional<T>& o) {
    return o ? json(*o) : json(nullptr);
}

template <class T, class F>
json array_of(const std::vector<T>& items, F to) {
    json out = json::array();
    for (const auto& x : items) out.push_back(to(x));
    return out;
}

template <class T, class F>
void read_array(const json& j, const char* name, std::vector<T>& out, F from) {
    if (!j.is_object() || !j.contains(name) || !j.at(name).is_array())
        throw std::invalid_argument(std::string("role settings: missing array '") + name + "'");
    out.clear();
    for (const auto& x : j.at(name)) out.push_back(from(x));
}

// Enums by the names of their tables (util/enum_names.h): the scenario files' spelling.
template <class Table, class E>
std::string enum_name(E v, const Table& names) {
    return std::string(name_in(names, v));
}

template <class Table, class E>
void read_enum(const json& j, const char* name, E& out, const Table& names) {
    std::string text;
    read(j, name, text);
    const auto value = value_named(names, text);
    if (!value)
        throw std::invalid_argument(std::string("role settings: field '") + name + "': unknown value '" + text + "'");
    out = *value;
}

json to(const IdemRequest& q) {
    return {{"user_id", q.user_id},
            {"client_key", q.client_key},
            {"payload", q.payload},
            {"send_at_ms", q.send_at_ms},
            {"key_format", optional_json(q.key_format)},
            {"fail_attempts", q.fail_attempts},
            {"work_ms", optional_json(q.work_ms)},
            {"resend_after_fault", q.resend_after_fault}};
}
IdemRequest request_from(const json& j) {
    IdemRequest q;
    read(j, "user_id", q.user_id);
    read(j, "client_key", q.client_key);
    read(j, "payload", q.payload);
    read(j, "send_at_ms", q.send_at_ms);
    read_optional(j, "key_format", q.key_format);
    read(j, "fail_attempts", q.fail_attempts);
    read_optional(j, "work_ms", q.work_ms);
    read(j, "resend_after_fault", q.resend_after_fault);
    return q;
}

json to(const IdemClient& c) {
    return {{"name", c.name},
            {"requests", array_of(c.requests, [](const IdemRequest& q) { return to(q); })},
            {"retry",
             {{"on_codes", c.retry.on_codes}, {"every_ms", c.retry.every_ms}, {"max_attempts", c.retry.max_attempts}}},
            {"arrival_jitter_us", c.arrival_jitter_us}};
}
IdemClient client_from(const json& j) {
    IdemClient c;
    read(j, "name", c.name);
    read_array(j, "requests", c.requests, request_from);
    const json& retry = sub(j, "retry");
    read(retry, "on_codes", c.retry.on_codes);
    read(retry, "every_ms", c.retry.every_ms);
    read(retry, "max_attempts", c.retry.max_attempts);
    read(j, "arrival_jitter_us", c.arrival_jitter_us);
    return c;
}

json to(const IdemMiddlewareSpec& m) {
    return {{"key_format", m.key_format},
            {"claim_ttl_ms", m.claim_ttl_ms},
            {"done_ttl_ms", m.done_ttl_ms},
            {"done_keepttl", m.done_keepttl},
            {"check_owner", m.check_owner},
            {"release_on_error", m.release_on_error},
            {"work_ms", m.work_ms},
            {"wait_replicas", m.wait_replicas},
            {"wait_timeout_ms", m.wait_timeout_ms},
            {"wait_fail_closed", m.wait_fail_closed},
            {"claim", k_idem_claim_names[static_cast<size_t>(m.claim)]},
            {"add_get_gap_ms", m.add_get_gap_ms},
            {"accept_async", m.accept_async}};
}
IdemMiddlewareSpec middleware_from(const json& j) {
    IdemMiddlewareSpec m;
    read(j, "key_format", m.key_format);
    read(j, "claim_ttl_ms", m.claim_ttl_ms);
    read(j, "done_ttl_ms", m.done_ttl_ms);
    read(j, "done_keepttl", m.done_keepttl);
    read(j, "check_owner", m.check_owner);
    read(j, "release_on_error", m.release_on_error);
    read(j, "work_ms", m.work_ms);
    read(j, "wait_replicas", m.wait_replicas);
    read(j, "wait_timeout_ms", m.wait_timeout_ms);
    read(j, "wait_fail_closed", m.wait_fail_closed);
    std::string claim = k_idem_claim_names[0];
    read(j, "claim", claim);
    m.claim = claim == k_idem_claim_names[1] ? IdemClaim::add_get : IdemClaim::set_nx_get;
    read(j, "add_get_gap_ms", m.add_get_gap_ms);
    read(j, "accept_async", m.accept_async);
    return m;
}

}  // namespace

namespace desc {

// The idempotency clients and middleware as role settings carry them.
json Codec<IdemClient>::write(const IdemClient& c, Write) { return to(c); }
IdemClient Codec<IdemClient>::read(const Reader&, const json& v, const std::string&, const Limits&, Read) {
    return client_from(v);
}
json Codec<IdemMiddlewareSpec>::write(const IdemMiddlewareSpec& m, Write) { return to(m); }
IdemMiddlewareSpec Codec<IdemMiddlewareSpec>::read(const Reader&, const json& v, const std::string&, const Limits&, Read) {
    return middleware_from(v);
}

}  // namespace desc

json role_settings_to_json(const RoleSettings& r) { return desc::write_complete(r); }

RoleSettings role_settings_from_json(const json& j) {
    try {
        return desc::read_complete<RoleSettings>(j, "role settings");
    } catch (const ScenarioError& e) {
        throw std::invalid_argument(e.what());
    }
}

}  // namespace relab
