#include "run/idem_runner.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "check/idem_check.h"
#include "history/file_history.h"
#include "ports/seeded_rng.h"
#include "real/child_process.h"
#include "real/interrupt.h"
#include "real/order_table.h"
#include "real/pg_client.h"
#include "real/lab_redis.h"
#include "real/redis_client.h"
#include "real/sentinel.h"
#include "roles/idem_client.h"
#include "roles/idem_middleware.h"
#include "roles/roles.h"
#include "run/real_backend.h"
#include "run/role_process.h"
#include "util/numbers.h"

namespace relab {

namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now().time_since_epoch()).count();
}

// The keys of `keys` not in `left`, in the order of `keys`.
std::vector<std::string> lost_keys(const std::vector<std::string>& keys, const std::vector<std::string>& left) {
    std::vector<std::string> out;
    for (const auto& k : keys)
        if (std::find(left.begin(), left.end(), k) == left.end()) out.push_back(k);
    return out;
}

// Keys for a timeline line: the first few, then how many more.
std::string some_keys(const std::vector<std::string>& keys) {
    constexpr size_t kShown = 5;
    std::string out;
    for (size_t i = 0; i < keys.size() && i < kShown; ++i) out += (i == 0 ? "" : ", ") + keys[i];
    if (keys.size() > kShown) out += fmt::format(" and {} more", keys.size() - kShown);
    return out;
}

std::string mb(int64_t bytes) { return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6); }

struct ClientProcess {
    std::string actor;
    std::string stderr_path;
    std::string history_path;
    std::unique_ptr<ChildProcess> process;
    bool killed = false;  // by a kill_client fault: its exit status is ours, not a crash
};

class IdemTrialRun {
public:
    IdemTrialRun(const Scenario& s, const IdemRunContext& ctx, PgSession& pg, int trial, uint64_t seed,
                 std::vector<Measurement>* measurements)
        : m_s(s), m_ctx(ctx), m_pg(pg), m_trial(trial), m_seed(seed), m_measurements(measurements),
          m_prefix(fmt::format("{}{}:t{}:", ctx.run_prefix, s.id, trial)),
          m_dir(fmt::format("{}/{}-t{}", ctx.work_dir, s.id, trial)) {}

    TrialOutcome run() {
        std::filesystem::create_directories(m_dir);
        LabRedis redis(m_s.idem.servers, m_ctx.servers.redis);
        m_redis = &redis;
        connect_admin();
        reset_order_table(m_pg, m_s.idem.layer4);
        spawn_clients();
        start_barrier();
        for (const auto& f : m_s.idem.faults) {
            wait_until_origin_plus(f.at_ms);
            wait_for_record(f);
            if (is_server_fault(f.type) && m_outage_from_ns == 0) m_outage_from_ns = now_ns();
            apply(f);
            if (!f.name.empty()) mark_fault_done(f.name);
        }
        wait_for_clients();
        fail_on_unscheduled_failover();

        std::vector<HistoryRecord> history = std::move(m_records);
        for (const auto& c : m_clients) {
            auto part = read_history_file(c.history_path);
            history.insert(history.end(), part.begin(), part.end());
        }
        measure_stuck_keys(history);
        fail_on_unexplained_outage(history);
        for (auto& r : history) {
            r.trial = m_trial;
            r.t_ns -= m_origin_ns;
        }
        RealOrderTable table(m_pg);
        auto orders = table.orders();
        cleanup_keys();
        m_redis = nullptr;
        m_clients.clear();
        std::filesystem::remove_all(m_dir);
        return check_idem_trial(m_s, m_trial, m_seed, std::move(history), std::move(orders));
    }

private:
    void record(Op op, nlohmann::json data) {
        m_records.push_back(HistoryRecord{m_trial, now_ns(), "relab", op, std::move(data)});
    }

