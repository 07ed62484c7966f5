#include "fault/faults.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/check.h"
#include "util/numbers.h"

namespace relab {

namespace {

// The simulator's answer for a (action, target) it does not inject: why, for the lab's skip reason.
constexpr const char* kSimNoReplicaRejoin =
    "brings the old primary back as a replica after a failover; the simulator's replication model has no such "
    "rejoin (the real backend runs it)";
constexpr const char* kSimRedisNeverPaused =
    "pauses redis-server (SIGSTOP); the simulator's server model is never paused (the real backend runs it)";
constexpr const char* kSimPostgresNeverPaused =
    "pauses PostgreSQL (SIGSTOP: statements wait, connections stay); the simulator's database model is never paused "
    "(the real backend runs it)";
constexpr const char* kSimNoIdemReplica =
    "needs a replica and Sentinel's failover under the idempotency middleware; the simulator's replication model "
    "serves the stream labs only so far (the real backend runs it)";
constexpr const char* kSimNoMemory =
    "floods a redis-server that has maxmemory and an eviction policy with cache keys; the simulator has no memory or "
    "eviction model (the real backend runs it)";
constexpr const char* kSimNoCluster =
    "kills a Redis Cluster master for the cluster's own failover to promote its replica; the simulator models the "
    "shards' streams, not a cluster, its gossip or its failover election (the real backend runs it)";
constexpr const char* kSimNoRdb =
    "takes an RDB snapshot (BGSAVE) for a restart to load; the simulator has no RDB model (the real backend runs it)";

constexpr const char* kSimNoServerCommands =
    "sends the lab's stream server commands (XGROUP DELCONSUMER, XTRIM) the roles never send; the simulator's stream "
    "model answers the roles' ports only (the real backend runs it)";

using json = nlohmann::json;

json text(std::string s) { return {{"text", std::move(s)}}; }

double ms_since(Control& c, Nanos t0) { return std::chrono::duration<double, std::milli>(c.now() - t0).count(); }

// --- each action as a composition of the Control port's primitives ---

json kill_target(const FaultSpec&, const Target& t, Control& c) {
    if (c.finished(t)) throw std::runtime_error(target_name(t) + " is not running");
    c.kill(t);
    return text(fmt::format("{} killed (SIGKILL)", target_name(t)));
}

json pause_target(const FaultSpec&, const Target& t, Control& c) {
    if (c.finished(t)) throw std::runtime_error(target_name(t) + " is not running");
    c.pause(t);
    if (t.shard >= 0) return {{"shard", t.shard}, {"text", fmt::format("shard {}'s replica paused (SIGSTOP)", t.shard)}};
    return text(fmt::format("{} paused (SIGSTOP)", target_name(t)));
}

json resume_target(const FaultSpec&, const Target& t, Control& c) {
    if (!c.paused(t)) throw std::runtime_error(target_name(t) + " is not paused");
    c.resume(t);
    if (t.shard >= 0) return {{"shard", t.shard}, {"text", fmt::format("shard {}'s replica resumed (SIGCONT)", t.shard)}};
    return text(fmt::format("{} resumed (SIGCONT)", target_name(t)));
}

// A redis-server restarted on its port and data directory: what it had before, what it kept.
json restart_redis(const Target& t, Control& c) {
    const Control::ServerState before = c.describe(t);
    const Nanos t0 = c.now();
    if (!c.finished(t)) c.kill(t);
    c.start(t);
    const Control::ServerState after = c.describe(t);
    const double ms = ms_since(c, t0);
    return {{"keys_before", before.keys},
            {"keys_after", after.keys},
            {"persistence", before.persistence()},
            {"restart_ms", std::lround(ms)},
            {"text", fmt::format("redis-server killed (SIGKILL, as `docker kill`; {}) and restarted on its port and "
                                 "data dir in {:.0f} ms: keys {} → {}",
                                 before.persistence(), ms, before.keys, after.keys)}};
}

// The lab's own PostgreSQL: crash recovery on its data directory.
json restart_postgres(const Target& t, Control& c) {
    const Nanos t0 = c.now();
    if (!c.finished(t)) c.kill(t);
    c.start(t);
    return text(fmt::format("PostgreSQL killed (SIGKILL to the postmaster and every backend, as `docker kill`) and "
                            "restarted on its port and data dir; crash recovery done and connections accepted {:.0f} "
                            "ms after the kill",
                            ms_since(c, t0)));
}

// A role under the same name, as a process supervisor would start it again.
json restart_role(const Target& t, Control& c) {
    const bool was_running = !c.finished(t);
    if (was_running) c.kill(t);
    c.start(t);
    json out = text(fmt::format("{} {}started under the same name", target_name(t),
                                was_running ? "killed (SIGKILL) and " : ""));
    out["killed"] = was_running;
    return out;
}

json restart_target(const FaultSpec&, const Target& t, Control& c) {
    switch (t.kind) {
        case FaultTarget::redis_replica: {  // after a failover: the old primary comes back
            const Nanos t0 = c.now();
            c.start(t);
            return text(fmt::format("the old primary started again, empty; Sentinel made it a replica of the new one "
                                    "and its first sync was done {:.0f} ms after the restart",
                                    ms_since(c, t0)));
        }
        case FaultTarget::redis:
        case FaultTarget::redis_cache: return restart_redis(t, c);
        case FaultTarget::postgres: return restart_postgres(t, c);
        case FaultTarget::role: return restart_role(t, c);
        case FaultTarget::redis_cluster_master:
        case FaultTarget::redis_cluster_replica:
        case FaultTarget::clients: break;
    }
    throw std::logic_error("restart has no row for " + to_string(t.kind));
}

// The primary killed, the replica (stale as a pause left it: it cannot reach the dead primary any
// more) resumed, and Sentinel's election promotes it.
json failover_primary(const FaultSpec&, const Target& primary, Control& c) {
    const Target replica = Target::of(FaultTarget::redis_replica);
    const std::string before = c.describe(primary).last_delivered;
    const Nanos t0 = c.now();
    c.kill(primary);
    const bool was_paused = c.paused(replica);
    if (was_paused) c.resume(replica);
    json out = c.promote(t0);
    out["done_ms"] = std::lround(ms_since(c, t0));
    const std::string old = out.value("old_primary", "");
    std::string words = fmt::format("primary{} {}{}; {}", old.empty() ? "" : " " + old,
                                    out.value("primary_fault", "killed (SIGKILL)"),
                                    was_paused ? ", the paused replica resumed" : "", out.value("text", ""));
    if (!before.empty())
        words += fmt::format("; the group's last-delivered-id {} before, {} after", before,
                             c.describe(primary).last_delivered);
    out["text"] = words;
    return out;
}

json drop_links_of(const FaultSpec&, const Target& t, Control& c) {
    const int64_t dropped = c.drop_links(t);
    if (t.kind == FaultTarget::redis_replica || t.kind == FaultTarget::redis_cluster_replica)
        return {{"dropped", dropped},
                {"text", fmt::format("{} dropped {} replication link(s) (CLIENT KILL TYPE replica): it now "
                                     "acknowledges writes no replica has",
                                     t.shard >= 0 ? fmt::format("shard {}'s master", t.shard) : "the primary", dropped)}};
    return {{"dropped", dropped},
            {"text", fmt::format("closed {} Redis connection(s) of {}", dropped,
                                 t.kind == FaultTarget::clients ? std::string("the trial's roles") : t.actor)}};
}

// A reply of Control::commands that must not be an error; a server that refuses what a fault asks
// leaves the fault undone (its fail record says why).
const json& no_error(const json& reply, std::string_view command) {
    if (reply.is_object() && reply.contains("error"))
        throw std::runtime_error(fmt::format("{}: {}", command, reply.at("error").get<std::string>()));
    return reply;
}

// INFO `section` of the server, as its reply's text ("name:value" lines).
std::string info(Control& c, const Target& server, int64_t db, const std::string& section) {
    const json reply = c.commands(server, db, {{"INFO", section}}).at(0);
    return no_error(reply, "INFO " + section).get<std::string>();
}

// One field of an INFO reply, "" when absent.
std::string info_field(const std::string& info, const std::string& name) {
    const std::string key = name + ":";
    for (size_t at = 0; at < info.size();) {
        const size_t end = std::min(info.find('\n', at), info.size());
        std::string_view line(info.data() + at, end - at);
        if (line.starts_with(key)) {
            line.remove_prefix(key.size());
            if (line.ends_with('\r')) line.remove_suffix(1);
            return std::string(line);
        }
        at = end + 1;
    }
    return "";
}

int64_t info_number(const std::string& info, const std::string& name) {
    const std::string v = info_field(info, name);
    return v.empty() ? 0 : std::stoll(v);
}

std::string mb(int64_t bytes) { return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6); }

// What a flood's writes met: how many the server refused for memory (OOM, under noeviction), and
// the first such refusal.
struct FloodRefusals {
    int64_t oom = 0;
    std::string first;
};

// Writes keys [from, to) of the flood in one round trip. Any error but OOM is not the lab's to count.
void flood_batch(const FaultSpec& f, const Target& server, Control& c, int64_t from, int64_t to, FloodRefusals& out) {
    const std::string value(static_cast<size_t>(f.value_bytes), 'c');
    std::vector<Control::Command> batch;
    for (int64_t k = from; k < to; ++k)
        batch.push_back({"SET", c.server_key(fmt::format("cache:view:{}", k)), value, "EX", "3600"});
    const std::vector<json> replies = c.commands(server, f.db, batch);
    for (size_t k = 0; k < replies.size(); ++k) {
        if (!replies[k].is_object() || !replies[k].contains("error")) continue;
        const std::string error = replies[k].at("error").get<std::string>();
        if (!error.starts_with("OOM "))
            throw HarnessError(fmt::format("fault flood: SET {} got an error reply that is not an OOM refusal: {}",
                                           batch[k][1], error));
        ++out.oom;
        if (out.first.empty()) out.first = error;
    }
}

// A peak of cache traffic: `bytes` of cache keys in values of value_bytes, 200 to a round trip.
json flood_server(const FaultSpec& f, const Target& server, Control& c) {
    constexpr int64_t kBatch = 200;
    const int64_t evicted_before = info_number(info(c, server, f.db, "stats"), "evicted_keys");
    const int64_t n = std::max<int64_t>(1, f.bytes / f.value_bytes);
    FloodRefusals refused;
    for (int64_t i = 0; i < n; i += kBatch) flood_batch(f, server, c, i, std::min(n, i + kBatch), refused);
    const int64_t evicted = info_number(info(c, server, f.db, "stats"), "evicted_keys") - evicted_before;
    const std::string memory = info(c, server, f.db, "memory");
    const std::string policy = info_field(memory, "maxmemory_policy");
    return {{"target", target_name(server)},
            {"evicted_keys", evicted},
            {"oom_errors", refused.oom},
            {"policy", policy},
            {"db", f.db >= 0 ? f.db : 0},
            {"text", fmt::format("flood: {} cache keys × {} B = {}{} (maxmemory {}, {}) → evicted_keys +{}, OOM errors {}{}",
                                 with_thousands(n), f.value_bytes, mb(n * f.value_bytes),
                                 server.kind == FaultTarget::redis_cache ? std::string(" into the cache's own instance")
                                 : f.db >= 0                             ? fmt::format(" into DB {}", f.db)
                                                                         : std::string{},
                                 mb(info_number(memory, "maxmemory")), policy, with_thousands(evicted), with_thousands(refused.oom),
                                 refused.first.empty() ? "" : " (" + refused.first + ")")}};
}

// The RDB snapshot `save` would take on its schedule, taken now: BGSAVE, and its end awaited
// (rdb_saves counts finished snapshots; rdb_last_save_time has whole seconds only).
json snapshot_server(const FaultSpec&, const Target& server, Control& c) {
    const int64_t saves = info_number(info(c, server, -1, "persistence"), "rdb_saves");
    no_error(c.command(server, {"BGSAVE"}), "BGSAVE");
    const Nanos deadline = c.now() + std::chrono::seconds(10);
    for (;;) {
        const std::string persistence = info(c, server, -1, "persistence");
        if (info_number(persistence, "rdb_bgsave_in_progress") == 0 && info_number(persistence, "rdb_saves") > saves)
            break;
        // A lab whose snapshot was not taken measures nothing it claims.
        if (c.now() > deadline) throw HarnessError("fault snapshot: BGSAVE did not finish within 10 s");
        const Nanos next = c.now() + Millis{5};
        while (c.now() < next) c.wait(Control::Phase::fault, next);
    }
    const int64_t keys = no_error(c.command(server, {"DBSIZE"}), "DBSIZE").get<int64_t>();
    return {{"keys", keys},
            {"text", fmt::format("BGSAVE: an RDB snapshot of {} keys (the one `save` would take on its schedule, "
                                 "taken now)",
                                 keys)}};
}

json observe_server(const FaultSpec&, const Target& server, Control& c) {
    const Control::ServerState s = c.describe(server);
    return {{"keys", s.keys},
            {"persistence", s.persistence()},
            {"text", fmt::format("{}: {} keys ({})", target_name(server), s.keys, s.persistence())}};
}

// A role's link to a server set to `mode` (the proxy or the connection model changes it; the role
// and the server go on running).
json link_change(const FaultSpec& f, const Target& t, Control& c) {
    LinkMode mode;
    std::string what;
    switch (f.action) {
        case FaultAction::delay:
            mode.delay = Millis{f.ms};
            what = fmt::format("delay {} ms: every reply reaches {} {} ms late", f.ms, target_name(t), f.ms);
            break;
        case FaultAction::blackhole:
            mode.blackhole = true;
            what = "blackhole: its bytes are taken and neither forwarded nor answered; its calls hang";
            break;
        case FaultAction::reset_peer:
            mode.reset = f.link;
            what = "reset_peer: each connection is reset (TCP RST) in place of the server's next reply";
            break;
        case FaultAction::heal: what = "heal: the link carries again"; break;
        default: throw std::logic_error("link_change for " + to_string(f.action));
    }
    // The record keeps to the fault op's fields (ports/history_op.h): the link and what the heal
    // let through are in its words.
    const json figures = c.set_link(t, f.link, mode);
    const int64_t released = figures.value("released", int64_t{0});
    if (f.action == FaultAction::heal || released > 0)
        what += fmt::format("; {} {} held flowed on", released, figures.value("unit", std::string("bytes")));
    return text(fmt::format("link: {} ↔ {} {}", target_name(t), to_string(f.link), what));
}

// The replies of commands sent as one MULTI … EXEC: what each queued command answered.
json transaction(Control& c, const Target& server, const std::vector<Control::Command>& body, std::string_view what) {
    std::vector<Control::Command> batch = {{"MULTI"}};
    batch.insert(batch.end(), body.begin(), body.end());
    batch.push_back({"EXEC"});
    const std::vector<json> replies = c.commands(server, -1, batch);
    RELAB_CHECK(replies.size() == body.size() + 2, "one reply per command of the transaction");
    const json& exec = no_error(replies.back(), what);
    if (!exec.is_array() || exec.size() != body.size())
        throw std::runtime_error(fmt::format("{}: EXEC answered {}", what, exec.dump()));
    for (const json& r : exec) no_error(r, what);
    return exec;
}

// A scale-down's XGROUP DELCONSUMER of the role's consumer name, with the pending entries it held
// then (XPENDING in the same transaction): they leave the PEL with it.
json delete_consumer(const FaultSpec& f, const Target& t, Control& c) {
    const Target server = Target::of(FaultTarget::redis);
    const std::string key = c.server_key(f.stream);
    const json exec = transaction(
        c, server, {{"XPENDING", key, f.group, "-", "+", "1000", t.actor}, {"XGROUP", "DELCONSUMER", key, f.group, t.actor}},
        "XGROUP DELCONSUMER");
    std::vector<std::string> ids;
    for (const json& p : exec.at(0)) ids.push_back(p.at(0).get<std::string>());
    const int64_t dropped = exec.at(1).get<int64_t>();
    return {{"consumer", t.actor},
            {"pending_dropped", dropped},
            {"dropped_entries", ids},
            {"text", fmt::format("XGROUP DELCONSUMER {} {} {}: the consumer is gone with its {} pending entr{}{}", f.stream,
                                 f.group, t.actor, dropped, dropped == 1 ? "y" : "ies",
                                 ids.empty() ? std::string() : fmt::format(" ({})", fmt::join(ids, ", ")))}};
}

// XTRIM of the lab's stream to maxlen entries; the IDs it removes are read in the same
// transaction (the oldest ones: MAXLEN keeps the newest), so the record names each.
json trim_stream(const FaultSpec& f, const Target& server, Control& c) {
    const std::string key = c.server_key(f.stream);
    const json exec = transaction(c, server, {{"XRANGE", key, "-", "+"}, {"XTRIM", key, "MAXLEN", std::to_string(f.maxlen)}},
                                  "XTRIM");
    const int64_t trimmed = exec.at(1).get<int64_t>();
    const json& entries = exec.at(0);
    RELAB_CHECK(trimmed >= 0 && static_cast<size_t>(trimmed) <= entries.size(), "XTRIM removes entries it had");
    std::vector<std::string> ids;
    for (int64_t i = 0; i < trimmed; ++i) ids.push_back(entries.at(static_cast<size_t>(i)).at(0).get<std::string>());
    return {{"maxlen", f.maxlen},
            {"stream_len", entries.size()},
            {"trimmed", trimmed},
            {"trimmed_entries", ids},
            {"text", fmt::format("XTRIM {} MAXLEN {}: {} of {} entries trimmed{}", f.stream, f.maxlen, trimmed,
                                 entries.size(), ids.empty() ? std::string() : fmt::format(" ({})", fmt::join(ids, ", ")))}};
}

// S2 on a Redis Cluster: shard k's master killed, its replica resumed if a pause held it back
// (stale: it cannot reach the dead master any more) so that it can win the election, and the
// cluster's own failover (failure detection after cluster-node-timeout, the replicas' election)
// awaited, never done by hand.
json failover_shard(const FaultSpec&, const Target& master, Control& c) {
    const Target replica{FaultTarget::redis_cluster_replica, "", master.shard};
    const Nanos t0 = c.now();
    c.kill(master);
    const bool was_paused = c.paused(replica);
    if (was_paused) c.resume(replica);
    json out = c.shard_promote(master, t0);
    out["shard"] = master.shard;
    out["done_ms"] = std::lround(ms_since(c, t0));
    out["text"] = fmt::format("shard {}'s master{} killed (SIGKILL){}; {}", master.shard,
                              out.contains("old_master") ? " " + out.at("old_master").get<std::string>() : "",
                              was_paused ? ", its paused replica resumed" : "", out.value("text", ""));
    return out;
}

// One target an action may act on: whose errors the roles then see, and whether the simulator
// injects it (nullptr) or why not, in any lab (`sim`) or in an idempotency lab (`sim_idem`).
struct TargetRow {
    FaultTarget target;
    FaultOutage outage = FaultOutage::none;
    const char* sim = nullptr;
    const char* sim_idem = nullptr;
};

// Every fault action, one row each: adding an action is its enumerator in fault_spec.h and a row
// here, with its composition of the Control port's primitives above.
struct ActionRow {
    FaultAction action;
    const char* name;
    bool disrupts;  // takes a server away or cuts it off: clients see errors (or hang) while it lasts
    std::vector<TargetRow> targets;
    json (*apply)(const FaultSpec&, const Target&, Control&);
    std::optional<FaultTarget> needs = std::nullopt;  // another target the lab must have
    bool link = false;  // acts on a role's link: the real backend proxies the lab's roles
};

using T = FaultTarget;
using O = FaultOutage;
const ActionRow k_actions[] = {
    {FaultAction::kill, "kill", true, {{T::role}, {T::redis, O::redis}, {T::postgres, O::postgres}}, kill_target},
    {FaultAction::pause, "pause", true,
     {{T::role},
      {T::redis, O::redis, kSimRedisNeverPaused},
      {T::redis_replica, O::redis, nullptr, kSimNoIdemReplica},
      {T::redis_cluster_replica, O::none, kSimNoCluster},
      {T::postgres, O::postgres, kSimPostgresNeverPaused}},
     pause_target},
    {FaultAction::resume, "resume", false,
     {{T::role},
      {T::redis, O::none, kSimRedisNeverPaused},
      {T::redis_replica, O::none, nullptr, kSimNoIdemReplica},
      {T::redis_cluster_replica, O::none, kSimNoCluster},
      {T::postgres, O::none, kSimPostgresNeverPaused}},
     resume_target},
    // "redis-replica": after a failover, the old primary comes back (the loader wants the failover first)
    {FaultAction::restart, "restart", true,
     {{T::role}, {T::redis, O::redis}, {T::redis_replica, O::redis, kSimNoReplicaRejoin}, {T::postgres, O::postgres}},
     restart_target},
    {FaultAction::failover, "failover", true, {{T::redis, O::redis, nullptr, kSimNoIdemReplica}}, failover_primary,
     T::redis_replica},
    {FaultAction::drop_link, "drop_link", true,
     {{T::redis_replica, O::redis, nullptr, kSimNoIdemReplica},
      {T::redis_cluster_replica, O::none, kSimNoCluster},
      {T::clients, O::redis},
      {T::role, O::redis}},
     drop_links_of},
    {FaultAction::flood, "flood", false, {{T::redis, O::none, kSimNoMemory}, {T::redis_cache, O::none, kSimNoMemory}},
     flood_server},
    {FaultAction::snapshot, "snapshot", false, {{T::redis, O::none, kSimNoRdb}}, snapshot_server},
    {FaultAction::observe, "observe", false, {{T::redis}}, observe_server},
    // A hang longer than a role's Redis socket timeout (5 s, past a blocking read's BLOCK) is an
    // error the roles ride out: O::redis; a PostgreSQL call has no timeout and stays hung.
    {FaultAction::delay, "delay", false, {{T::role, O::redis}}, link_change, std::nullopt, true},
    {FaultAction::blackhole, "blackhole", true, {{T::role, O::redis}}, link_change, std::nullopt, true},
    {FaultAction::heal, "heal", false, {{T::role}}, link_change, std::nullopt, true},
    {FaultAction::reset_peer, "reset_peer", true, {{T::role, O::link}}, link_change, std::nullopt, true},
    {FaultAction::delete_consumer, "delete_consumer", false, {{T::role, O::none, kSimNoServerCommands}}, delete_consumer},
    {FaultAction::trim, "trim", false, {{T::redis, O::none, kSimNoServerCommands}}, trim_stream},
    {FaultAction::shard_failover, "shard_failover", true, {{T::redis_cluster_master, O::redis, kSimNoCluster}},
     failover_shard},
};

const ActionRow& row_of(FaultAction a) {
    for (const auto& r : k_actions)
        if (r.action == a) return r;
    throw std::logic_error("a FaultAction without its row in fault/faults.cpp's k_actions");
}

const TargetRow* target_row(FaultAction a, FaultTarget t) {
    for (const auto& r : row_of(a).targets)
        if (r.target == t) return &r;
    return nullptr;
}

const std::pair<FaultTarget, const char*> k_target_names[] = {
    {FaultTarget::redis, "redis"},
    {FaultTarget::redis_replica, "redis-replica"},
    {FaultTarget::redis_cache, "redis-cache"},
    {FaultTarget::postgres, "postgres"},
    {FaultTarget::clients, "clients"},
    {FaultTarget::redis_cluster_master, "redis-cluster-master"},
    {FaultTarget::redis_cluster_replica, "redis-cluster-replica"},
};

}  // namespace

