// relab on servers it does not own, as in a user's CI: data that is not relab's is byte-identical
// afterwards, relab's own namespace is empty, and a URL's password appears nowhere relab writes or
// shows (reports, logs, temp files, child argv and process titles).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "outside_servers.h"
#include "process/child_process.h"
#include "relab_cli.h"

namespace outside_data_test {

namespace fs = std::filesystem;
using relab::PgSession;
using relab::RedisClient;
using relab::RedisEndpoint;
using relab::RedisReply;
using relab::test::OutsideServers;
using relab::test::slurp;

class OutsideDataTest : public relab::test::OutsideServersTest {};

// Keys of every type, in two databases, some with a TTL; one under "relab:" that is not a run's.
void seed_redis(const RedisEndpoint& base) {
    for (int db : {0, 3}) {
        RedisEndpoint ep = base;
        ep.db = db;
        RedisClient c(ep);
        const std::string p = fmt::format("app{}:", db);
        c.call({"SET", p + "string", "hello"});
        c.call({"SET", p + "session", "token-1", "PX", "3600000"});
        c.call({"SET", p + "counter", "41"});
        c.call({"RPUSH", p + "list", "a", "b", "c"});
        c.call({"SADD", p + "set", "x", "y"});
        c.call({"SADD", p + "intset", "1", "2", "3"});
        c.call({"ZADD", p + "zset", "1", "one", "2", "two"});
        c.call({"HSET", p + "hash", "f1", "v1", "f2", "v2"});
        c.call({"HSET", p + "cart", "sku", "7"});
        c.call({"PEXPIRE", p + "cart", "7200000"});
        c.call({"XADD", p + "orders", "*", "type", "created", "order_id", "42"});
        c.call({"XGROUP", "CREATE", p + "orders", "order-processor", "0"});
        c.call({"XREADGROUP", "GROUP", "order-processor", "theirs", "COUNT", "1", "STREAMS", p + "orders", ">"});
        c.call({"PFADD", p + "hll", "u1", "u2"});
        c.call({"SETBIT", p + "bitmap", "7", "1"});
        c.call({"GEOADD", p + "geo", "105.85", "21.03", "hanoi"});
        c.call({"SET", "relab:not-a-run:theirs", "keep me", "PX", "3600000"});
    }
}

// Every key of database `db` of the server (relab::test::redis_snapshot).
relab::test::RedisSnapshot redis_snapshot(const RedisEndpoint& base, int db) {
    RedisEndpoint ep = base;
    ep.db = db;
    return relab::test::redis_snapshot(ep);
}

// Tables of their own in a schema of their own, and one named like relab's in public.
void seed_pg(const relab::PgEndpoint& ep) {
    PgSession s(ep, "");
    s.exec("CREATE SCHEMA app");
    s.exec("CREATE TABLE app.orders (id bigint PRIMARY KEY, status text NOT NULL, version int NOT NULL, "
           "note jsonb, placed timestamptz, amount numeric(12,2), blob bytea)");
    s.exec("INSERT INTO app.orders SELECT g, 'paid', g % 3, jsonb_build_object('n', g), "
           "'2026-01-01'::timestamptz + g * interval '1 minute', g * 1.5, decode(md5(g::text), 'hex') "
           "FROM generate_series(1, 500) g");
    s.exec("CREATE INDEX ON app.orders (status)");
    s.exec("CREATE TABLE app.inbox (event_id text PRIMARY KEY, seen timestamptz DEFAULT now())");
    s.exec("INSERT INTO app.inbox (event_id) VALUES ('e1'), ('e2')");
    s.exec("CREATE SEQUENCE app.ticket START 100");
    s.exec("SELECT nextval('app.ticket')");
    s.exec("CREATE VIEW app.paid AS SELECT id FROM app.orders WHERE status = 'paid'");
    s.exec("CREATE TABLE public.orders (id bigint PRIMARY KEY, status text, version int)");
    s.exec("INSERT INTO public.orders VALUES (42, 'shipped', 3)");
}

// The server's own dump of every schema but relab's, and a checksum of each table's rows.
std::string pg_snapshot(const relab::PgEndpoint& ep, const fs::path& dir) {
    const auto pg_dump = relab::find_on_path("pg_dump");
    if (!pg_dump) throw std::runtime_error("pg_dump is not on PATH (postgresql-client)");
    const fs::path out = dir / "dump.sql";
    const std::string cmd = fmt::format("{} -h 127.0.0.1 -p {} -U {} --schema=app --schema=public {} > {} 2>{}", *pg_dump,
                                        ep.port, ep.user, ep.dbname, out.string(), (dir / "dump.err").string());
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("pg_dump failed: " + slurp(dir / "dump.err"));
    // pg_dump 15.14+ brackets its output with \restrict/\unrestrict and a random key: not data.
    std::string snapshot;
    std::istringstream lines(slurp(out));
    for (std::string line; std::getline(lines, line);)
        if (line.rfind("\\restrict ", 0) != 0 && line.rfind("\\unrestrict ", 0) != 0) snapshot += line + "\n";
    PgSession s(ep, "");
    for (const char* table : {"app.orders", "app.inbox", "public.orders"})
        snapshot += fmt::format("\n{} {}", table,
                                s.exec(fmt::format("SELECT count(*) || ' ' || md5(coalesce(string_agg(t::text, '|' ORDER BY "
                                                   "t::text), '')) FROM {} t",
                                                   table))
                                    .rows.at(0)
                                    .at(0));
    snapshot += "\nticket " + s.exec("SELECT last_value FROM app.ticket").rows.at(0).at(0);
    return snapshot;
}

// The first line where two snapshots differ, for a failure message shorter than the whole dump.
std::string first_difference(const std::string& a, const std::string& b) {
    std::istringstream x(a), y(b);
    std::string la, lb;
    for (int n = 1;; ++n) {
        const bool ga = static_cast<bool>(std::getline(x, la)), gb = static_cast<bool>(std::getline(y, lb));
        if (!ga && !gb) return "no difference";
        if (!ga || !gb || la != lb) return fmt::format("line {}: before \"{}\", after \"{}\"", n, ga ? la : "(end)", gb ? lb : "(end)");
    }
}

TEST_F(OutsideDataTest, data_that_is_not_relabs_is_byte_identical_after_a_lab_of_every_family) {
    const RedisEndpoint redis = s_servers->redis->endpoint();
    seed_redis(redis);
    seed_pg(s_servers->pg->endpoint());
    const auto redis0 = redis_snapshot(redis, 0), redis3 = redis_snapshot(redis, 3);
    ASSERT_EQ(redis0.size(), 14u);
    int with_ttl = 0;
    for (const auto& [k, v] : redis0) with_ttl += v.second > 0;
    ASSERT_EQ(with_ttl, 3);
    const std::string pg_before = pg_snapshot(s_servers->pg->endpoint(), m_dir);
    ASSERT_NE(pg_before.find("CREATE TABLE app.orders"), std::string::npos) << pg_before;

    // One lab of each family: the article's stream labs (plain, lock, outbox), a fault lab with
    // XAUTOCLAIM, Sentinel failover (servers of its own beside the run's), the Redis Cluster, the
    // idempotency labs (store, middleware, restart), and a generated load.
    const auto r = relab::test::run_relab(
        m_dir, fmt::format("08a-baseline 08c-s4a 08g-outbox-atomicity 08h-claim-cas 08i-failover s2-shard idem-race "
                           "idem-mw-double-click idem-restart-rdb --runs 1 {}",
                           s_servers->urls()));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(r.report.at("labs").size(), 9u);
    const auto load = relab::test::run_relab(m_dir, fmt::format("load-s3-s5 --orders 150 {}", s_servers->urls()));
    EXPECT_EQ(load.exit_code, 0) << load.out << load.err;

    EXPECT_EQ(redis_snapshot(redis, 0), redis0) << "db 0 changed";
    EXPECT_EQ(redis_snapshot(redis, 3), redis3) << "db 3 changed";
    const std::string pg_after = pg_snapshot(s_servers->pg->endpoint(), m_dir);
    EXPECT_TRUE(pg_after == pg_before) << first_difference(pg_before, pg_after);
    // relab's own namespace: no key of a run (relab:<run id>:…), no relab_ schema.
    EXPECT_EQ(s_servers->relab_keys(), 2) << "only the two relab:not-a-run keys the test put there";
    EXPECT_EQ(s_servers->relab_schemas_and_tables(), 0);
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp"));
}

// Every file under `dir` whose bytes contain `secret`.
std::vector<std::string> files_holding(const fs::path& dir, const std::string& secret) {
    std::vector<std::string> out;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (ec) break;
        std::error_code ignored;
        if (!it->is_regular_file(ignored)) continue;
        if (slurp(it->path()).find(secret) != std::string::npos) out.push_back(it->path().string());
    }
    return out;
}