    // The middleware answers a lost store only in a lab that schedules a server fault; one that
    // came before the first such fault began was not caused by it. `history`: absolute times.
    void fail_on_unexplained_outage(const std::vector<HistoryRecord>& history) const {
        for (const auto& r : history) {
            if (r.data.value("error_class", "") != "unavailable") continue;
            if (m_outage_from_ns != 0 && r.t_ns >= m_outage_from_ns) continue;
            throw HarnessError(fmt::format(
                "lab {} trial {}: client {} lost the idempotency store at its {} {:.1f} ms before any server fault "
                "of the lab began: {} (check that redis-server is running and reachable)",
                m_s.id, m_trial, r.actor, to_string(r.op),
                static_cast<double>((m_outage_from_ns != 0 ? m_outage_from_ns : r.t_ns) - r.t_ns) / 1e6,
                r.data.value("error", "")));
        }
    }

    // Sentinel fails over on its own when a primary does not answer for down-after-milliseconds
    // (a machine too loaded to schedule it): the lab's story would no longer be the one it tells.
    void fail_on_unscheduled_failover() {
        SentinelSet* sentinels = m_redis->sentinel_set_or_null();
        if (!sentinels) return;
        const auto all = sentinels->switches();
        const size_t scheduled = static_cast<size_t>(std::count_if(
            m_s.idem.faults.begin(), m_s.idem.faults.end(), [](const IdemFault& f) { return f.type == IdemFault::Type::failover; }));
        if (all.size() <= scheduled) return;
        std::string list;
        for (const auto& w : all) list += " '" + w + "'";
        throw HarnessError(fmt::format("lab {} trial {}: Sentinel failed over {} time(s), the lab scheduled {}:{} — a "
                                       "primary did not answer for down-after-milliseconds ({} ms), the machine may be "
                                       "overloaded:{}",
                                       m_s.id, m_trial, all.size(), scheduled, list,
                                       sentinels->options().down_after.count(), sentinels->log_tail()));
    }

    void measure(Measurement m) {
        if (m_measurements) m_measurements->push_back(std::move(m));
    }

    void connect_admin() {
        m_admin.reset();
        m_admin = std::make_unique<RedisClient>(m_redis->primary());
    }

    RedisClient& admin() { return *m_admin; }

    std::vector<std::string> keys_due(int64_t at_ms) const { return idem_keys_due(m_s, at_ms); }

    // The keys of `keys` that exist: one EXISTS each, in one pipeline. An error reply throws
    // (exists_reply): it never counts as absent.
    std::vector<std::string> present(RedisClient& c, const std::vector<std::string>& keys) {
        std::vector<std::vector<std::string>> commands;
        for (const auto& k : keys) commands.push_back({"EXISTS", m_prefix + k});
        const std::vector<RedisReply> replies = c.pipeline(commands);
        std::vector<std::string> out;
        for (size_t i = 0; i < keys.size(); ++i)
            if (exists_reply(replies[i], commands[i])) out.push_back(keys[i]);
        return out;
    }

    void spawn_clients() {
        uint64_t index = 0;
        for (const auto& launch : trial_roles(m_s)) {
            RoleConfig c;
            c.role = launch.role;
            c.actor = launch.actor;
            c.trial = m_trial;
            c.seed = derive_seed(m_seed, index++);
            c.redis = m_redis->primary();
            if (const SentinelSet* sentinels = m_redis->sentinels()) {
                c.redis_sentinels = sentinels->endpoints();
                c.redis_master_name = sentinels->master_name();
            }
            c.pg = m_ctx.servers.pg;
            c.schema = m_ctx.schema;
            c.key_prefix = m_prefix;
            c.barrier_prefix = m_prefix;
            c.scenario = m_s.source;
            c.scenario_file = m_s.file;
            c.history_path = m_dir + "/" + c.actor + ".jsonl";
            ClientProcess p{c.actor, m_dir + "/" + c.actor + ".err", c.history_path, nullptr, false};
            p.process = spawn_role_process(m_ctx.relab_exe, c, m_dir, p.stderr_path);
            m_clients.push_back(std::move(p));
        }
    }