std::string to_string(FaultAction a) {
    for (const auto& r : k_actions)
        if (r.action == a) return r.name;
    return "unknown";
}

std::optional<FaultAction> fault_action_named(const std::string& name) {
    for (const auto& r : k_actions)
        if (name == r.name) return r.action;
    return std::nullopt;
}

std::vector<std::string> fault_action_names() {
    std::vector<std::string> out;
    for (const auto& r : k_actions) out.emplace_back(r.name);
    return out;
}

std::string to_string(FaultTarget t) {
    for (const auto& [target, name] : k_target_names)
        if (target == t) return fmt::format("\"{}\"", name);
    return "a role";
}

FaultTarget fault_target_kind(const std::string& name) {
    for (const auto& [target, n] : k_target_names)
        if (name == n) return target;
    return FaultTarget::role;
}

Target fault_target_named(const std::string& name) {
    const FaultTarget kind = fault_target_kind(name);
    return kind == FaultTarget::role ? Target::role(name) : Target::of(kind);
}

std::string target_name(const Target& t) {
    for (const auto& [target, name] : k_target_names)
        if (target == t.kind) return name;
    return t.actor;
}

bool is_redis_server(FaultTarget t) {
    return t == FaultTarget::redis || t == FaultTarget::redis_replica || t == FaultTarget::redis_cache;
}

