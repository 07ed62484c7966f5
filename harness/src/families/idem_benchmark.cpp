#include "families/idem_benchmark.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "process/child_process.h"
#include "util/interrupt.h"
#include "clients/pg_client.h"
#include "clients/redis_client.h"
#include "process/tool_run.h"

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

// Runs a tool and reads its figure from its output. A tool that fails, times out or prints no
// figure ends the run: HarnessError naming the tool, its status and the end of its output.
double tool_figure(const std::string& tool, const ChildOptions& o, const std::string& out_path, milliseconds timeout,
                   std::optional<double> (*parse)(const std::string&)) {
    const ToolExit exit = run_tool(o, out_path, timeout);
    const std::string out = slurp_file(out_path);
    const std::optional<double> figure = parse(out);
    if (exit.code == 0 && figure) return *figure;
    const std::string tail = out.size() > 1500 ? "..." + out.substr(out.size() - 1500) : out;
    const std::string how = tool_exit_text(exit, timeout);
    throw HarnessError(fmt::format("idem-bench: {} ({}) {} and printed {}: {}", tool, o.exe, how,
                                   figure ? "a figure" : "no figure", tail.empty() ? "(no output)" : tail));
}

std::string fixed(double v) { return fmt::format("{:.0f}", v); }
std::string ratio(double a, double b) { return b > 0 ? fmt::format("{:.1f}×", a / b) : "-"; }

}  // namespace

std::optional<double> parse_redis_benchmark_csv(const std::string& out) {
    // The test name is the command as typed, quotes and all, so the row is read from its end:
    // "rps","avg","min","p50","p95","p99","max".
    std::istringstream lines(out);
    static const std::regex row{R"re("([0-9.]+)"(,"[0-9.]+"){6}\s*$)re"};
    for (std::string line; std::getline(lines, line);) {
        std::smatch m;
        if (std::regex_search(line, m, row)) return std::stod(m[1].str());
    }
    return std::nullopt;
}

std::optional<double> parse_pgbench_tps(const std::string& out) {
    static const std::regex tps{R"(tps = ([0-9.]+))"};
    std::smatch m;
    if (std::regex_search(out, m, tps)) return std::stod(m[1].str());
    return std::nullopt;
}