    // A client that stopped on an error (the middleware's HarnessError, a lost PostgreSQL, a bug)
    // ends the run: its trial cannot be judged, and no answer of it is counted.
    // Tells the clients waiting for this fault (resend_after_fault) that it is done.
    // A flag written before the lab fills the server: under maxmemory-policy noeviction a SET is
    // refused with OOM once the flood has filled it, but RENAME (not a "denyoom" command) is not,
    // so the done flag can still appear by renaming this one.
    void prepare_fault_flags() {
        for (const auto& f : m_s.idem.faults)
            if (!f.name.empty()) admin().call({"SET", m_prefix + kIdemFaultDoneKey + f.name + ":ready", "1"});
    }

    void mark_fault_done(const std::string& name) {
        const std::string key = m_prefix + kIdemFaultDoneKey + name;
        const RedisReply r = admin().command({"SET", key, "1"});
        if (is_oom_error(r)) {
            const RedisReply renamed = admin().command({"RENAME", key + ":ready", key});
            if (renamed.is_error())
                throw HarnessError(fmt::format("lab {} trial {}: the server refused the fault flag {} (OOM) and the flag "
                                               "prepared before the lab was gone: {}",
                                               m_s.id, m_trial, key, renamed.str));
        } else if (r.is_error()) {
            throw HarnessError(fmt::format("lab {} trial {}: SET {}: {}", m_s.id, m_trial, key, r.str));
        }
        if (std::find(m_done_faults.begin(), m_done_faults.end(), name) == m_done_faults.end())
            m_done_faults.push_back(name);
    }

    // Under maxmemory with allkeys-lru the flags are keys like any other: the clients' writes after
    // a flood can evict one (the LRU clock ticks once a second, so a fresh flag ties with the
    // flood's keys). Written again every 20 ms while the runner waits; a failed write (the
    // server restarting, an OOM refusal) only means "next time".
    void refresh_fault_flags() {
        if (m_done_faults.empty() || !m_admin) return;
        const int64_t now = now_ns();
        if (now - m_flags_refreshed_ns < 20'000'000) return;
        m_flags_refreshed_ns = now;
        for (const auto& name : m_done_faults) {
            try {
                (void)admin().command({"SET", m_prefix + kIdemFaultDoneKey + name, "1"});
            } catch (const std::exception&) {
            }
        }
    }

    void fail_if_crashed() {
        refresh_fault_flags();
        for (auto& c : m_clients) {
            if (c.killed || c.process->running()) continue;
            const auto code = c.process->exit_code();
            if (code && *code != 0)
                throw HarnessError(fmt::format("lab {} trial {}: client {} exited with status {}: {}", m_s.id, m_trial,
                                               c.actor, *code, tail_of_file(c.stderr_path)));
        }
    }

    void start_barrier() {
        prepare_fault_flags();
        std::vector<std::string> ready_keys;
        for (const auto& c : m_clients) ready_keys.push_back(kIdemReadyKey + c.actor);
        const bool ready = wait_until(
            [&] {
                fail_if_crashed();
                return present(admin(), ready_keys).size() == ready_keys.size();
            },
            milliseconds(20000));
        if (!ready) throw HarnessError(fmt::format("lab {} trial {}: the clients did not all start within 20 s", m_s.id, m_trial));
        // A little ahead, so every client sees the signal before its first send is due.
        m_origin_ns = now_ns() + 20'000'000;
        admin().call({"SET", m_prefix + kIdemGoKey, std::to_string(m_origin_ns)});
        record(Op::start, nlohmann::json::object());
        m_records.back().t_ns = m_origin_ns;
    }

    void wait_until_origin_plus(int64_t at_ms) {
        const int64_t due = m_origin_ns + at_ms * 1'000'000;
        wait_until(
            [&] {
                fail_if_crashed();
                return now_ns() >= due;
            },
            milliseconds(at_ms + 60000), milliseconds(1));
    }