TEST_F(OutsideDataTest, a_url_password_appears_nowhere) {
    const std::string redis_password = "Rpw-7f3c-never-shown";
    const std::string pg_password = "Ppw-91ab-never-shown";
    const RedisEndpoint open = s_servers->redis->endpoint();
    {
        RedisClient c(open);
        c.call({"CONFIG", "SET", "requirepass", redis_password});
    }
    RedisEndpoint locked = open;
    locked.password = redis_password;
    struct Unlock {
        RedisEndpoint ep;
        ~Unlock() {
            try {
                RedisClient(ep).call({"CONFIG", "SET", "requirepass", ""});
            } catch (...) {
            }
        }
    } unlock{locked};
    // A login role that must give its password over TCP (scram), the superuser still trusted.
    const auto& pg = s_servers->pg->endpoint();
    {
        PgSession s(pg, "");
        s.exec(fmt::format("CREATE ROLE relab_ci LOGIN PASSWORD '{}'", pg_password));
        s.exec(fmt::format("GRANT CREATE ON DATABASE {} TO relab_ci", pg.dbname));
        const std::string hba = s_servers->pg->data_dir() + "/pg_hba.conf";
        const std::string old = slurp(hba);
        std::ofstream(hba) << "host all relab_ci 127.0.0.1/32 scram-sha-256\n" << old;
        s.exec("SELECT pg_reload_conf()");
    }
    struct DropRole {
        relab::PgEndpoint ep;
        ~DropRole() {
            try {
                PgSession s(ep, "");
                s.exec("DROP OWNED BY relab_ci");
                s.exec("DROP ROLE relab_ci");
            } catch (...) {
            }
        }
    } drop_role{pg};
    const std::string redis_url = fmt::format("redis://:{}@127.0.0.1:{}/0", redis_password, open.port);
    const std::string pg_url = fmt::format("postgresql://relab_ci:{}@127.0.0.1:{}/{}", pg_password, pg.port, pg.dbname);
    {
        // The passwords are needed (the servers refuse a wrong one), and the error names the server
        // with the password masked.
        const std::string wrong = "Wrong-5e1d-never-shown";
        const auto refused = relab::test::run_relab(
            m_dir, fmt::format("08a-baseline --runs 1 --redis-url redis://:{}@127.0.0.1:{}/0 --pg-url {}", wrong,
                               open.port, pg_url),
            relab::test::CiReport::skip);
        EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
        EXPECT_NE(refused.err.find(fmt::format("redis://:***@127.0.0.1:{}", open.port)), std::string::npos) << refused.err;
        EXPECT_EQ((refused.out + refused.err).find(wrong), std::string::npos) << refused.err;
        const auto refused_pg = relab::test::run_relab(
            m_dir, fmt::format("08a-baseline --runs 1 --redis-url {} --pg-url postgresql://relab_ci:{}@127.0.0.1:{}/{}",
                               redis_url, wrong, pg.port, pg.dbname),
            relab::test::CiReport::skip);
        EXPECT_EQ(refused_pg.exit_code, 2) << refused_pg.out << refused_pg.err;
        EXPECT_NE(refused_pg.err.find("password authentication failed"), std::string::npos) << refused_pg.err;
        EXPECT_EQ((refused_pg.out + refused_pg.err).find(wrong), std::string::npos) << refused_pg.err;
    }

    // relab in the background; every 10 ms: the argv and title of each of its processes, and every
    // file under its TMPDIR (role configs, server configs, logs).
    const fs::path out_dir = m_dir / "reports";
    fs::create_directories(out_dir);
    const pid_t pid = start_relab(fmt::format(
            "run 08a-baseline 08c-s4a 08g-outbox-atomicity 08h-claim-cas idem-race idem-mw-double-click "
            "idem-restart-rdb s2-shard --runs 1 --timelines all --redis-url '{}' --pg-url '{}' --out-dir {} --json {}",
            redis_url, pg_url, out_dir.string(), (out_dir / "run.json").string()));
    std::set<std::string> leaks;
    int processes_seen = 0, files_seen = 0;
    std::set<std::string> files;
    int status = 0;
    for (;;) {
        if (waitpid(pid, &status, WNOHANG) == pid) break;
        const auto kids = relab::test::descendants(pid);
        if (!kids.empty()) {
            // relab itself, once it has started anything: its argv no longer shows the password.
            const std::string own = relab::test::proc_file(pid, "cmdline");
            for (const auto* pw : {&redis_password, &pg_password})
                if (own.find(*pw) != std::string::npos) leaks.insert("relab's own argv: " + own);
        }
        for (const auto& p : kids) {
            ++processes_seen;
            const std::string argv = relab::test::proc_file(p.pid, "cmdline");
            for (const auto* pw : {&redis_password, &pg_password})
                if (argv.find(*pw) != std::string::npos || p.comm.find(*pw) != std::string::npos)
                    leaks.insert(fmt::format("argv of {} ({}): {}", p.pid, p.comm, argv));
        }
        std::error_code ec;
        for (auto it = fs::recursive_directory_iterator(m_dir / "tmp", fs::directory_options::skip_permission_denied, ec);
             !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
            std::error_code ignored;
            if (!it->is_regular_file(ignored)) continue;
            files.insert(it->path().filename().string());
            const std::string bytes = slurp(it->path());
            for (const auto* pw : {&redis_password, &pg_password})
                if (bytes.find(*pw) != std::string::npos) leaks.insert("temp file " + it->path().string());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    files_seen = static_cast<int>(files.size());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << slurp(m_dir / "err.txt");
    EXPECT_GT(processes_seen, 0);
    EXPECT_TRUE(files.count("C1.json")) << "no role config was seen in the temp dir: the test looked at nothing";
    EXPECT_GT(files_seen, 5);

    // The reports rendered from the run: HTML, summary.md, junit.xml, beside text and JSON.
    const std::string report_cmd =
        fmt::format("{} report {} >>{} 2>>{}", RELAB_BINARY, out_dir.string(), (m_dir / "out.txt").string(),
                    (m_dir / "err.txt").string());
    ASSERT_EQ(std::system(report_cmd.c_str()), 0) << slurp(m_dir / "err.txt");
    for (const char* f : {"index.html", "summary.md", "junit.xml", "run.json", "08a-baseline.txt", "08a-baseline.json"})
        EXPECT_TRUE(fs::exists(out_dir / f)) << f << " was not written: the test would not look at it";
    for (const auto* pw : {&redis_password, &pg_password}) {
        for (const auto& f : files_holding(out_dir, *pw)) leaks.insert("report " + f);
        for (const char* log : {"out.txt", "err.txt"})
            if (slurp(m_dir / log).find(*pw) != std::string::npos) leaks.insert(std::string("relab's ") + log);
    }
    EXPECT_TRUE(leaks.empty()) << [&] {
        std::string s;
        for (const auto& l : leaks) s += "\n  " + l;
        return "the password appears in:" + s;
    }();
}

}  // namespace outside_data_test