std::optional<std::string> fault_target_refusal(FaultAction action, FaultTarget target) {
    if (target_row(action, target)) return std::nullopt;
    const auto& rows = row_of(action).targets;
    std::string list;
    for (size_t i = 0; i < rows.size(); ++i)
        list += (i == 0 ? "" : i + 1 == rows.size() ? " or " : ", ") + to_string(rows[i].target);
    return fmt::format("{} acts on {}, not on {}", to_string(action), list, to_string(target));
}

std::optional<FaultTarget> fault_action_needs(FaultAction action) { return row_of(action).needs; }

FaultOutage fault_outage(FaultAction action, FaultTarget target) {
    const TargetRow* r = target_row(action, target);
    return r ? r->outage : FaultOutage::none;
}

std::optional<std::string> fault_sim_refusal(FaultAction action, FaultTarget target, bool idempotency_lab) {
    const TargetRow* r = target_row(action, target);
    if (!r) return std::nullopt;  // the loader refuses it first
    if (r->sim) return r->sim;
    if (idempotency_lab && r->sim_idem) return r->sim_idem;
    return std::nullopt;
}

FaultTarget fault_target_of(const std::vector<FaultSpec>& faults, size_t index) {
    // target_of names an earlier fault (the loader checks it), so this ends.
    while (index < faults.size() && faults[index].target_of > 0 &&
           static_cast<size_t>(faults[index].target_of - 1) < index)
        index = static_cast<size_t>(faults[index].target_of - 1);
    return index < faults.size() ? faults[index].target.kind : FaultTarget::role;
}

bool faults_cause(const std::vector<FaultSpec>& faults, FaultOutage outage) {
    for (size_t i = 0; i < faults.size(); ++i) {
        FaultOutage o = fault_outage(faults[i].action, fault_target_of(faults, i));
        if (o == FaultOutage::link) o = faults[i].link == LinkServer::redis ? FaultOutage::redis : FaultOutage::postgres;
        if (o == outage) return true;
    }
    return false;
}

bool disrupts(FaultAction a) { return row_of(a).disrupts; }

bool acts_on_link(FaultAction a) { return row_of(a).link; }

bool faults_act_on_links(const std::vector<FaultSpec>& faults) {
    return std::any_of(faults.begin(), faults.end(), [](const FaultSpec& f) { return acts_on_link(f.action); });
}

json apply_fault(const FaultSpec& f, const Target& target, Control& c) { return row_of(f.action).apply(f, target, c); }

}  // namespace relab