    ClientProcess& client(const std::string& actor) {
        auto it = std::find_if(m_clients.begin(), m_clients.end(), [&](const ClientProcess& c) { return c.actor == actor; });
        if (it == m_clients.end()) throw std::logic_error("no client " + actor);
        return *it;
    }

    // A fault "after" a client's step waits until the client's history shows it (flushed per
    // record), so the fault lands between two steps whatever the machine's load.
    void wait_for_record(const IdemFault& f) {
        if (f.after_client.empty()) return;
        const ClientProcess& c = client(f.after_client);
        auto matches = [&](const HistoryRecord& r) {
            if (r.op != f.after_op) return false;
            for (const auto& [k, v] : f.after_fields) {
                if (!r.data.contains(k)) return false;
                const auto& field = r.data.at(k);
                if ((field.is_string() ? field.get<std::string>() : field.dump()) != v) return false;
            }
            return true;
        };
        const bool seen = wait_until(
            [&] {
                fail_if_crashed();
                const auto records = read_history_file(c.history_path);
                return std::any_of(records.begin(), records.end(), matches);
            },
            milliseconds(30000), milliseconds(1));
        if (!seen)
            throw HarnessError(fmt::format("lab {} trial {}: fault {}: client {} never recorded {} within 30 s", m_s.id,
                                           m_trial, to_string(f.type), f.after_client, to_string(f.after_op)));
    }

    int64_t last_activity_ms() const { return idem_activity_budget_ms(m_s); }

    void wait_for_clients() {
        const milliseconds timeout(last_activity_ms() + 30000);
        const bool done = wait_until(
            [&] {
                fail_if_crashed();
                return std::none_of(m_clients.begin(), m_clients.end(),
                                    [](ClientProcess& c) { return c.process->running(); });
            },
            timeout, milliseconds(5));
        if (!done)
            throw HarnessError(fmt::format("lab {} trial {}: the clients did not finish within {} ms", m_s.id, m_trial,
                                           timeout.count()));
        fail_if_crashed();
    }

    void cleanup_keys() {
        // The lab's own servers go with their directories; on the run's server only the prefix.
        if (m_s.idem.servers.own) return;
        delete_keys_with_prefix(admin(), m_prefix);
    }

    void apply(const IdemFault& f) {
        switch (f.type) {
            case IdemFault::Type::flood: flood(f); break;
            case IdemFault::Type::snapshot: snapshot(f); break;
            case IdemFault::Type::crash_restart: crash_restart(f); break;
            case IdemFault::Type::pause_replica: pause_replica(f); break;
            case IdemFault::Type::failover: failover(f); break;
            case IdemFault::Type::kill_client: kill_client(f); break;
            case IdemFault::Type::observe: observe(f); break;
        }
    }

