#include "run/idem_benchmark.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "real/child_process.h"
#include "real/interrupt.h"
#include "real/pg_client.h"
#include "real/redis_client.h"

namespace relab {

namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

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

struct ToolRun {
    std::optional<double> figure;
    std::string skipped;  // why there is no figure
};

// Runs a tool to its end (Ctrl-C still stops it), its output in `out_path`.
int run_tool(ChildOptions o, const std::string& out_path, milliseconds timeout) {
    o.stdout_path = out_path;
    o.stderr_path = out_path;
    ChildProcess child(o);
    const auto deadline = SteadyClock::now() + timeout;
    while (!child.wait_for(milliseconds(20))) {
        throw_if_interrupted();
        if (SteadyClock::now() > deadline) {
            child.terminate();
            return -1;
        }
    }
    return child.exit_code().value_or(-1);
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

void run_idem_benchmark(const Scenario& s, const IdemRunContext& ctx, LabResult& lab) {
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
        trial.history.push_back(HistoryRecord{1, t, "relab", "observe", {{"text", text}}});
    };
    if (ctx.progress) ctx.progress(s.id, 1, 1);

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

    // The article's tools, on the same servers.
    ToolRun rb;
    if (!ctx.servers.redis.password.empty()) {
        rb.skipped = "the server has a password, which redis-benchmark would show on its command line";
    } else if (auto exe = find_on_path("redis-benchmark")) {
        ChildOptions o;
        o.exe = *exe;
        o.args = {"-h", ctx.servers.redis.host, "-p", std::to_string(ctx.servers.redis.port), "--dbnum",
                  std::to_string(ctx.servers.redis.db), "-n", std::to_string(b.redis_benchmark_requests), "-c", "1",
                  "-r", "100000000", "--csv", "SET", prefix + "rb:__rand_int__", "{\"status\":\"in_progress\"}", "NX",
                  "GET", "EX", "60"};
        const std::string out_path = dir + "/redis-benchmark.out";
        const int code = run_tool(o, out_path, milliseconds(120000));
        rb.figure = parse_redis_benchmark_csv(slurp(out_path));
        if (!rb.figure) rb.skipped = fmt::format("redis-benchmark exited with {} and no figure", code);
    } else {
        rb.skipped = "redis-benchmark is not installed (apt-get install -y redis-tools)";
    }
    note(rb.figure ? fmt::format("redis-benchmark -n {} -c 1 SET … NX GET EX 60 → {} requests/s",
                                 b.redis_benchmark_requests, fixed(*rb.figure))
                   : "redis-benchmark: skipped: " + rb.skipped);

    ToolRun pb_sync, pb_async;
    std::optional<std::string> pgbench;
    try {
        pgbench = find_binary("pgbench");
    } catch (const EnvironmentError&) {
    }
    if (pgbench) {
        const std::string script = dir + "/claim.sql";
        std::ofstream(script) << "\\set k random(1, 1000000000)\n"
                                 "INSERT INTO idempotency_keys (key, status) VALUES ('pgbench:' || :k, 'in_progress') "
                                 "ON CONFLICT (key) DO NOTHING;\n";
        auto run_pgbench = [&](bool sync, ToolRun& out) {
            ChildOptions o;
            o.exe = *pgbench;
            o.args = {"-n", "-c", "1", "-T", std::to_string(b.pgbench_seconds), "-f", script, "-h", ctx.servers.pg.host,
                      "-p", std::to_string(ctx.servers.pg.port), "-U", ctx.servers.pg.user, ctx.servers.pg.dbname};
            o.env["PGOPTIONS"] = "-c search_path=" + ctx.schema + (sync ? "" : " -c synchronous_commit=off");
            if (!ctx.servers.pg.password.empty()) o.env["PGPASSWORD"] = ctx.servers.pg.password;
            const std::string out_path = dir + (sync ? "/pgbench-sync.out" : "/pgbench-async.out");
            const int code = run_tool(o, out_path, milliseconds(b.pgbench_seconds * 1000 + 60000));
            out.figure = parse_pgbench_tps(slurp(out_path));
            if (!out.figure) out.skipped = fmt::format("pgbench exited with {}: {}", code, slurp(out_path));
        };
        run_pgbench(true, pb_sync);
        run_pgbench(false, pb_async);
    } else {
        pb_sync.skipped = pb_async.skipped = "pgbench is not installed (apt-get install -y postgresql-contrib)";
    }
    note(pb_sync.figure ? fmt::format("pgbench -c 1 -T {} (INSERT … ON CONFLICT DO NOTHING) → {} tps",
                                      b.pgbench_seconds, fixed(*pb_sync.figure))
                        : "pgbench: skipped: " + pb_sync.skipped);
    note(pb_async.figure ? fmt::format("pgbench -c 1 -T {} with synchronous_commit=off → {} tps", b.pgbench_seconds,
                                       fixed(*pb_async.figure))
                         : "pgbench (synchronous_commit=off): skipped: " + pb_async.skipped);

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
    auto& m = lab.measurements;
    m.push_back({"claim ops/s, Redis SET NX GET EX (relab, 1 client)", fixed(redis_ops), "", "", "", ""});
    m.push_back({"claim ops/s, PostgreSQL INSERT ON CONFLICT DO NOTHING, fsync per commit (relab)", fixed(pg_sync_ops),
                 "", "", "", ""});
    m.push_back({"claim ops/s, the same with synchronous_commit=off (relab)", fixed(pg_async_ops), "", "", "", ""});
    m.push_back({"Redis ÷ PostgreSQL, fsync per commit (relab)", ratio(redis_ops, pg_sync_ops),
                 fmt::format("≈{:.0f}×", b.documented_fsync_ratio), why_fsync, "", ""});
    m.push_back({"Redis ÷ PostgreSQL, synchronous_commit=off (relab)", ratio(redis_ops, pg_async_ops),
                 fmt::format("≈{:.0f}×", b.documented_async_ratio), why_async, "", ""});
    auto tool_text = [](const ToolRun& t) { return t.figure ? fixed(*t.figure) : "skipped: " + t.skipped; };
    m.push_back({fmt::format("redis-benchmark -n {} -c 1, requests/s", b.redis_benchmark_requests), tool_text(rb), "", "",
                 "", ""});
    m.push_back({fmt::format("pgbench -c 1 -T {}, tps (fsync per commit)", b.pgbench_seconds), tool_text(pb_sync), "", "",
                 "", ""});
    m.push_back({fmt::format("pgbench -c 1 -T {}, tps (synchronous_commit=off)", b.pgbench_seconds), tool_text(pb_async),
                 "", "", "", ""});
    if (rb.figure && pb_sync.figure)
        m.push_back({"redis-benchmark ÷ pgbench, fsync per commit", ratio(*rb.figure, *pb_sync.figure),
                     fmt::format("≈{:.0f}×", b.documented_fsync_ratio), why_fsync, "", ""});
    if (rb.figure && pb_async.figure)
        m.push_back({"redis-benchmark ÷ pgbench, synchronous_commit=off", ratio(*rb.figure, *pb_async.figure),
                     fmt::format("≈{:.0f}×", b.documented_async_ratio), why_async, "", ""});
    lab.trials.push_back(std::move(trial));
}

}  // namespace relab