TrialOutcome run_idem_benchmark(const Scenario& s, const ProbeEnv& ctx, std::vector<Measurement>& m) {
    const IdemBenchmark& b = s.idem.benchmark;
    const milliseconds duration{b.duration_ms};
    const std::string prefix = ctx.run_prefix + s.id + ":";
    const std::string dir = ctx.work_dir + "/" + s.id + "-bench";
    std::filesystem::create_directories(dir);
    TrialOutcome trial;
    trial.trial = 1;
    const auto origin = SteadyClock::now();
    auto note = [&](const std::string& text) {
        const int64_t t = std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - origin).count();
        trial.history.push_back(HistoryRecord{1, t, "relab", Op::observe, {{"text", text}}});
    };
    // One "figure" record: {name, value, unit, tool, ...}. A figure that is not a finite positive
    // number was not measured: a harness failure, never a figure the expectation could read.
    auto figure = [&](const std::string& name, double value, const char* unit, const char* tool,
                      nlohmann::json extra) {
        if (!std::isfinite(value) || value <= 0)
            throw HarnessError(fmt::format("idem-bench: the figure {} is {}, not a finite positive number", name, value));
        const int64_t t = std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - origin).count();
        nlohmann::json data = {{"name", name}, {"value", value}, {"unit", unit}, {"tool", tool}};
        data.update(extra);
        trial.history.push_back(HistoryRecord{1, t, "relab", Op::figure, std::move(data)});
    };
    // The article's tools run after relab's loops; their absence is known now, before any loop.
    if (!ctx.servers.redis.password.empty())
        throw EnvironmentError("idem-bench runs redis-benchmark, which takes a password only on its command line, where "
                               "every user of the machine can read it; run idem-bench on the servers relab starts "
                               "itself (no --redis-url) or on a Redis without a password");
    const auto redis_benchmark = b.tools ? find_on_path("redis-benchmark") : std::optional<std::string>("");
    if (!redis_benchmark)
        throw EnvironmentError("idem-bench runs redis-benchmark, which is not installed: apt-get install -y redis-tools");
    std::string pgbench;
    try {
        if (b.tools) pgbench = find_binary("pgbench");
    } catch (const EnvironmentError& e) {
        throw EnvironmentError(std::string("idem-bench runs pgbench: ") + e.what());
    }

    // relab's own loop: one client, one round trip per claim, unique keys.
    RedisClient redis(ctx.servers.redis);
    // One argv for the whole loop: only the key changes, so the loop times the claims, not allocations.
    std::vector<std::string> claim{"SET", "", "{\"status\":\"in_progress\"}", "NX", "GET", "EX", "60"};
    const std::string key_head = prefix + "bench:";
    const double redis_ops = ops_per_second(duration, [&](int64_t i) {
        claim[1].assign(key_head).append(std::to_string(i));
        redis.call(claim);
    });
    note(fmt::format("relab, 1 client, {} ms: SET idem:bench:<n> {{in_progress}} NX GET EX 60 → {} ops/s", b.duration_ms,
                     fixed(redis_ops)));

    PgSession pg(ctx.servers.pg, ctx.schema);
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
    const std::string fsync_setting = pg.exec("SHOW fsync").rows.at(0).at(0);
    const double pg_sync_ops = pg_loop("sync");
    note(fmt::format("relab, 1 client, {} ms: INSERT INTO idempotency_keys ... ON CONFLICT DO NOTHING (fsync={}, "
                     "synchronous_commit=on) → {} ops/s",
                     b.duration_ms, fsync_setting, fixed(pg_sync_ops)));
    pg.exec("SET synchronous_commit = off");
    const double pg_async_ops = pg_loop("async");
    pg.exec("SET synchronous_commit = on");
    note(fmt::format("relab, 1 client, {} ms: the same INSERT with synchronous_commit=off → {} ops/s", b.duration_ms,
                     fixed(pg_async_ops)));

    // The article's tools, on the same servers. The lab's claim is that both ran: a tool that is
    // missing or fails ends the run (exit 2) instead of leaving a figure out. `"tools": false`
    // (a mutant) measures relab's loops alone.
    double rb = 0, pb_sync = 0, pb_async = 0;
    if (b.tools) {
        ChildOptions rbo;
        rbo.exe = *redis_benchmark;
        rbo.args = {"-h", ctx.servers.redis.host, "-p", std::to_string(ctx.servers.redis.port), "--dbnum",
                    std::to_string(ctx.servers.redis.db), "-n", std::to_string(b.redis_benchmark_requests), "-c", "1",
                    "-r", "100000000", "--csv", "SET", prefix + "rb:__rand_int__", "{\"status\":\"in_progress\"}",
                    "NX", "GET", "EX", "60"};
        rb = tool_figure("redis-benchmark", rbo, dir + "/redis-benchmark.out", milliseconds(120000),
                         parse_redis_benchmark_csv);
        note(fmt::format("redis-benchmark -n {} -c 1 SET … NX GET EX 60 → {} requests/s", b.redis_benchmark_requests,
                         fixed(rb)));

        const std::string script = dir + "/claim.sql";
        std::ofstream(script) << "\\set k random(1, 1000000000)\n"
                                 "INSERT INTO idempotency_keys (key, status) VALUES ('pgbench:' || :k, 'in_progress') "
                                 "ON CONFLICT (key) DO NOTHING;\n";
        auto run_pgbench = [&](bool sync) {
            ChildOptions o;
            o.exe = pgbench;
            o.args = {"-n", "-c", "1", "-T", std::to_string(b.pgbench_seconds), "-f", script, "-h", ctx.servers.pg.host,
                      "-p", std::to_string(ctx.servers.pg.port), "-U", ctx.servers.pg.user, ctx.servers.pg.dbname};
            o.env["PGOPTIONS"] = "-c search_path=" + ctx.schema + (sync ? "" : " -c synchronous_commit=off");
            if (!ctx.servers.pg.password.empty()) o.env["PGPASSWORD"] = ctx.servers.pg.password;
            return tool_figure(sync ? "pgbench" : "pgbench (synchronous_commit=off)", o,
                               dir + (sync ? "/pgbench-sync.out" : "/pgbench-async.out"),
                               milliseconds(b.pgbench_seconds * 1000 + 60000), parse_pgbench_tps);
        };
        pb_sync = run_pgbench(true);
        pb_async = run_pgbench(false);
        note(fmt::format("pgbench -c 1 -T {} (INSERT … ON CONFLICT DO NOTHING) → {} tps", b.pgbench_seconds,
                         fixed(pb_sync)));
        note(fmt::format("pgbench -c 1 -T {} with synchronous_commit=off → {} tps", b.pgbench_seconds, fixed(pb_async)));
    }
    // The figures as history records, for the lab's expectation: per claim in µs (one client, so
    // the inverse of its rate) and the ratios Redis ÷ PostgreSQL, by relab's loop and by the tools.
    auto per_claim = [&](const char* name, const char* tool, double ops) {
        figure(name, 1e6 / ops, "us", tool, {{"ops_per_s", ops}});
    };
    per_claim("redis_claim_us", "relab", redis_ops);
    figure("pg_fsync_claim_us", 1e6 / pg_sync_ops, "us", "relab", {{"ops_per_s", pg_sync_ops}, {"fsync", fsync_setting}});
    per_claim("pg_async_claim_us", "relab", pg_async_ops);
    figure("fsync_ratio", redis_ops / pg_sync_ops, "x", "relab", {{"documented", b.documented_fsync_ratio}});
    figure("async_ratio", redis_ops / pg_async_ops, "x", "relab", {{"documented", b.documented_async_ratio}});
    if (b.tools) {
        per_claim("redis_benchmark_claim_us", "redis-benchmark", rb);
        per_claim("pgbench_fsync_claim_us", "pgbench", pb_sync);
        per_claim("pgbench_async_claim_us", "pgbench", pb_async);
        figure("tools_fsync_ratio", rb / pb_sync, "x", "redis-benchmark/pgbench",
               {{"documented", b.documented_fsync_ratio}});
        figure("tools_async_ratio", rb / pb_async, "x", "redis-benchmark/pgbench",
               {{"documented", b.documented_async_ratio}});
    }

    pg.exec("DROP TABLE IF EXISTS idempotency_keys");
    delete_keys_with_prefix(redis, prefix);
    std::filesystem::remove_all(dir);

    const std::string why_fsync = fmt::format(
        "a ratio, not a constant: each PostgreSQL commit waits for its WAL to reach the disk (here {:.2f} ms per "
        "claim); the article's machine had a slow disk",
        pg_sync_ops > 0 ? 1000.0 / pg_sync_ops : 0.0);
    const std::string why_async = fmt::format(
        "without the fsync wait both are one client's round trips on loopback; what is left is PostgreSQL's "
        "per-statement work ({:.3f} ms per claim against Redis's {:.3f} ms); the article's servers ran in containers "
        "on a dev machine",
        pg_async_ops > 0 ? 1000.0 / pg_async_ops : 0.0, redis_ops > 0 ? 1000.0 / redis_ops : 0.0);
    m.push_back({"claim ops/s, Redis SET NX GET EX (relab, 1 client)", fixed(redis_ops), "", "", "", ""});
    m.push_back({"claim ops/s, PostgreSQL INSERT ON CONFLICT DO NOTHING, fsync per commit (relab)", fixed(pg_sync_ops),
                 "", "", "", ""});
    m.push_back({"claim ops/s, the same with synchronous_commit=off (relab)", fixed(pg_async_ops), "", "", "", ""});
    m.push_back({"Redis ÷ PostgreSQL, fsync per commit (relab)", ratio(redis_ops, pg_sync_ops),
                 fmt::format("≈{:.0f}×", b.documented_fsync_ratio), why_fsync, "", ""});
    m.push_back({"Redis ÷ PostgreSQL, synchronous_commit=off (relab)", ratio(redis_ops, pg_async_ops),
                 fmt::format("≈{:.0f}×", b.documented_async_ratio), why_async, "", ""});
    if (b.tools) {
        m.push_back({fmt::format("redis-benchmark -n {} -c 1, requests/s", b.redis_benchmark_requests), fixed(rb), "", "",
                     "", ""});
        m.push_back({fmt::format("pgbench -c 1 -T {}, tps (fsync per commit)", b.pgbench_seconds), fixed(pb_sync), "", "",
                     "", ""});
        m.push_back({fmt::format("pgbench -c 1 -T {}, tps (synchronous_commit=off)", b.pgbench_seconds), fixed(pb_async),
                     "", "", "", ""});
        m.push_back({"redis-benchmark ÷ pgbench, fsync per commit", ratio(rb, pb_sync),
                     fmt::format("≈{:.0f}×", b.documented_fsync_ratio), why_fsync, "", ""});
        m.push_back({"redis-benchmark ÷ pgbench, synchronous_commit=off", ratio(rb, pb_async),
                     fmt::format("≈{:.0f}×", b.documented_async_ratio), why_async, "", ""});
    }
    evaluate_trial(s, trial);  // the figures against the lab's expectation
    return trial;
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