    void flood(const IdemFault& f) {
        const auto keys = present(admin(), keys_due(f.at_ms));
        std::string ttl_before = "-";
        if (!keys.empty()) ttl_before = std::to_string(admin().call({"TTL", m_prefix + keys.front()}).integer);
        const int64_t evicted_before = info_int(admin(), "stats", "evicted_keys");
        const int64_t n = std::max<int64_t>(1, f.bytes / f.value_bytes);
        const std::string value(static_cast<size_t>(f.value_bytes), 'c');
        int64_t oom = 0;
        std::string first_error;
        constexpr int64_t batch = 200;
        for (int64_t i = 0; i < n; i += batch) {
            throw_if_interrupted();
            std::vector<std::vector<std::string>> cmds;
            for (int64_t k = i; k < std::min(n, i + batch); ++k)
                cmds.push_back({"SET", fmt::format("{}cache:view:{}", m_prefix, k), value, "EX", "3600"});
            const std::vector<RedisReply> replies = admin().pipeline(cmds);
            for (size_t k = 0; k < replies.size(); ++k) {
                const RedisReply& r = replies[k];
                if (!r.is_error()) continue;
                // The flood counts the server refusing writes for memory; any other error is not
                // the lab's to count.
                if (!is_oom_error(r))
                    throw HarnessError(fmt::format("fault flood: {} got an error reply that is not an OOM refusal: {}",
                                                   abbreviate_command(cmds[k]), r.str));
                ++oom;
                if (first_error.empty()) first_error = r.str;
            }
        }
        const int64_t evicted = info_int(admin(), "stats", "evicted_keys") - evicted_before;
        const auto left = present(admin(), keys);
        const auto memory = info_section(admin(), "memory");
        const std::string policy = field(memory, "maxmemory_policy");
        const int64_t maxmemory = int_field(memory, "maxmemory");
        const std::vector<std::string> lost = lost_keys(keys, left);
        const std::string gone = some_keys(lost);
        record(Op::fault, {{"type", "flood"},
                         {"evicted_keys", evicted},
                         {"oom_errors", oom},
                         {"idem_keys_before", keys.size()},
                         {"idem_keys_after", left.size()},
                         {"survived", left},
                         {"lost", lost},
                         {"text", fmt::format("flood: {} cache keys × {} B = {} (maxmemory {}, {}); idempotency keys "
                                              "before: {} (TTL of the first: {} s) → evicted_keys +{}, OOM errors {}{}, "
                                              "idempotency keys left {}/{}{}",
                                              with_thousands(n), f.value_bytes, mb(n * f.value_bytes), mb(maxmemory),
                                              policy, keys.size(), ttl_before, with_thousands(evicted),
                                              with_thousands(oom), first_error.empty() ? "" : " (" + first_error + ")",
                                              left.size(), keys.size(), gone.empty() ? "" : " — gone: " + gone)}});
        measure({"evicted_keys after the flood (" + policy + ")", with_thousands(evicted), f.documented,
                 f.note, f.note_vi});
        measure({"OOM errors of the flood's writes", with_thousands(oom), "", "", ""});
        measure({"idempotency keys left after the flood", fmt::format("{} of {}", left.size(), keys.size()), "", "", ""});
    }

    void observe(const IdemFault& f) {
        std::string text;
        const auto keys = keys_due(f.at_ms);
        for (const auto& k : keys) {
            const RedisReply ttl = admin().command({"TTL", m_prefix + k});
            text += fmt::format("{}{} → {}", text.empty() ? "" : "; ", k,
                                ttl.integer == -2 ? std::string("absent") : fmt::format("TTL {} s", ttl.integer));
        }
        record(Op::observe, {{"text", "keys: " + (text.empty() ? std::string("none") : text)}});
    }

    void snapshot(const IdemFault& f) {
        // rdb_saves counts finished snapshots (rdb_last_save_time only has whole seconds).
        const int64_t before = info_int(admin(), "persistence", "rdb_saves");
        admin().call({"BGSAVE"});
        const bool saved = wait_until(
            [&] {
                const auto persistence = info_section(admin(), "persistence");
                return int_field(persistence, "rdb_bgsave_in_progress") == 0 &&
                       int_field(persistence, "rdb_saves") > before;
            },
            milliseconds(10000), milliseconds(5));
        // A lab whose snapshot was not taken measures nothing it claims.
        if (!saved) throw HarnessError(fmt::format("lab {} trial {}: fault snapshot: BGSAVE did not finish within 10 s",
                                                   m_s.id, m_trial));
        const int64_t keys = admin().call({"DBSIZE"}).integer;
        record(Op::fault, {{"type", "snapshot"},
                         {"text", fmt::format("BGSAVE: an RDB snapshot of {} keys (the one `save` would take on its "
                                              "schedule, taken now)", keys)}});
        (void)f;
    }

