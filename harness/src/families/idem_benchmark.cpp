#include "families/idem_benchmark.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "process/child_process.h"
#include "util/interrupt.h"
#include "clients/pg_client.h"
#include "clients/redis_client.h"
#include "process/tool_run.h"
#include "process/redis_benchmark_tool.h"
#include "tool_output/pgbench_output.h"

namespace relab {

namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Runs `op` back to back for `duration`; operations per second.
template <class Op>
double ops_per_second(milliseconds duration, Op op) {
    const auto start = SteadyClock::now();
    const auto end = start + duration;
    int64_t n = 0;
    while (SteadyClock::now() < end) {
        op(n++);
        if ((n & 255) == 0) throw_if_interrupted();
    }
    return static_cast<double>(n) / std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// pgbench's tps. A run that fails, times out or prints no figure ends the lab run: HarnessError
// naming the tool, its status and the end of its output.
double pgbench_figure(const std::string& tool, const ChildOptions& o, const std::string& out_path,
                      milliseconds timeout) {
    const ToolExit exit = run_tool(o, out_path, timeout);
    const std::string out = slurp_file(out_path);
    const std::optional<double> figure = parse_pgbench_tps(out);
    if (exit.code == 0 && figure) return *figure;
    const std::string tail = out.size() > 1500 ? "..." + out.substr(out.size() - 1500) : out;
    const std::string how = tool_exit_text(exit, timeout);
    throw HarnessError(fmt::format("idem-bench: {} ({}) {} and printed {}: {}", tool, o.exe, how,
                                   figure ? "a figure" : "no figure", tail.empty() ? "(no output)" : tail));
}

std::string fixed(double v) { return fmt::format("{:.0f}", v); }
std::string ratio(double a, double b) { return b > 0 ? fmt::format("{:.1f}×", a / b) : "-"; }

// relab's own loops, one client each, in operations per second.
struct LoopFigures {
    double redis = 0;
    double pg_sync = 0;   // fsync per commit
    double pg_async = 0;  // synchronous_commit=off
    std::string fsync_setting;
};

// The article's tools on the same servers; zero when the lab runs without them.
struct ToolFigures {
    double redis_benchmark = 0;  // requests/s
    double pgbench_sync = 0;     // tps
    double pgbench_async = 0;
};

// The lab's one trial: relab's loops, then the article's tools, then every figure as a history
// record (for the expectation) and as a measurement beside the article's.
class BenchTrial {
public:
    BenchTrial(const Scenario& s, const ProbeEnv& ctx)
        : m_s(s),
          m_b(s.idem().benchmark.value()),
          m_ctx(ctx),
          m_prefix(ctx.run_prefix + s.id + ":"),
          m_dir(ctx.work_dir + "/" + s.id + "-bench"),
          m_origin(SteadyClock::now()) {
        m_trial.trial = 1;
    }

    TrialOutcome run(std::vector<Measurement>& m) {
        std::filesystem::create_directories(m_dir);
        // The article's tools run after relab's loops; their absence is known now, before any loop.
        if (m_b.tools) find_tools();
        RedisClient redis(m_ctx.servers.redis);
        PgSession pg(m_ctx.servers.pg, m_ctx.schema);
        const LoopFigures loops = run_loops(redis, pg);
        // The lab's claim is that both tools ran: one that fails ends the run (exit 2) instead of
        // leaving a figure out. `"tools": false` (a mutant) measures relab's loops alone.
        const ToolFigures tools = m_b.tools ? run_tools() : ToolFigures{};
        record_figures(loops, tools);
        add_measurements(loops, tools, m);

        pg.exec("DROP TABLE IF EXISTS idempotency_keys");
        delete_keys_with_prefix(redis, m_prefix);
        std::filesystem::remove_all(m_dir);
        evaluate_trial(m_s, m_trial);  // the figures against the lab's expectation
        return std::move(m_trial);
    }

private:
    void find_tools() {
        m_redis_benchmark.emplace("idem-bench", find_redis_benchmark("idem-bench"), m_ctx.servers.redis, m_dir);
        try {
            m_pgbench = find_binary("pgbench");
        } catch (const EnvironmentError& e) {
            throw EnvironmentError(std::string("idem-bench runs pgbench: ") + e.what());
        }
    }

    int64_t now_ns() const {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - m_origin).count();
    }

    void note(const std::string& text) {
        m_trial.history.push_back(HistoryRecord{1, now_ns(), "relab", Op::observe, {{"text", text}}});
    }

    // One "figure" record: {name, value, unit, tool, ...}. A figure that is not a finite positive
    // number was not measured: a harness failure, never a figure the expectation could read.
    void figure(const std::string& name, double value, const char* unit, const char* tool, nlohmann::json extra) {
        if (!std::isfinite(value) || value <= 0)
            throw HarnessError(fmt::format("idem-bench: the figure {} is {}, not a finite positive number", name, value));
        nlohmann::json data = {{"name", name}, {"value", value}, {"unit", unit}, {"tool", tool}};
        data.update(extra);
        m_trial.history.push_back(HistoryRecord{1, now_ns(), "relab", Op::figure, std::move(data)});
    }

    LoopFigures run_loops(RedisClient& redis, PgSession& pg) {
        const milliseconds duration{m_b.duration_ms};
        LoopFigures f;
        // One argv for the whole loop: only the key changes, so the loop times the claims, not allocations.
        std::vector<std::string> claim{"SET", "", "{\"status\":\"in_progress\"}", "NX", "GET", "EX", "60"};
        const std::string key_head = m_prefix + "bench:";
        f.redis = ops_per_second(duration, [&](int64_t i) {
            claim[1].assign(key_head).append(std::to_string(i));
            redis.call(claim);
        });
        note(fmt::format("relab, 1 client, {} ms: SET idem:bench:<n> {{in_progress}} NX GET EX 60 → {} ops/s",
                         m_b.duration_ms, fixed(f.redis)));

        pg.exec("DROP TABLE IF EXISTS idempotency_keys");
        pg.exec("CREATE TABLE idempotency_keys (key text PRIMARY KEY, status text NOT NULL, "
                "created_at timestamptz NOT NULL DEFAULT now())");
        auto pg_loop = [&](const std::string& tag) {
            return ops_per_second(duration, [&](int64_t i) {
                pg.exec(fmt::format("INSERT INTO idempotency_keys (key, status) VALUES ('{}:{}', 'in_progress') "
                                    "ON CONFLICT (key) DO NOTHING",
                                    tag, i));
            });
        };
        f.fsync_setting = pg.exec("SHOW fsync").rows.at(0).at(0);
        f.pg_sync = pg_loop("sync");
        note(fmt::format("relab, 1 client, {} ms: INSERT INTO idempotency_keys ... ON CONFLICT DO NOTHING (fsync={}, "
                         "synchronous_commit=on) → {} ops/s",
                         m_b.duration_ms, f.fsync_setting, fixed(f.pg_sync)));
        pg.exec("SET synchronous_commit = off");
        f.pg_async = pg_loop("async");
        pg.exec("SET synchronous_commit = on");
        note(fmt::format("relab, 1 client, {} ms: the same INSERT with synchronous_commit=off → {} ops/s",
                         m_b.duration_ms, fixed(f.pg_async)));
        return f;
    }

    ToolFigures run_tools() {
        ToolFigures f;
        f.redis_benchmark =
            m_redis_benchmark
                ->run({"-r", "100000000", "SET", m_prefix + "rb:__rand_int__", "{\"status\":\"in_progress\"}", "NX",
                       "GET", "EX", "60"},
                      static_cast<int>(m_b.redis_benchmark_requests))
                .rps;
        note(fmt::format("redis-benchmark -n {} -c 1 SET … NX GET EX 60 → {} requests/s", m_b.redis_benchmark_requests,
                         fixed(f.redis_benchmark)));

        const std::string script = m_dir + "/claim.sql";
        std::ofstream(script) << "\\set k random(1, 1000000000)\n"
                                 "INSERT INTO idempotency_keys (key, status) VALUES ('pgbench:' || :k, 'in_progress') "
                                 "ON CONFLICT (key) DO NOTHING;\n";
        f.pgbench_sync = run_pgbench(script, true);
        f.pgbench_async = run_pgbench(script, false);
        note(fmt::format("pgbench -c 1 -T {} (INSERT … ON CONFLICT DO NOTHING) → {} tps", m_b.pgbench_seconds,
                         fixed(f.pgbench_sync)));
        note(fmt::format("pgbench -c 1 -T {} with synchronous_commit=off → {} tps", m_b.pgbench_seconds,
                         fixed(f.pgbench_async)));
        return f;
    }

    double run_pgbench(const std::string& script, bool sync) {
        const PgEndpoint& pg = m_ctx.servers.pg;
        ChildOptions o;
        o.exe = m_pgbench;
        o.args = {"-n", "-c", "1", "-T", std::to_string(m_b.pgbench_seconds), "-f", script, "-h", pg.host,
                  "-p", std::to_string(pg.port), "-U", pg.user, pg.dbname};
        o.env["PGOPTIONS"] = "-c search_path=" + m_ctx.schema + (sync ? "" : " -c synchronous_commit=off");
        if (!pg.password.empty()) o.env["PGPASSWORD"] = pg.password;
        return pgbench_figure(sync ? "pgbench" : "pgbench (synchronous_commit=off)", o,
                              m_dir + (sync ? "/pgbench-sync.out" : "/pgbench-async.out"),
                              milliseconds(m_b.pgbench_seconds * 1000 + 60000));
    }

    // The figures as history records, for the lab's expectation: per claim in µs (one client, so
    // the inverse of its rate) and the ratios Redis ÷ PostgreSQL, by relab's loop and by the tools.
    void record_figures(const LoopFigures& l, const ToolFigures& t) {
        auto per_claim = [&](const char* name, const char* tool, double ops) {
            figure(name, 1e6 / ops, "us", tool, {{"ops_per_s", ops}});
        };
        per_claim("redis_claim_us", "relab", l.redis);
        figure("pg_fsync_claim_us", 1e6 / l.pg_sync, "us", "relab", {{"ops_per_s", l.pg_sync}, {"fsync", l.fsync_setting}});
        per_claim("pg_async_claim_us", "relab", l.pg_async);
        figure("fsync_ratio", l.redis / l.pg_sync, "x", "relab", {{"documented", m_b.documented_fsync_ratio}});
        figure("async_ratio", l.redis / l.pg_async, "x", "relab", {{"documented", m_b.documented_async_ratio}});
        if (!m_b.tools) return;
        per_claim("redis_benchmark_claim_us", "redis-benchmark", t.redis_benchmark);
        per_claim("pgbench_fsync_claim_us", "pgbench", t.pgbench_sync);
        per_claim("pgbench_async_claim_us", "pgbench", t.pgbench_async);
        figure("tools_fsync_ratio", t.redis_benchmark / t.pgbench_sync, "x", "redis-benchmark/pgbench",
               {{"documented", m_b.documented_fsync_ratio}});
        figure("tools_async_ratio", t.redis_benchmark / t.pgbench_async, "x", "redis-benchmark/pgbench",
               {{"documented", m_b.documented_async_ratio}});
    }

    void add_measurements(const LoopFigures& l, const ToolFigures& t, std::vector<Measurement>& m) const {
        const std::string why_fsync = fmt::format(
            "a ratio, not a constant: each PostgreSQL commit waits for its WAL to reach the disk (here {:.2f} ms per "
            "claim); the article's machine had a slow disk",
            l.pg_sync > 0 ? 1000.0 / l.pg_sync : 0.0);
        const std::string why_async = fmt::format(
            "without the fsync wait both are one client's round trips on loopback; what is left is PostgreSQL's "
            "per-statement work ({:.3f} ms per claim against Redis's {:.3f} ms); the article's servers ran in "
            "containers on a dev machine",
            l.pg_async > 0 ? 1000.0 / l.pg_async : 0.0, l.redis > 0 ? 1000.0 / l.redis : 0.0);
        const std::string documented_fsync = fmt::format("≈{:.0f}×", m_b.documented_fsync_ratio);
        const std::string documented_async = fmt::format("≈{:.0f}×", m_b.documented_async_ratio);
        m.push_back({"claim ops/s, Redis SET NX GET EX (relab, 1 client)", fixed(l.redis), "", "", "", ""});
        m.push_back({"claim ops/s, PostgreSQL INSERT ON CONFLICT DO NOTHING, fsync per commit (relab)",
                     fixed(l.pg_sync), "", "", "", ""});
        m.push_back({"claim ops/s, the same with synchronous_commit=off (relab)", fixed(l.pg_async), "", "", "", ""});
        m.push_back({"Redis ÷ PostgreSQL, fsync per commit (relab)", ratio(l.redis, l.pg_sync), documented_fsync,
                     why_fsync, "", ""});
        m.push_back({"Redis ÷ PostgreSQL, synchronous_commit=off (relab)", ratio(l.redis, l.pg_async), documented_async,
                     why_async, "", ""});
        if (!m_b.tools) return;
        m.push_back({fmt::format("redis-benchmark -n {} -c 1, requests/s", m_b.redis_benchmark_requests),
                     fixed(t.redis_benchmark), "", "", "", ""});
        m.push_back({fmt::format("pgbench -c 1 -T {}, tps (fsync per commit)", m_b.pgbench_seconds),
                     fixed(t.pgbench_sync), "", "", "", ""});
        m.push_back({fmt::format("pgbench -c 1 -T {}, tps (synchronous_commit=off)", m_b.pgbench_seconds),
                     fixed(t.pgbench_async), "", "", "", ""});
        m.push_back({"redis-benchmark ÷ pgbench, fsync per commit", ratio(t.redis_benchmark, t.pgbench_sync),
                     documented_fsync, why_fsync, "", ""});
        m.push_back({"redis-benchmark ÷ pgbench, synchronous_commit=off", ratio(t.redis_benchmark, t.pgbench_async),
                     documented_async, why_async, "", ""});
    }

    const Scenario& m_s;
    const IdemBenchmark& m_b;
    const ProbeEnv& m_ctx;
    const std::string m_prefix;  // the lab's keys
    const std::string m_dir;     // the tools' files
    const SteadyClock::time_point m_origin;
    std::optional<RedisBenchmarkTool> m_redis_benchmark;
    std::string m_pgbench;
    TrialOutcome m_trial;
};

}  // namespace

TrialOutcome run_idem_benchmark(const Scenario& s, const ProbeEnv& ctx, std::vector<Measurement>& m) {
    return BenchTrial(s, ctx).run(m);
}

namespace {

// One trial, whatever the lab's runs: a measurement, not a race to repeat.
class BenchmarkProbe : public ProbeLab {
public:
    BenchmarkProbe(const Scenario& s, ProbeEnv& env) : m_s(s), m_env(env) {}
    TrialResult trial(int, uint64_t) override { return run_idem_benchmark(m_s, m_env, m_measurements); }
    void finish(LabResult& lab) override {
        for (auto& m : m_measurements) lab.measurements.push_back(std::move(m));
    }

private:
    const Scenario& m_s;
    ProbeEnv& m_env;
    std::vector<Measurement> m_measurements;
};

}  // namespace

std::unique_ptr<ProbeLab> open_benchmark_probe(const Scenario& s, ProbeEnv& env) {
    return std::make_unique<BenchmarkProbe>(s, env);
}

}  // namespace relab
