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

namespace {

using json = nlohmann::json;

// Field by field, by hand: these functions are private to this file (no ADL serializers in the
// relab namespace), and every field is named twice, once each way, next to each other.

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

const EnumName<DispatchOrder> kDispatchOrders[] = {{DispatchOrder::naive, "naive"}, {DispatchOrder::per_key, "per_key"}};
const EnumName<DispatchMark> kDispatchMarks[] = {{DispatchMark::row, "row"}, {DispatchMark::round, "round"}};
const EnumName<DispatchClaim> kDispatchClaims[] = {{DispatchClaim::none, "none"},
                                                   {DispatchClaim::skip_locked, "skip_locked"}};
const EnumName<StoreOutages> kStoreOutages[] = {{StoreOutages::none_scheduled, "none_scheduled"},
                                                {StoreOutages::scheduled, "scheduled"}};

const EnumName<StreamSpec::Ack> kStreamAcks[] = {{StreamSpec::Ack::each, "each"}, {StreamSpec::Ack::batch, "batch"}};

json to(const StreamSpec& s) {
    return {{"key", s.key},
            {"group", s.group},
            {"read_count", s.read_count},
            {"block_ms", s.block_ms},
            {"quiet_ms", s.quiet_ms},
            {"deadline_ms", s.deadline_ms},
            {"ack", enum_name(s.ack, kStreamAcks)}};
}
StreamSpec stream_from(const json& j) {
    StreamSpec s;
    read(j, "key", s.key);
    read(j, "group", s.group);
    read(j, "read_count", s.read_count);
    read(j, "block_ms", s.block_ms);
    read(j, "quiet_ms", s.quiet_ms);
    read(j, "deadline_ms", s.deadline_ms);
    read_enum(j, "ack", s.ack, kStreamAcks);
    return s;
}

json to(const EventSpec& e) {
    json j = {{"order", e.order}, {"type", e.type}, {"version", e.version}, {"at_ms", e.at_ms}, {"cost_us", e.cost_us},
              {"fails", e.fails}};
    // P4's events only: the others' settings stay as they were.
    if (e.delta) j["delta"] = *e.delta;
    if (e.amount) j["amount"] = *e.amount;
    return j;
}
EventSpec event_from(const json& j) {
    EventSpec e;
    read(j, "order", e.order);
    read(j, "type", e.type);
    read(j, "version", e.version);
    read(j, "at_ms", e.at_ms);
    read(j, "cost_us", e.cost_us);
    if (j.contains("delta")) read(j, "delta", e.delta.emplace());
    if (j.contains("amount")) read(j, "amount", e.amount.emplace());
    read(j, "fails", e.fails);
    return e;
}

json to(const WriteSpec& w) {
    return {{"mode", enum_name(w.mode, k_write_modes)},
            {"version_source", enum_name(w.version_source, k_version_sources)},
            {"side_effect", w.side_effect},
            {"dedupe", enum_name(w.dedupe, k_write_dedupes)},
            {"commit", enum_name(w.commit, k_write_commits)},
            {"isolation", enum_name(w.isolation, k_write_isolations)},
            {"serialization_retries", w.serialization_retries}};
}
WriteSpec write_from(const json& j) {
    WriteSpec w;
    read_enum(j, "mode", w.mode, k_write_modes);
    read_enum(j, "version_source", w.version_source, k_version_sources);
    read(j, "side_effect", w.side_effect);
    read_enum(j, "dedupe", w.dedupe, k_write_dedupes);
    read_enum(j, "commit", w.commit, k_write_commits);
    read_enum(j, "isolation", w.isolation, k_write_isolations);
    read(j, "serialization_retries", w.serialization_retries);
    return w;
}

json to(const LockSpec& l) {
    return {{"enabled", l.enabled},         {"key", l.key},
            {"ttl_ms", l.ttl_ms},           {"retry_ms", l.retry_ms},
            {"skew_min_ms", l.skew_min_ms}, {"skew_max_ms", l.skew_max_ms}};
}
LockSpec lock_from(const json& j) {
    LockSpec l;
    read(j, "enabled", l.enabled);
    read(j, "key", l.key);
    read(j, "ttl_ms", l.ttl_ms);
    read(j, "retry_ms", l.retry_ms);
    read(j, "skew_min_ms", l.skew_min_ms);
    read(j, "skew_max_ms", l.skew_max_ms);
    return l;
}

const EnumName<BufferSpec::Late> kBufferLate[] = {{BufferSpec::Late::drop, "drop"}, {BufferSpec::Late::apply, "apply"}};

const EnumName<ShardSpec::By> kShardBy[] = {{ShardSpec::By::order, "order"}, {ShardSpec::By::round_robin, "round_robin"}};

json to(const ShardSpec& s) {
    return {{"enabled", s.enabled},         {"streams", s.streams},
            {"key_format", s.key_format},   {"by", enum_name(s.by, kShardBy)},
            {"reshard_to", s.reshard_to},   {"reshard_after_events", s.reshard_after_events},
            {"drain", s.drain},             {"drain_poll_ms", s.drain_poll_ms},
            {"cluster_replicas", s.cluster_replicas}, {"cluster_node_timeout_ms", s.cluster_node_timeout_ms},
            {"cluster_full_coverage", s.cluster_full_coverage}};
}
ShardSpec shard_from(const json& j) {
    ShardSpec s;
    read(j, "enabled", s.enabled);
    read(j, "streams", s.streams);
    read(j, "key_format", s.key_format);
    read_enum(j, "by", s.by, kShardBy);
    read(j, "reshard_to", s.reshard_to);
    read(j, "reshard_after_events", s.reshard_after_events);
    read(j, "drain", s.drain);
    read(j, "drain_poll_ms", s.drain_poll_ms);
    read(j, "cluster_replicas", s.cluster_replicas);
    read(j, "cluster_node_timeout_ms", s.cluster_node_timeout_ms);
    read(j, "cluster_full_coverage", s.cluster_full_coverage);
    return s;
}

json to(const BufferSpec& b) {
    return {{"enabled", b.enabled}, {"gap_timeout_ms", b.gap_timeout_ms}, {"late", enum_name(b.late, kBufferLate)}};
}
BufferSpec buffer_from(const json& j) {
    BufferSpec b;
    read(j, "enabled", b.enabled);
    read(j, "gap_timeout_ms", b.gap_timeout_ms);
    read_enum(j, "late", b.late, kBufferLate);
    return b;
}

const EnumName<FanoutSpec::Dispatch> kFanoutDispatch[] = {{FanoutSpec::Dispatch::per_key, "per_key"},
                                                          {FanoutSpec::Dispatch::any_worker, "any_worker"}};

json to(const FanoutSpec& f) {
    return {{"enabled", f.enabled},
            {"workers", f.workers},
            {"poll_ms", f.poll_ms},
            {"dispatch", enum_name(f.dispatch, kFanoutDispatch)}};
}
FanoutSpec fanout_from(const json& j) {
    FanoutSpec f;
    read(j, "enabled", f.enabled);
    read(j, "workers", f.workers);
    read(j, "poll_ms", f.poll_ms);
    read_enum(j, "dispatch", f.dispatch, kFanoutDispatch);
    return f;
}

json to(const PublishFailure& f) {
    return {{"order", f.order}, {"type", f.type}, {"attempts", f.attempts}, {"reply_lost", f.reply_lost}};
}
PublishFailure publish_failure_from(const json& j) {
    PublishFailure f;
    read(j, "order", f.order);
    read(j, "type", f.type);
    read(j, "attempts", f.attempts);
    read(j, "reply_lost", f.reply_lost);
    return f;
}

json to(const ProducerSpec& p) {
    return {{"backoff_ms", p.backoff_ms},
            {"backoff_multiplier", p.backoff_multiplier},
            {"max_attempts", p.max_attempts},
            {"failures", array_of(p.failures, [](const PublishFailure& f) { return to(f); })},
            {"idmp", p.idmp},
            {"wait_replicas", p.wait_replicas},
            {"wait_timeout_ms", p.wait_timeout_ms}};
}
ProducerSpec producer_from(const json& j) {
    ProducerSpec p;
    read(j, "backoff_ms", p.backoff_ms);
    read(j, "backoff_multiplier", p.backoff_multiplier);
    read(j, "max_attempts", p.max_attempts);
    read_array(j, "failures", p.failures, publish_failure_from);
    read(j, "idmp", p.idmp);
    read(j, "wait_replicas", p.wait_replicas);
    read(j, "wait_timeout_ms", p.wait_timeout_ms);
    return p;
}

json to(const OutboxFailure& f) { return {{"outbox_id", f.outbox_id}, {"attempts", f.attempts}}; }
OutboxFailure outbox_failure_from(const json& j) {
    OutboxFailure f;
    read(j, "outbox_id", f.outbox_id);
    read(j, "attempts", f.attempts);
    return f;
}

json to(const DispatcherSpec& d) {
    return {{"enabled", d.enabled},
            {"ordering", enum_name(d.ordering, kDispatchOrders)},
            {"poll_ms", d.poll_ms},
            {"max_rounds", d.max_rounds},
            {"failures", array_of(d.failures, [](const OutboxFailure& f) { return to(f); })},
            {"mark", enum_name(d.mark, kDispatchMarks)},
            {"publish_ms", d.publish_ms},
            {"count", d.count},
            {"claim", enum_name(d.claim, kDispatchClaims)}};
}
DispatcherSpec dispatcher_from(const json& j) {
    DispatcherSpec d;
    read(j, "enabled", d.enabled);
    read_enum(j, "ordering", d.ordering, kDispatchOrders);
    read(j, "poll_ms", d.poll_ms);
    read(j, "max_rounds", d.max_rounds);
    read_array(j, "failures", d.failures, outbox_failure_from);
    read_enum(j, "mark", d.mark, kDispatchMarks);
    read(j, "publish_ms", d.publish_ms);
    read(j, "count", d.count);
    read_enum(j, "claim", d.claim, kDispatchClaims);
    return d;
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

json role_settings_to_json(const RoleSettings& r) {
    return {{"stream", to(r.stream)},
            {"events", array_of(r.events, [](const EventSpec& e) { return to(e); })},
            {"job_cost_ms", r.job_cost_ms},
            {"consumers", r.consumers},
            {"write", to(r.write)},
            {"lock", to(r.lock)},
            {"buffer", to(r.buffer)},
            {"fanout", to(r.fanout)},
            {"producer", to(r.producer)},
            {"dispatcher", to(r.dispatcher)},
            {"shard", to(r.shard)},
            {"recovery", recovery_to_json(r.recovery)},
            {"redis_faults_scheduled", r.redis_faults_scheduled},
            {"postgres_faults_scheduled", r.postgres_faults_scheduled},
            {"idem_clients", array_of(r.idem_clients, [](const IdemClient& c) { return to(c); })},
            {"idem_middleware", to(r.idem_middleware)},
            {"idem_store_outages", enum_name(r.idem_store_outages, kStoreOutages)}};
}

RoleSettings role_settings_from_json(const json& j) {
    RoleSettings r;
    r.stream = stream_from(sub(j, "stream"));
    read_array(j, "events", r.events, event_from);
    read(j, "job_cost_ms", r.job_cost_ms);
    read(j, "consumers", r.consumers);
    r.write = write_from(sub(j, "write"));
    r.lock = lock_from(sub(j, "lock"));
    r.buffer = buffer_from(sub(j, "buffer"));
    r.fanout = fanout_from(sub(j, "fanout"));
    r.producer = producer_from(sub(j, "producer"));
    r.dispatcher = dispatcher_from(sub(j, "dispatcher"));
    r.shard = shard_from(sub(j, "shard"));
    r.recovery = recovery_from_json(sub(j, "recovery"));
    read(j, "redis_faults_scheduled", r.redis_faults_scheduled);
    read(j, "postgres_faults_scheduled", r.postgres_faults_scheduled);
    read_array(j, "idem_clients", r.idem_clients, client_from);
    r.idem_middleware = middleware_from(sub(j, "idem_middleware"));
    read_enum(j, "idem_store_outages", r.idem_store_outages, kStoreOutages);
    return r;
}

}  // namespace relab