    void crash_restart(const IdemFault& f) {
        const auto keys = present(admin(), keys_due(f.at_ms));
        const int64_t dbsize = admin().call({"DBSIZE"}).integer;
        const std::string aof = info_field(admin(), "persistence", "aof_enabled") == "1" ? "appendonly yes" : "appendonly no";
        const auto t0 = SteadyClock::now();
        m_admin.reset();
        m_redis->own_primary().restart();
        connect_admin();
        if (!wait_until([&] { return info_field(admin(), "persistence", "loading") == "0"; }, milliseconds(10000)))
            throw HarnessError(fmt::format("lab {} trial {}: fault crash_restart: redis-server still loading its data "
                                           "10 s after the restart", m_s.id, m_trial));
        const double took_ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
        const auto left = present(admin(), keys);
        const std::vector<std::string> lost_list = lost_keys(keys, left);
        const std::string lost = some_keys(lost_list);
        record(Op::fault, {{"type", "crash_restart"},
                         {"idem_keys_before", keys.size()},
                         {"idem_keys_after", left.size()},
                         {"survived", left},
                         {"lost", lost_list},
                         {"text", fmt::format("redis-server killed (SIGKILL, as `docker kill`; {}) and restarted on its "
                                              "port and data dir in {:.0f} ms: keys {} → {}; idempotency keys {}/{} "
                                              "survived{}",
                                              aof, took_ms, dbsize, admin().call({"DBSIZE"}).integer, left.size(),
                                              keys.size(), lost.empty() ? "" : " — lost: " + lost)}});
        measure({"idempotency keys lost by the crash (" + aof + ")",
                 fmt::format("{} of {}", keys.size() - left.size(), keys.size()), f.documented, f.note, f.note_vi});
    }

    void pause_replica(const IdemFault& f) {
        m_redis->pause_replica();
        // The replica's socket could still receive what the primary sends and apply it once
        // resumed; dropping the link makes "acknowledged, never replicated" certain.
        const int64_t dropped = admin().call({"CLIENT", "KILL", "TYPE", "replica"}).integer;
        record(Op::fault, {{"type", "pause_replica"},
                         {"text", fmt::format("replica paused (SIGSTOP) and its link dropped (CLIENT KILL TYPE replica "
                                              "→ {}): the primary now acknowledges writes no replica has", dropped)}});
        (void)f;
    }

