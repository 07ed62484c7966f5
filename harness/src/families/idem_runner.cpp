#include "families/idem_runner.h"

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
#include "process/child_process.h"
#include "util/interrupt.h"
#include "clients/order_table.h"
#include "clients/pg_client.h"
#include "servers/lab_redis.h"
#include "clients/redis_client.h"
#include "servers/sentinel.h"
#include "roles/idem_client.h"
#include "roles/idem_middleware.h"
#include "roles/roles.h"
#include "backend_real/prefetch.h"
#include "engine/seeds.h"
#include "backend_real/real_control.h"
#include "process/role_process.h"
#include "engine/supervisor.h"
#include "util/numbers.h"

namespace relab {

namespace {

// One trial of an idempotency lab on real servers: the lab's own servers when it has them, a
// process per client, and the supervisor every lab kind shares (engine/supervisor.cpp) on the real
// Control port.
class IdemTrialRun {
public:
    IdemTrialRun(const Scenario& s, const IdemRunContext& ctx, PgSession& pg, int trial, uint64_t seed,
                 std::vector<Measurement>* measurements)
        : m_s(s), m_ctx(ctx), m_pg(pg), m_trial(trial), m_seed(seed), m_measurements(measurements),
          m_prefix(fmt::format("{}{}:t{}:", ctx.run_prefix, s.id, trial)),
          m_dir(fmt::format("{}/{}-t{}", ctx.work_dir, s.id, trial)) {}

    TrialOutcome run() {
        std::filesystem::create_directories(m_dir);
        const std::unique_ptr<LabRedis> own = m_s.servers.own && m_ctx.own_redis
                                                  ? m_ctx.own_redis->take(m_s.servers)
                                                  : std::make_unique<LabRedis>(m_s.servers, m_ctx.servers.redis);
        LabRedis& redis = *own;
        reset_order_table(m_pg, m_s.idem.layer4);
        RealControl control(RealControl::Env{m_s, m_prefix, m_dir, m_ctx.relab_exe, m_s.servers.own ? &redis : nullptr,
                                             m_ctx.servers.redis, nullptr, {}, m_ctx.spawner});
        const RoleSettings settings = role_settings(m_s);
        uint64_t index = 0;
        for (const auto& launch : trial_roles(m_s)) {
            RoleConfig c;
            c.role = launch.role;
            c.actor = launch.actor;
            c.trial = m_trial;
            c.seed = derive_seed(m_seed, index++);
            c.redis = redis.primary();
            if (const SentinelSet* sentinels = redis.sentinels()) {
                c.redis_sentinels = sentinels->endpoints();
                c.redis_master_name = sentinels->master_name();
            }
            c.pg = m_ctx.servers.pg;
            c.schema = m_ctx.schema;
            c.key_prefix = m_prefix;
            c.barrier_prefix = m_prefix;
            c.settings = settings;
            c.history_path = m_dir + "/" + c.actor + ".jsonl";
            control.add(launch, std::move(c));
        }
        control.roles_started();
        control.prepare_flags();
        Nanos origin{0};
        try {
            origin = supervise_idem_trial(m_s, control);
            control.open_roles_ahead();
            control.fail_on_unscheduled_failover();
        } catch (const HarnessError&) {
            throw;
        } catch (const std::runtime_error& e) {
            throw HarnessError(fmt::format("lab {} trial {}: {}", m_s.id, m_trial, e.what()));
        }
        std::vector<HistoryRecord> history = control.history();
        for (auto& r : history) {
            r.trial = m_trial;
            r.t_ns -= origin.count();
        }
        if (m_measurements)
            for (auto& m : idem_fault_measurements(m_s, history)) m_measurements->push_back(std::move(m));
        RealOrderTable table(m_pg);
        auto orders = table.orders();
        // The lab's own servers go with their directories; on the run's server only the prefix.
        if (!m_s.servers.own) delete_keys_with_prefix(control.admin(), m_prefix);
        std::filesystem::remove_all(m_dir);
        return check_idem_trial(m_s, m_trial, m_seed, std::move(history), std::move(orders));
    }

private:
    const Scenario& m_s;
    const IdemRunContext& m_ctx;
    PgSession& m_pg;
    int m_trial;
    uint64_t m_seed;
    std::vector<Measurement>* m_measurements;  // trial 1 only
    std::string m_prefix;
    std::string m_dir;
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
    bool needs = s.kind == LabKind::idem_clients && !s.servers.own;
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
        // The trial after this one starts its own servers while this one runs.
        if (ctx.own_redis)
            ctx.own_redis->want_next(t < runs ? (s.servers.own ? std::optional<IdemServers>(s.servers) : std::nullopt)
                                              : ctx.next_lab_own_redis);
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
