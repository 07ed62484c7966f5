// A stream lab's parts in the order read_stream_lab reads them; each refuse_* names a combination
// the lab's roles cannot run.
#include "scenario/loader/stream_loader.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "scenario/generate.h"
#include "scenario/loader/exec_loader.h"
#include "scenario/loader/fault_loader.h"
#include "scenario/loader/servers_loader.h"
#include "util/check.h"

namespace relab::scenario_json {

namespace {

// The orders as described (stream_spec.h), each id once.
std::vector<OrderSpec> read_orders(const Reader& r, const json& v, const std::string& path) {
    std::vector<OrderSpec> orders = desc::read_value<std::vector<OrderSpec>>(r, v, path, {.min_items = 1});
    std::map<int64_t, size_t> seen;  // id -> index of its first occurrence
    for (size_t i = 0; i < orders.size(); ++i) {
        auto [it, inserted] = seen.emplace(orders[i].id, i);
        if (!inserted)
            r.fail(child(child(path, i), "id"), fmt::format("duplicate order id {} (first at {})", orders[i].id,
                                                            child(child(path, it->second), "id")));
    }
    return orders;
}

// P4: the amount each event carries, its order's changes added in version order from 0, as the
// source applies them. Every event of such a lab has a delta, an order's versions are distinct, and
// the source's own history never takes an amount below 0 (only a late change may be refused).
void carry_amounts(const Reader& r, const std::string& path, std::vector<EventSpec>& events) {
    const auto with_delta = std::count_if(events.begin(), events.end(), [](const EventSpec& e) { return e.delta.has_value(); });
    if (with_delta == 0) return;
    std::map<int64_t, std::map<int64_t, size_t>> by_order;  // order -> version -> index
    for (size_t i = 0; i < events.size(); ++i) {
        if (!events[i].delta)
            r.fail(child(child(path, i), "delta"), "some events carry a \"delta\": give every event one (0 for none)");
        if (!by_order[events[i].order].emplace(events[i].version, i).second)
            r.fail(child(child(path, i), "version"),
                   fmt::format("events with a \"delta\" carry their order's amount by version: order {} has version {} twice",
                               events[i].order, events[i].version));
    }
    for (auto& [order, versions] : by_order) {
        int64_t amount = 0;
        for (const auto& [version, i] : versions) {
            amount += *events[i].delta;
            if (amount < 0)
                r.fail(child(child(path, i), "delta"),
                       fmt::format("order {}'s amount would be {} after version {}: the source's own history may not "
                                   "take it below 0", order, amount, version));
            events[i].amount = amount;
        }
    }
}

// The events as described, each of one of the lab's orders, with the amounts P4's deltas carry.
std::vector<EventSpec> read_events(const Reader& r, const json& v, const std::string& path,
                                   const std::vector<OrderSpec>& orders) {
    std::vector<EventSpec> events = desc::read_value<std::vector<EventSpec>>(r, v, path, {.min_items = 1});
    std::vector<std::string> order_ids;
    for (const auto& order : orders) order_ids.push_back(std::to_string(order.id));
    for (size_t i = 0; i < events.size(); ++i) {
        const int64_t order = events[i].order;
        if (std::none_of(orders.begin(), orders.end(), [&](const OrderSpec& s) { return s.id == order; }))
            r.fail(child(child(path, i), "order"),
                   fmt::format("expected one of the orders' ids ({}), got {}", joined(order_ids), order));
    }
    carry_amounts(r, path, events);
    return events;
}

std::map<std::string, int64_t> read_job_cost(const Reader& r, const json& v, const std::string& path,
                                             const std::vector<EventSpec>& events) {
    if (!v.is_object()) r.expected(path, "an object mapping event type to milliseconds", v);
    std::vector<std::string> types;
    for (const auto& e : events)
        if (std::find(types.begin(), types.end(), e.type) == types.end()) types.push_back(e.type);
    std::map<std::string, int64_t> costs;
    for (const auto& [type, cost] : v.items()) {
        // A cost for a type no event has would silently cost nothing: most likely a typo.
        if (std::find(types.begin(), types.end(), type) == types.end())
            r.fail(child(path, type), "no event has this type; event types are: " + quoted_list(types));
        costs[type] = r.integer(cost, child(path, type), 0, k_int64_max);
    }
    return costs;
}

// The described section `key` of the top level into `out`, when the file gives it.
template <class S>
void read_section(const Object& top, const std::string& key, S& out, const std::vector<std::string>& also = {}) {
    if (top.has(key)) out = desc::read_file<S>(top.reader(), top.at(key), top.path(key), also);
}

// The stream, the orders and events (given or generated), the job costs and the consumers.
void read_stream_workload(const Reader& r, const Object& top, Scenario& s) {
    StreamLab& flow = s.flow();
    read_section(top, "stream", flow.stream);
    if (top.has("generate")) {
        for (const char* key : {"orders", "events"})
            if (top.has(key))
                r.fail(top.path(key), std::string("\"generate\" makes the lab's orders and events; drop \"") + key +
                                          "\" or \"generate\"");
        flow.generate = desc::read_file<GenerateSpec>(r, top.at("generate"), top.path("generate"));
        GeneratedWorkload w = expand_generate(*flow.generate, s.seed);
        flow.orders = std::move(w.orders);
        flow.events = std::move(w.events);
        flow.load = std::move(w.load);
    } else {
        flow.orders = read_orders(r, top.at("orders"), top.path("orders"));
        flow.events = read_events(r, top.at("events"), top.path("events"), flow.orders);
    }
    if (top.has("job_cost_ms")) flow.job_cost_ms = read_job_cost(r, top.at("job_cost_ms"), top.path("job_cost_ms"), flow.events);
    read_consumers(top, s);  // a count, or a program (exec_loader.h)
}

// Only a statement that inserts creates the row of an absent order; the inbox's transaction and a
// batch hold UPDATEs.
bool writes_update_only(const Scenario& s) { return write_mode_info(s.flow().write.mode).statement == WriteStatement::update; }

// write.isolation's transaction holds the job and one UPDATE: what runs a transaction of its own
// (the inbox, a batch) or a statement after the COMMIT (a side effect) has no place in it.
void refuse_isolation_conflicts(const Reader& r, const Object& top, const Scenario& s) {
    const StreamLab& flow = s.flow();
    if (flow.write.isolation == WriteIsolation::none) return;
    const std::string at = child(top.path("write"), "isolation");
    auto refuse = [&](const std::string& what) {
        r.fail(at, "\"" + to_string(flow.write.isolation) + "\" runs each job in one transaction around its UPDATE; " +
                       what + " (leave \"isolation\" out)");
    };
    if (!writes_update_only(s))
        refuse("it takes mode \"plain\", \"cas\", \"delta\" or \"cas_state\", got mode \"" + to_string(flow.write.mode) + "\"");
    else if (flow.write.dedupe != WriteDedupe::none)
        refuse("the inbox dedupe runs a transaction of its own");
    else if (flow.write.commit == WriteSpec::Commit::batch)
        refuse("\"commit\": \"batch\" runs one transaction per read");
    else if (flow.write.side_effect)
        refuse("a side effect is sent after the write, outside it");
}

// "write", and the orders and dedupe its mode cannot serve.
void read_stream_write(const Reader& r, const Object& top, Scenario& s) {
    StreamLab& flow = s.flow();
    read_section(top, "write", flow.write);
    const bool update_only = writes_update_only(s);
    for (size_t i = 0; i < flow.orders.size(); ++i)
        if (flow.orders[i].absent && update_only)
            r.fail(child(child(top.path("orders"), i), "absent"),
                   "an absent order is created by its first write: it needs \"write\": {\"mode\": \"upsert\"} "
                   "or \"insert_then_update\", got mode \"" + to_string(flow.write.mode) + "\"");
    if (write_mode_info(flow.write.mode).amount != AmountWrite::none && !carries_amounts(flow))
        r.fail(child(top.path("write"), "mode"), "mode \"" + to_string(flow.write.mode) +
                                                     "\" applies the amount events carry: give every event a \"delta\"");
    if (flow.write.dedupe != WriteDedupe::none && !update_only)
        r.fail(child(top.path("write"), "dedupe"), "the inbox dedupe wraps a plain or CAS write in its transaction, got mode \"" +
                                                       to_string(flow.write.mode) + "\"");
    refuse_isolation_conflicts(r, top, s);
}

// The lock around a job, the reorder buffer and the fanout to workers, and what of them excludes the other.
void read_job_wrappers(const Reader& r, const Object& top, Scenario& s) {
    StreamLab& flow = s.flow();
    read_section(top, "lock", flow.lock);
    read_section(top, "buffer", flow.buffer);
    if (flow.buffer.enabled) {
        if (flow.consumers != 1)
            r.fail(top.path("buffer"), fmt::format("a reorder buffer orders one consumer's events; with {} consumers "
                                                   "an order's events land in different buffers (use \"consumers\": 1)",
                                                   flow.consumers));
    }
    read_section(top, "fanout", flow.fanout);
    if (flow.fanout.enabled) {
        if (flow.buffer.enabled)
            r.fail(top.path("fanout"), "the reorder buffer runs in a consumer's own read loop; with \"fanout\" its "
                                       "workers apply the events (use one or the other)");
        if (flow.stream.ack == StreamSpec::Ack::batch)
            r.fail(top.path("fanout"), "with \"fanout\" each worker acknowledges its own job; \"stream\": "
                                       "{\"ack\": \"batch\"} acknowledges a consumer's whole read (use one or the other)");
    }
}

// One multi-statement query of UPDATEs per read: what else a job does per event (a lock around its
// write, an inbox transaction, a side effect after it) or a worker that applies events one by one
// has no place in it.
void refuse_batch_commit_conflicts(const Reader& r, const Object& top, const Scenario& s) {
    const StreamLab& flow = s.flow();
    if (flow.write.commit != WriteSpec::Commit::batch) return;
    const std::string at = child(top.path("write"), "commit");
    auto refuse = [&](const std::string& what) {
        r.fail(at, "\"batch\" sends the UPDATEs of one read as one transaction; " + what + " (use \"commit\": \"each\")");
    };
    if (!writes_update_only(s))
        refuse("it takes mode \"plain\" or \"cas\", got mode \"" + to_string(flow.write.mode) + "\"");
    else if (flow.write.dedupe != WriteDedupe::none)
        refuse("the inbox dedupe runs a transaction of its own per event");
    else if (flow.write.side_effect)
        refuse("a side effect is sent after each event's own write");
    else if (flow.lock.enabled)
        refuse("a lock is held around each event's own write");
    else if (flow.buffer.enabled)
        refuse("the reorder buffer applies held events one by one");
    else if (flow.fanout.enabled)
        refuse("with \"fanout\" the workers apply the events one by one");
}

// Every producer failure names an event of the lab, and every outbox failure one of its rows.
void refuse_unknown_failures(const Reader& r, const Object& top, const Scenario& s) {
    const StreamLab& flow = s.flow();
    for (size_t i = 0; i < flow.producer.failures.size(); ++i) {
        const PublishFailure& f = flow.producer.failures[i];
        const bool known = std::any_of(flow.events.begin(), flow.events.end(),
                                       [&](const EventSpec& e) { return e.order == f.order && e.type == f.type; });
        if (!known)
            r.fail(child(child(top.path("producer"), "failures"), i),
                   fmt::format("no event of order {} with type \"{}\"", f.order, f.type));
    }
    // Outbox ids are 1..N in the order of the events, one row per event.
    const auto rows = static_cast<int64_t>(flow.events.size());
    for (size_t i = 0; i < flow.dispatcher.failures.size(); ++i)
        if (flow.dispatcher.failures[i].outbox_id > rows)
            r.expected(child(child(child(top.path("dispatcher"), "failures"), i), "outbox_id"),
                       integer_range_text(1, rows), flow.dispatcher.failures[i].outbox_id);
}

// The dispatcher replaces the producer: what only the producer has does not apply beside it.
void refuse_dispatcher_conflicts(const Reader& r, const Object& top, const Scenario& s) {
    const StreamLab& flow = s.flow();
    if (carries_amounts(flow))
        r.fail(top.path("dispatcher"), "the outbox's rows carry no amount: events with a \"delta\" need the producer");
    for (size_t i = 0; i < flow.orders.size(); ++i)
        if (flow.orders[i].absent)
            r.fail(child(child(top.path("orders"), i), "absent"),
                   "the dispatcher's source app updates the order's source row, which an absent order "
                   "does not have");
    if (!flow.producer.failures.empty())
        r.fail(top.path("producer"),
               "producer failures do not apply with a dispatcher (it replaces the producer); "
               "schedule failures under /dispatcher/failures");
}

// A publishing role's section (its settings, or the user's program in its place).
template <class S>
void read_publisher(const Object& top, const std::string& role, S& spec, ExecRoles& exec) {
    if (!top.has(role)) return;
    read_section(top, role, spec, exec_field_names());
    if (top.at(role).is_null()) return;
    if (auto program = read_exec(Object(top.reader(), top.at(role), top.path(role), with_exec_fields(desc::keys<S>()))))
        exec.by_role[role] = std::move(*program);
}

// Who publishes: the producer (its retries, its IDMP) or an outbox dispatcher in its place.
void read_publishers(const Reader& r, const Object& top, Scenario& s) {
    StreamLab& flow = s.flow();
    read_publisher(top, "producer", flow.producer, s.exec);
    read_publisher(top, "dispatcher", flow.dispatcher, s.exec);
    if (flow.producer.idmp &&
        std::find(s.needs_features.begin(), s.needs_features.end(), "XADD IDMP") == s.needs_features.end())
        r.fail(child(top.path("producer"), "idmp"),
               "XADD ... IDMP needs Redis 8.6: add \"requires\": [\"XADD IDMP\"] so older servers skip the lab");
    refuse_unknown_failures(r, top, s);
    if (flow.dispatcher.enabled) refuse_dispatcher_conflicts(r, top, s);
}

// "shard": one consumer per shard on a Redis Cluster of the lab's own, and what it cannot run with.
void read_stream_shard(const Reader& r, const Object& top, Scenario& s) {
    StreamLab& flow = s.flow();
    read_section(top, "shard", flow.shard);
    if (!flow.shard.enabled) return;
    const auto events = static_cast<int64_t>(flow.events.size());
    if (flow.shard.reshard && events < 2)
        r.fail(child(child(top.path("shard"), "reshard"), "after_events"),
               "a reshard needs events on both sides of the switch: the lab has fewer than 2");
    if (flow.shard.reshard && flow.shard.reshard->after_events > events - 1)
        r.expected(child(child(top.path("shard"), "reshard"), "after_events"), integer_range_text(1, events - 1),
                   flow.shard.reshard->after_events);
    // One consumer per shard: the router decides the stream, the shard's consumer its order.
    if (top.has("consumers") && flow.consumers != flow.shard.shard_count())
        r.fail(top.path("consumers"),
               fmt::format("a sharded lab has one consumer per shard ({}); drop \"consumers\"", flow.shard.shard_count()));
    flow.consumers = flow.shard.shard_count();
    const char* unsupported = flow.dispatcher.enabled ? "dispatcher"
                              : flow.lock.enabled     ? "lock"
                              : flow.buffer.enabled   ? "buffer"
                              : flow.fanout.enabled   ? "fanout"
                              // A reaper reads no shard; a consumer claims within its own.
                              : top.has("recovery") && top.at("recovery").contains("autoclaim") &&
                                        !(top.at("recovery").at("autoclaim").is_object() &&
                                          top.at("recovery").at("autoclaim").value("in", "") == "consumers")
                                  ? "recovery"
                              : top.has("soak")     ? "soak"
                              // A PostgreSQL of the lab's own is fine (the load labs'); a Redis is the cluster's.
                              : s.servers.own || s.servers.replica || s.servers.cache ? "servers"
                              : !flow.producer.failures.empty() ? "producer"
                                                             : nullptr;
    if (unsupported)
        r.fail(top.path(unsupported), std::string("a sharded lab (\"shard\") runs a router and one consumer per "
                                                  "shard on its own Redis Cluster; \"") +
                                          unsupported + "\" is not supported with it");
    if (top.has("stream") && top.at("stream").contains("key"))
        r.fail(child(top.path("stream"), "key"), "a sharded lab's streams are named by /shard/key_format");
}

// How the report shows the lab (its stream line, its throughput) and how a soak drains.
void read_stream_display(const Reader& r, const Object& top, Scenario& s) {
    StreamLab& flow = s.flow();
    refuse_exec_conflicts(top, s);
    flow.stream_line = top.opt_choice("stream_line", flow.stream_line, {"list", "xrange"});
    flow.show_throughput = flow.fanout.enabled || flow.shard.enabled;
    if (top.has("show_throughput")) {
        if (!top.at("show_throughput").is_boolean())
            r.expected(top.path("show_throughput"), "true or false", top.at("show_throughput"));
        flow.show_throughput = top.at("show_throughput").get<bool>();
    }
    read_section(top, "soak", flow.soak);
}

// The lab's roles, as trial_roles starts them, and its own servers: the targets a fault may name.
std::vector<std::string> stream_fault_targets(const Scenario& s) {
    const StreamLab& flow = s.flow();
    std::vector<std::string> actors;
    for (int i = 1; i <= flow.consumers; ++i) actors.push_back(fmt::format("C{}", i));
    if (flow.recovery.autoclaim.enabled && flow.recovery.autoclaim.in_reaper()) actors.push_back("reaper");
    if (flow.dispatcher.enabled) {
        actors.push_back("app");
        for (const auto& d : dispatcher_actors(flow.dispatcher)) actors.push_back(d);
    } else {
        actors.push_back("producer");
    }
    if (s.servers.own) actors.push_back("redis");
    if (s.servers.replica) actors.push_back("redis-replica");
    if (s.servers.postgres) actors.push_back("postgres");
    if (flow.shard.enabled && flow.shard.cluster.replicas > 0) {
        actors.push_back("redis-cluster-master");
        actors.push_back("redis-cluster-replica");
    }
    return actors;
}

// A claim waits min_idle_ms with nothing moving: a shorter quiet period would end the trial first.
void refuse_quiet_before_claim(const Reader& r, const Object& top, const Scenario& s) {
    const StreamLab& flow = s.flow();
    const auto& ac = flow.recovery.autoclaim;
    if (!ac.enabled || flow.stream.quiet_ms > ac.min_idle_ms + ac.every_ms) return;
    r.fail(child(top.path("stream"), "quiet_ms"),
           fmt::format("{} ms would end the trial before the claim ({} ms idle, every {} ms) could come; make it more "
                       "than {} ms",
                       flow.stream.quiet_ms, ac.min_idle_ms, ac.every_ms, ac.min_idle_ms + ac.every_ms));
}
}  // namespace

void read_stream_lab(const Reader& r, const Object& top, Scenario& s) {
    StreamLab& flow = s.flow();  // checks the lab's kind is a stream lab's
    read_stream_workload(r, top, s);
    read_stream_write(r, top, s);
    read_job_wrappers(r, top, s);
    refuse_batch_commit_conflicts(r, top, s);
    read_publishers(r, top, s);
    read_stream_shard(r, top, s);
    read_stream_display(r, top, s);
    read_section(top, "sim", s.sim);
    read_section(top, "recovery", flow.recovery);
    refuse_quiet_before_claim(r, top, s);
    if (top.has("servers"))
        s.servers = read_servers(Object(r, top.at("servers"), top.path("servers"), {"redis", "replica", "postgres"}));
    if (flow.producer.wait && !s.servers.replica)
        r.fail(child(child(top.path("producer"), "wait"), "replicas"),
               "WAIT counts replicas and this lab has none: add \"servers\": {\"replica\": true}");
    if (top.has("faults")) s.faults = read_faults(r, top.at("faults"), top.path("faults"), stream_fault_targets(s));
    for (FaultSpec& f : s.faults) {
        f.stream = flow.stream.key;
        f.group = flow.stream.group;
        const bool on_stream = f.action == FaultAction::delete_consumer || f.action == FaultAction::trim;
        if (on_stream && flow.shard.enabled)
            r.fail(top.path("faults"), to_string(f.action) + " acts on the lab's one stream: a sharded lab has one per shard");
    }
    for (size_t i = 0; i < s.faults.size(); ++i)
        if (s.faults[i].target.shard >= flow.shard.streams)
            r.fail(child(child(top.path("faults"), i), "shard"),
                   fmt::format("the lab has shards 0..{}", flow.shard.streams - 1));
}

}  // namespace relab::scenario_json