    // Sentinel's failover: the primary is killed, the (paused) replica resumed, and the three
    // sentinels notice, agree (quorum 2), elect a leader, which promotes the replica and publishes
    // +switch-master. The old primary then comes back empty and Sentinel makes it a replica.
    void failover(const IdemFault& f) {
        const auto keys = present(admin(), keys_due(f.at_ms));
        SentinelSet& sentinels = m_redis->sentinel_set();
        const RedisEndpoint old = m_redis->primary();
        m_admin.reset();
        const auto t0 = SteadyClock::now();
        m_redis->own_primary().crash();
        m_redis->resume_replica();
        const MasterSwitch sw = sentinels.wait_for_switch_master(old, milliseconds(30000), t0);
        m_redis->replica_promoted(sw.primary);
        connect_admin();
        // The leader published +switch-master after INFO showed the replica a master.
        const std::string role = admin().call({"ROLE"}).elements.at(0).str;
        if (role != "master")
            throw HarnessError(fmt::format("lab {} trial {}: fault failover: Sentinel switched to {}, which answers "
                                           "ROLE {}", m_s.id, m_trial, sw.primary.display(), role));
        // Every sentinel names it before the fault is done: a client asking a sentinel that lags
        // must not be sent to the old primary once it is back (empty, and a master until Sentinel
        // converts it).
        sentinels.wait_until_all_name(sw.primary, milliseconds(10000));
        const auto left = present(admin(), keys);
        std::string states;
        for (const auto& k : keys) {
            const RedisReply v = admin().command({"GET", m_prefix + k});
            states += fmt::format("; {} → {}", k, v.is_nil() ? std::string("(nil)") : v.str);
        }
        const SentinelOptions& so = sentinels.options();
        record(Op::fault, {{"type", "failover"},
                         {"election", "sentinel"},
                         {"sentinels", so.sentinels},
                         {"quorum", so.quorum},
                         {"down_after_ms", so.down_after.count()},
                         {"new_primary", fmt::format("127.0.0.1:{}", sw.primary.port)},
                         {"switch_ms", std::lround(sw.ms)},
                         {"seen_by", sw.method + " on sentinel " + sw.sentinel},
                         {"idem_keys_before", keys.size()},
                         {"idem_keys_after", left.size()},
                         {"survived", left},
                         {"lost", lost_keys(keys, left)},
                         {"text", fmt::format("primary killed (SIGKILL), replica resumed; Sentinel's election ({} "
                                              "sentinels, quorum {}, down-after-milliseconds {}) promoted the replica "
                                              "127.0.0.1:{}: +switch-master {:.0f} ms after the kill ({} on {}); "
                                              "idempotency keys on the new primary {}/{}{}",
                                              so.sentinels, so.quorum, so.down_after.count(), sw.primary.port, sw.ms,
                                              sw.method, sw.sentinel, left.size(), keys.size(), states)}});
        // The failover is done once Sentinel switched: clients waiting for it (resend_after_fault)
        // go on now, not after the old primary's resync, which can take a second on a loaded machine.
        if (!f.name.empty()) mark_fault_done(f.name);
        const auto t1 = SteadyClock::now();
        m_redis->rejoin_old_primary();
        record(Op::fault, {{"type", "rejoin"},
                         {"text", fmt::format("the old primary restarted empty; Sentinel made it a replica of the new "
                                              "one (+convert-to-slave) and its first sync was done {:.0f} ms after the "
                                              "restart",
                                              std::chrono::duration<double, std::milli>(SteadyClock::now() - t1).count())}});
        measure({"idempotency keys on the promoted replica", fmt::format("{} of {}", left.size(), keys.size()),
                 f.documented, f.note, f.note_vi});
        measure({"Sentinel failover: kill → +switch-master", fmt::format("{:.0f} ms", sw.ms), "", "", ""});
    }

    void kill_client(const IdemFault& f) {
        ClientProcess* it = &client(f.client);
        // The key of its last claim (wait_for_record already saw the claim).
        std::string key;
        for (const auto& r : read_history_file(it->history_path))
            if (r.op == Op::claim && r.data.contains("key")) key = r.data.value("key", "");
        it->process->signal(SIGKILL);
        it->killed = true;
        it->process->wait_for(milliseconds(2000));
        m_kill_ns = now_ns();
        m_stuck_key = key;
        const int64_t pttl = admin().call({"PTTL", m_prefix + key}).integer;
        record(Op::fault, {{"type", "kill_client"},
                         {"key", key},
                         {"text", fmt::format("client {} killed (SIGKILL, as an OOM kill) right after its claim: {} stays "
                                              "in_progress, PTTL {} ms",
                                              f.client, key, with_thousands(pttl))}});
        m_kill_fault = &f;
    }

    // After a kill_client fault: how long the dead client's key kept answering 409.
    // `history`: the trial's records, times not yet made relative to the origin.
    void measure_stuck_keys(const std::vector<HistoryRecord>& history) {
        if (!m_kill_fault) return;
        std::vector<const HistoryRecord*> answers;
        for (const auto& r : history)
            if (r.op == Op::answer && r.t_ns > m_kill_ns) answers.push_back(&r);
        std::sort(answers.begin(), answers.end(), [](const auto* a, const auto* b) { return a->t_ns < b->t_ns; });
        int conflicts = 0;
        const HistoryRecord* freed = nullptr;
        for (const auto* a : answers) {
            if (a->data.value("code", 0) == 409) {
                ++conflicts;
            } else if (a->data.value("source", "") == "created") {
                freed = a;
                break;
            }
        }
        const int64_t last_ns = answers.empty() ? m_kill_ns : answers.back()->t_ns;
        std::string measured;
        if (freed) {
            measured = fmt::format("freed {:.1f} s after the client died ({} × 409 before, then 201)",
                                   static_cast<double>(freed->t_ns - m_kill_ns) / 1e9, conflicts);
        } else {
            const RedisReply pttl = admin().command({"PTTL", m_prefix + m_stuck_key});
            measured = fmt::format("still in_progress at the end ({} × 409 over {:.1f} s); PTTL left {} s (≈ {:.1f} h)",
                                   conflicts, static_cast<double>(last_ns - m_kill_ns) / 1e9,
                                   with_thousands(pttl.integer / 1000), static_cast<double>(pttl.integer) / 3.6e6);
        }
        measure({"key of the killed client", measured, m_kill_fault->documented, m_kill_fault->note,
                 m_kill_fault->note_vi});
    }

    const Scenario& m_s;
    const IdemRunContext& m_ctx;
    PgSession& m_pg;
    int m_trial;
    uint64_t m_seed;
    std::vector<Measurement>* m_measurements;  // trial 1 only
    std::string m_prefix;
    std::string m_dir;
    LabRedis* m_redis = nullptr;
    std::unique_ptr<RedisClient> m_admin;
    std::vector<ClientProcess> m_clients;
    std::vector<HistoryRecord> m_records;
    int64_t m_origin_ns = 0;
    int64_t m_outage_from_ns = 0;  // when the first fault of the store's server began; 0: none yet
    int64_t m_kill_ns = 0;
    std::string m_stuck_key;
    const IdemFault* m_kill_fault = nullptr;
    std::vector<std::string> m_done_faults;  // names of the faults done, whose flags are kept written
    int64_t m_flags_refreshed_ns = 0;
};

}  // namespace

std::optional<std::string> idem_skip_reason(const Scenario& s, const std::string& redis_version) {
    int major = 0;
    try {
        major = std::stoi(redis_version);
    } catch (const std::exception&) {
        return std::nullopt;  // unknown: let the server answer for itself
    }
    if (major >= 7) return std::nullopt;
    bool needs = s.kind == LabKind::idem_clients && !s.idem.servers.own;
    for (const auto& c : s.cases)
        for (const auto& session : c.sessions)
            for (const auto& step : session.steps) {
                if (!step.redis) continue;
                const auto& argv = step.redis->argv;
                auto has = [&](const char* word) {
                    return std::any_of(argv.begin() + 1, argv.end(), [&](const std::string& a) {
                        std::string up = a;
                        for (char& ch : up) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
                        return up == word;
                    });
                };
                if (argv.size() > 1 && (argv[0] == "SET" || argv[0] == "set") && has("NX") && has("GET")) needs = true;
            }
    if (!needs) return std::nullopt;
    return fmt::format("SET ... NX GET needs Redis 7.0; this server is {} (the Lua fallback, idem-lua, works on it)",
                       redis_version);
}

LabResult run_idem_lab(const Scenario& s, const IdemRunContext& ctx) {
    LabResult lab;
    lab.scenario = s;
    PgSession pg(ctx.servers.pg, ctx.schema);
    const uint64_t seed = lab_seed(s, ctx.seed);
    const int runs = ctx.runs.value_or(s.runs);
    for (int t = 1; t <= runs; ++t) {
        throw_if_interrupted();
        if (ctx.progress) ctx.progress(s.id, t, runs);
        IdemTrialRun trial(s, ctx, pg, t, trial_seed(seed, t), t == 1 ? &lab.measurements : nullptr);
        lab.trials.push_back(trial.run());
    }
    drop_order_table(pg);
    if (!s.idem.documented_duplicates.empty() && !lab.trials.empty())
        lab.measurements.push_back({"duplicate orders (from the orders table)",
                                    std::to_string(lab.trials.front().idem.counts.duplicates),
                                    s.idem.documented_duplicates, s.idem.documented_duplicates_note,
                                    s.idem.documented_duplicates_note_vi, "đơn trùng (đếm trong bảng orders)"});
    return lab;
}

}  // namespace relab
