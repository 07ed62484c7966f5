// Real redis-server and PostgreSQL started and stopped by the code under test; real child processes.
#include <algorithm>
#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <hiredis.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <pqxx/pqxx>
#include <set>
#include <sstream>
#include <thread>

#include "process/child_process.h"
#include "process/proc_stat.h"
#include "util/interrupt.h"
#include "clients/cluster_client.h"
#include "servers/redis_cluster.h"
#include "servers/servers.h"
#include "process/temp_dir.h"

namespace relab {
namespace servers_test {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// ---------------------------------------------------------------- /proc helpers

// Running, i.e. present and not a zombie (an orphan's zombie waits for PID 1, which we cannot make reap).
bool alive(int pid) { return process_running(pid); }

// Our child still has a /proc entry (running or an unreaped zombie).
bool has_proc_entry(int pid) { return fs::exists("/proc/" + std::to_string(pid)); }

std::vector<int> processes_where(const std::function<bool(const ProcStat&)>& pred) {
    std::vector<int> pids;
    for (const auto& entry : fs::directory_iterator("/proc")) {
        std::string name = entry.path().filename().string();
        if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
        int pid = std::stoi(name);
        if (auto s = proc_stat(pid); s && pred(*s)) pids.push_back(pid);
    }
    return pids;
}

std::vector<int> our_children() {
    const int self = getpid();
    auto pids = processes_where([&](const ProcStat& s) { return s.ppid == self; });
    std::sort(pids.begin(), pids.end());
    return pids;
}

bool eventually(const std::function<bool()>& cond, std::chrono::milliseconds limit = 5000ms) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        if (cond()) return true;
        std::this_thread::sleep_for(10ms);
    }
    return cond();
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// ---------------------------------------------------------------- a raw redis command

// One command over a fresh hiredis connection; the reply as text ("PONG", "OK", "42", "a b" for
// arrays), or "ERR:<message>" / "CONN:<message>".
std::string redis_command(const RedisEndpoint& ep, const std::vector<std::string>& args) {
    timeval tv{2, 0};
    redisContext* c = redisConnectWithTimeout(ep.host.c_str(), ep.port, tv);
    if (!c || c->err) {
        std::string err = c ? c->errstr : "alloc";
        if (c) redisFree(c);
        return "CONN:" + err;
    }
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const auto& a : args) {
        argv.push_back(a.data());
        lens.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(redisCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lens.data()));
    std::string out;
    if (!r) {
        out = std::string("CONN:") + c->errstr;
    } else if (r->type == REDIS_REPLY_ERROR) {
        out = "ERR:" + std::string(r->str, r->len);
    } else if (r->type == REDIS_REPLY_INTEGER) {
        out = std::to_string(r->integer);
    } else if (r->type == REDIS_REPLY_ARRAY) {
        for (size_t i = 0; i < r->elements; ++i) {
            if (i) out += " ";
            out += std::string(r->element[i]->str ? r->element[i]->str : "", r->element[i]->len);
        }
    } else if (r->str) {
        out = std::string(r->str, r->len);
    }
    if (r) freeReplyObject(r);
    redisFree(c);
    return out;
}

// A listening socket on a free loopback port, closed on destruction.
class PortBlocker {
public:
    PortBlocker() {
        m_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        if (m_fd < 0 || bind(m_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(m_fd, 1) != 0 ||
            getsockname(m_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
            throw std::runtime_error("cannot block a port");
        m_port = ntohs(addr.sin_port);
    }
    ~PortBlocker() { close(m_fd); }
    int port() const { return m_port; }

private:
    int m_fd = -1;
    int m_port = 0;
};

// Points TempDir (and so the servers) at a private directory, to see exactly what they leave.
class ScopedTmpdir {
public:
    ScopedTmpdir() : m_dir("relab-test-tmpdir-") {
        if (const char* old = std::getenv("TMPDIR")) m_old = old;
        setenv("TMPDIR", m_dir.path().c_str(), 1);
        chmod(m_dir.path().c_str(), 0755);  // the postgres user must reach its directory in there
    }
    ~ScopedTmpdir() {
        if (m_old)
            setenv("TMPDIR", m_old->c_str(), 1);
        else
            unsetenv("TMPDIR");
    }
    const std::string& path() const { return m_dir.path(); }
    size_t entries() const { return std::distance(fs::directory_iterator(path()), fs::directory_iterator{}); }

private:
    TempDir m_dir;
    std::optional<std::string> m_old;
};

template <typename F>
std::string environment_error_of(F&& f) {
    try {
        f();
    } catch (const EnvironmentError& e) {
        return e.what();
    }
    return "";
}

// ================================================================ ServersTest

TEST(ServersTest, FindBinaryLooksOnPathAndInPostgresqlDirs) {
    std::string redis = find_binary("redis-server");
    EXPECT_TRUE(is_executable_file(redis)) << redis;
    std::string initdb = find_binary("initdb");  // Debian keeps it off PATH
    EXPECT_TRUE(is_executable_file(initdb)) << initdb;
    EXPECT_EQ(fs::path(initdb).filename(), "initdb");
    std::string msg = environment_error_of([] { find_binary("relab-no-such-binary"); });
    EXPECT_NE(msg.find("relab-no-such-binary not found"), std::string::npos) << msg;
    EXPECT_NE(msg.find("apt-get install -y"), std::string::npos) << msg;
}

TEST(ServersTest, FreeLoopbackPortCanBeBound) {
    int port = free_loopback_port();
    ASSERT_GT(port, 0);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    close(fd);
}

TEST(ServersTest, EmbeddedRedisAnswersPingAndLeavesNothingBehind) {
    int pid = 0;
    std::string dir;
    {
        EmbeddedRedis redis;
        pid = redis.pid();
        dir = redis.data_dir();
        const RedisEndpoint& ep = redis.endpoint();
        EXPECT_EQ(ep.host, "127.0.0.1");
        EXPECT_GT(ep.port, 0);
        EXPECT_EQ(redis_command(ep, {"PING"}), "PONG");
        EXPECT_EQ(redis_command(ep, {"CONFIG", "GET", "appendonly"}), "appendonly no");
        EXPECT_EQ(redis_command(ep, {"CONFIG", "GET", "save"}), "save ");
        EXPECT_EQ(redis_command(ep, {"CONFIG", "GET", "dir"}), "dir " + fs::canonical(dir).string());
        EXPECT_EQ(redis_command(ep, {"DEBUG", "SLEEP", "0"}), "OK");  // --enable-debug-command local
        EXPECT_TRUE(alive(pid));
        EXPECT_TRUE(fs::is_directory(dir));
    }
    EXPECT_FALSE(has_proc_entry(pid)) << "redis-server still running or not reaped";
    EXPECT_FALSE(fs::exists(dir));
}

TEST(ServersTest, EmbeddedRedisStopIsIdempotent) {
    EmbeddedRedis redis;
    int pid = redis.pid();
    RedisEndpoint ep = redis.endpoint();
    redis.stop();
    EXPECT_FALSE(has_proc_entry(pid));
    EXPECT_FALSE(fs::exists(redis.data_dir()));
    EXPECT_EQ(redis_command(ep, {"PING"}).rfind("CONN:", 0), 0u);
    redis.stop();
}

TEST(ServersTest, EmbeddedRedisConfigOverridesDefaults) {
    RedisOptions opts;
    opts.config = {{"appendonly", "yes"}, {"save", "60 1"}, {"maxmemory", "10mb"},
                   {"maxmemory-policy", "allkeys-lru"}};
    EmbeddedRedis redis(opts);
    const RedisEndpoint& ep = redis.endpoint();
    EXPECT_EQ(redis_command(ep, {"CONFIG", "GET", "appendonly"}), "appendonly yes");
    EXPECT_EQ(redis_command(ep, {"CONFIG", "GET", "save"}), "save 60 1");
    EXPECT_EQ(redis_command(ep, {"CONFIG", "GET", "maxmemory"}), "maxmemory 10485760");
    EXPECT_EQ(redis_command(ep, {"CONFIG", "GET", "maxmemory-policy"}), "maxmemory-policy allkeys-lru");
}

TEST(ServersTest, EmbeddedRedisWithRequirepassPutsThePasswordInTheEndpoint) {
    RedisOptions opts;
    opts.config = {{"requirepass", "pw123"}};
    EmbeddedRedis redis(opts);
    EXPECT_EQ(redis.endpoint().password, "pw123");
    EXPECT_EQ(redis.endpoint().display().find("pw123"), std::string::npos);
    EXPECT_EQ(redis_command(redis.endpoint(), {"PING"}).rfind("ERR:NOAUTH", 0), 0u);
}

TEST(ServersTest, TwoEmbeddedRedisGetDifferentPorts) {
    EmbeddedRedis a;
    EmbeddedRedis b;
    EXPECT_NE(a.endpoint().port, b.endpoint().port);
    EXPECT_NE(a.data_dir(), b.data_dir());
    EXPECT_EQ(redis_command(a.endpoint(), {"SET", "k", "a"}), "OK");
    EXPECT_EQ(redis_command(b.endpoint(), {"GET", "k"}), "");  // nil: a separate server
}

TEST(ServersTest, TakenRedisPortIsReplacedByAFreeOne) {
    PortBlocker blocker;
    RedisOptions opts;
    opts.preferred_port = blocker.port();
    EmbeddedRedis redis(opts);
    EXPECT_NE(redis.endpoint().port, blocker.port());
    EXPECT_EQ(redis_command(redis.endpoint(), {"PING"}), "PONG");
}

TEST(ServersTest, PreferredRedisPortIsUsedWhenFree) {
    int port = free_loopback_port();
    RedisOptions opts;
    opts.preferred_port = port;
    EmbeddedRedis redis(opts);
    EXPECT_EQ(redis.endpoint().port, port);
}

TEST(ServersTest, BadRedisSettingGivesEnvironmentErrorWithTheLogAndLeavesNothing) {
    // Servers shared by other suites in this binary may be running; only new ones count.
    const auto children_before = our_children();
    ScopedTmpdir tmp;
    RedisOptions opts;
    opts.config = {{"maxmemory-policy", "bogus-policy"}};
    std::string msg = environment_error_of([&] { EmbeddedRedis redis(opts); });
    std::cout << "[ message  ] " << msg << "\n";
    EXPECT_NE(msg.find("exited with status"), std::string::npos) << msg;
    EXPECT_NE(msg.find("bogus-policy"), std::string::npos) << msg;  // from redis' own output
    EXPECT_EQ(our_children(), children_before);
    EXPECT_EQ(tmp.entries(), 0u);
}

TEST(ServersTest, SettingsRelabChoosesCannotBeConfigured) {
    // Servers shared by other suites in this binary may be running; only new ones count.
    const auto children_before = our_children();
    RedisOptions opts;
    opts.config = {{"port", "1234"}};
    EXPECT_THROW(EmbeddedRedis{opts}, std::invalid_argument);
    PgOptions pg_opts;
    pg_opts.config = {{"unix_socket_directories", "/tmp"}};
    EXPECT_THROW(EmbeddedPostgres{pg_opts}, std::invalid_argument);
    EXPECT_EQ(our_children(), children_before);
}

TEST(ServersTest, InterruptDuringRedisStartUnwindsAndCleansUp) {
    // Servers shared by other suites in this binary may be running; only new ones count.
    const auto children_before = our_children();
    ScopedTmpdir tmp;
    struct sigaction old_int {};
    sigaction(SIGINT, nullptr, &old_int);
    install_interrupt_handlers();
    raise(SIGINT);
    EXPECT_THROW(EmbeddedRedis{}, Interrupted);
    EXPECT_THROW(EmbeddedPostgres{}, Interrupted);
    clear_interrupt();
    sigaction(SIGINT, &old_int, nullptr);
    EXPECT_EQ(our_children(), children_before);
    EXPECT_EQ(tmp.entries(), 0u);
}

// ---------------------------------------------------------------- Redis Cluster

// CLUSTER INFO's field, "" when absent.
std::string cluster_info_field(const RedisEndpoint& ep, const std::string& name) {
    const std::string info = redis_command(ep, {"CLUSTER", "INFO"});
    const auto at = info.find(name + ":");
    if (at == std::string::npos) return "";
    const auto end = info.find_first_of("\r\n", at);
    return info.substr(at + name.size() + 1, end - at - name.size() - 1);
}

TEST(RedisClusterTest, ThreeMastersFormWithRedisClisSplitAndLeaveNothingBehind) {
    const auto children_before = our_children();
    ScopedTmpdir tmp;
    std::vector<int> pids;
    std::vector<std::string> dirs;
    {
        RedisClusterOptions opts;
        opts.node_timeout = 2000ms;
        EmbeddedRedisCluster cluster(opts);
        ASSERT_EQ(cluster.size(), 3u);
        EXPECT_GE(cluster.formed_after().count(), 0);
        for (size_t i = 0; i < cluster.size(); ++i) {
            const RedisEndpoint ep = cluster.endpoints()[i];
            pids.push_back(cluster.node(i).pid());
            dirs.push_back(cluster.node(i).data_dir());
            EXPECT_EQ(cluster_info_field(ep, "cluster_state"), "ok") << i;
            EXPECT_EQ(cluster_info_field(ep, "cluster_known_nodes"), "3") << i;
            EXPECT_EQ(redis_command(ep, {"CONFIG", "GET", "cluster-node-timeout"}), "cluster-node-timeout 2000");
            EXPECT_EQ(redis_command(ep, {"CONFIG", "GET", "cluster-port"}),
                      "cluster-port " + std::to_string(cluster.node(i).cluster_bus_port()));
            EXPECT_NE(cluster.node(i).cluster_bus_port(), ep.port);
            EXPECT_TRUE(fs::exists(cluster.node(i).data_dir() + "/nodes.conf"));
        }
        EXPECT_EQ(cluster.slots(0).text(), "0-5460");
        EXPECT_EQ(cluster.slots(2).text(), "10923-16383");

        ClusterClient client(cluster.endpoints(), ClusterClientOptions::refusing());
        EXPECT_EQ(client.node_of_slot(0), 0u);
        EXPECT_EQ(client.node_of_slot(5461), 1u);
        EXPECT_EQ(client.node_of_slot(16383), 2u);
        // Every key is taken by the node relab routes it to; sent anywhere else, the cluster redirects.
        for (const std::string key : {"foo", "bar", "idem:v1:{user:7}:8f3a", "lock:v1:7:place-order", "zz"}) {
            EXPECT_EQ(client.command(key, {"SET", key, "v"}).to_string(), "OK") << key;
            const size_t other = (client.node_of_key(key) + 1) % client.size();
            const std::string moved = "ERR:MOVED " + std::to_string(key_slot(key)) + " ";
            EXPECT_EQ(redis_command(cluster.endpoints()[other], {"GET", key}).rfind(moved, 0), 0u) << key;
        }
        EXPECT_EQ(client.command("foo", {"MGET", "foo", "bar"}).str.rfind("CROSSSLOT", 0), 0u);
    }
    for (size_t i = 0; i < pids.size(); ++i) {
        EXPECT_FALSE(has_proc_entry(pids[i])) << "node " << i + 1 << " still running or not reaped";
        EXPECT_FALSE(fs::exists(dirs[i]));
    }
    EXPECT_EQ(our_children(), children_before);
    EXPECT_EQ(tmp.entries(), 0u);
}

TEST(RedisClusterTest, ANodeWhosePortIsTakenMovesToAFreeOneAndRelabChoosesItsBus) {
    PortBlocker blocker;
    RedisOptions opts;
    opts.cluster = true;
    opts.preferred_port = blocker.port();
    EmbeddedRedis node(opts);
    EXPECT_NE(node.endpoint().port, blocker.port());
    EXPECT_EQ(cluster_info_field(node.endpoint(), "cluster_state"), "fail");  // no slots yet
    EXPECT_EQ(redis_command(node.endpoint(), {"CONFIG", "GET", "cluster-port"}),
              "cluster-port " + std::to_string(node.cluster_bus_port()));
    opts.preferred_port = 0;
    opts.config = {{"cluster-port", "7000"}};
    EXPECT_THROW(EmbeddedRedis{opts}, std::invalid_argument);
}

TEST(RedisClusterTest, AClusterThatDoesNotFormInTimeIsAnEnvironmentErrorAndLeavesNothing) {
    const auto children_before = our_children();
    ScopedTmpdir tmp;
    RedisClusterOptions opts;
    opts.masters = 2;
    opts.form_timeout = 300ms;  // a master reports ok only 2 s after its start
    const std::string msg = environment_error_of([&] { EmbeddedRedisCluster cluster(opts); });
    std::cout << "[ message  ] " << msg << "\n";
    EXPECT_NE(msg.find("did not reach cluster_state:ok on every node within 300 ms"), std::string::npos) << msg;
    EXPECT_NE(msg.find("node 2 (127.0.0.1:"), std::string::npos) << msg;
    EXPECT_EQ(our_children(), children_before);
    EXPECT_EQ(tmp.entries(), 0u);
}

TEST(RedisClusterTest, InterruptWhileTheClusterFormsUnwindsAndCleansUp) {
    const auto children_before = our_children();
    ScopedTmpdir tmp;
    struct sigaction old_int {};
    sigaction(SIGINT, nullptr, &old_int);
    install_interrupt_handlers();
    // Ctrl-C while the nodes wait out their 2 s before cluster_state:ok.
    std::thread ctrl_c([] {
        std::this_thread::sleep_for(700ms);
        kill(getpid(), SIGINT);
    });
    EXPECT_THROW(EmbeddedRedisCluster{}, Interrupted);
    ctrl_c.join();
    clear_interrupt();
    sigaction(SIGINT, &old_int, nullptr);
    EXPECT_EQ(our_children(), children_before);
    EXPECT_EQ(tmp.entries(), 0u);
}

TEST(RedisClusterTest, MissingRedisServerIsAnEnvironmentErrorNamingThePackage) {
    const auto children_before = our_children();
    ScopedTmpdir tmp;
    const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
    setenv("PATH", tmp.path().c_str(), 1);
    const std::string msg = environment_error_of([] { EmbeddedRedisCluster cluster; });
    setenv("PATH", old_path.c_str(), 1);
    EXPECT_NE(msg.find("redis-server not found"), std::string::npos) << msg;
    EXPECT_NE(msg.find("apt-get install -y redis-server"), std::string::npos) << msg;
    EXPECT_EQ(our_children(), children_before);
    EXPECT_EQ(tmp.entries(), 0u);
}

TEST(ServersTest, EmbeddedPostgresAnswersSelectAndLeavesNothingBehind) {
    int pid = 0;
    std::string dir;
    std::vector<int> postmaster_children;
    std::chrono::steady_clock::time_point t_stop;
    {
        auto t0 = std::chrono::steady_clock::now();
        EmbeddedPostgres pg;
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
        std::cout << "[ timing   ] embedded PostgreSQL started in " << ms.count() << " ms\n";
        pid = pg.pid();
        dir = pg.data_dir();
        const PgEndpoint& ep = pg.endpoint();
        EXPECT_EQ(ep.host, "127.0.0.1");
        EXPECT_EQ(ep.dbname, "relab");
        if (geteuid() == 0) {
            EXPECT_EQ(ep.user, std::getenv("RELAB_PG_USER") ? std::getenv("RELAB_PG_USER") : "postgres");
        }
        pqxx::connection conn(ep.conninfo());
        pqxx::nontransaction tx(conn);
        EXPECT_EQ(tx.exec1("SELECT 1")[0].as<int>(), 1);
        EXPECT_EQ(tx.exec1("SELECT current_database()")[0].as<std::string>(), "relab");
        EXPECT_EQ(tx.exec1("SELECT current_user")[0].as<std::string>(), ep.user);
        EXPECT_EQ(tx.exec1("SHOW fsync")[0].as<std::string>(), "on");  // not forced off
        EXPECT_EQ(tx.exec1("SHOW listen_addresses")[0].as<std::string>(), "127.0.0.1");
        EXPECT_TRUE(alive(pid));
        // The session above is served by a backend, a child of the postmaster (in its own group).
        postmaster_children = processes_where([&](const ProcStat& s) { return s.ppid == pid; });
        EXPECT_GE(postmaster_children.size(), 2u);
        t_stop = std::chrono::steady_clock::now();
    }
    auto stop_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t_stop);
    std::cout << "[ timing   ] embedded PostgreSQL stopped in " << stop_ms.count() << " ms\n";
    EXPECT_FALSE(has_proc_entry(pid)) << "postmaster still running or not reaped";
    EXPECT_TRUE(eventually([&] {
        return std::none_of(postmaster_children.begin(), postmaster_children.end(), alive);
    }));
    EXPECT_FALSE(fs::exists(dir));
    EXPECT_FALSE(fs::exists(fs::path(dir).parent_path()));
}

TEST(ServersTest, EmbeddedPostgresTakesSettingsAndReplacesATakenPort) {
    PortBlocker blocker;
    PgOptions opts;
    opts.preferred_port = blocker.port();
    opts.config = {{"fsync", "off"}, {"max_connections", "20"}};
    EmbeddedPostgres pg(opts);
    EXPECT_NE(pg.endpoint().port, blocker.port());
    pqxx::connection conn(pg.endpoint().conninfo());
    pqxx::nontransaction tx(conn);
    EXPECT_EQ(tx.exec1("SHOW fsync")[0].as<std::string>(), "off");
    EXPECT_EQ(tx.exec1("SHOW max_connections")[0].as<std::string>(), "20");
}

TEST(ServersTest, BadPostgresSettingGivesEnvironmentErrorAndLeavesNothing) {
    // Servers shared by other suites in this binary may be running; only new ones count.
    const auto children_before = our_children();
    ScopedTmpdir tmp;
    PgOptions opts;
    opts.config = {{"no_such_setting_xyz", "1"}};
    std::string msg = environment_error_of([&] { EmbeddedPostgres pg(opts); });
    std::cout << "[ message  ] " << msg << "\n";
    EXPECT_NE(msg.find("no_such_setting_xyz"), std::string::npos) << msg;
    EXPECT_EQ(our_children(), children_before);
    EXPECT_EQ(tmp.entries(), 0u);
}

TEST(ServersTest, MissingPostgresUserIsAnEnvironmentError) {
    if (geteuid() != 0) GTEST_SKIP() << "only root switches to an unprivileged user";
    setenv("RELAB_PG_USER", "relab-no-such-user", 1);
    std::string msg = environment_error_of([] { EmbeddedPostgres pg; });
    std::cout << "[ message  ] " << msg << "\n";
    unsetenv("RELAB_PG_USER");
    EXPECT_NE(msg.find("relab-no-such-user"), std::string::npos) << msg;
    EXPECT_NE(msg.find("does not exist"), std::string::npos) << msg;
    EXPECT_NE(msg.find("apt-get install -y postgresql"), std::string::npos) << msg;
}

TEST(ServersTest, ExternalRedisThatIsDownGivesEnvironmentErrorWithoutPassword) {
    // Servers shared by other suites in this binary may be running; only new ones count.
    const auto children_before = our_children();
    int port = free_loopback_port();
    std::string url = "redis://:secret@127.0.0.1:" + std::to_string(port);
    std::string msg = environment_error_of([&] { start_servers(url, ""); });
    std::cout << "[ message  ] " << msg << "\n";
    EXPECT_NE(msg.find("cannot reach redis at redis://:***@127.0.0.1:" + std::to_string(port)), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("connection refused"), std::string::npos) << msg;
    EXPECT_NE(msg.find("drop --redis-url"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("secret"), std::string::npos) << msg;
    EXPECT_EQ(our_children(), children_before);  // nothing embedded was started before the check
}

TEST(ServersTest, ExternalPostgresThatIsDownGivesEnvironmentErrorWithoutPassword) {
    // Servers shared by other suites in this binary may be running; only new ones count.
    const auto children_before = our_children();
    int port = free_loopback_port();
    std::string url = "postgresql://alice:secret@127.0.0.1:" + std::to_string(port) + "/db";
    std::string msg = environment_error_of([&] { start_servers("", url); });
    std::cout << "[ message  ] " << msg << "\n";
    EXPECT_NE(msg.find("cannot reach postgresql at postgresql://alice:***@127.0.0.1:" + std::to_string(port) + "/db"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("drop --pg-url"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("secret"), std::string::npos) << msg;
    EXPECT_EQ(our_children(), children_before);
}

TEST(ServersTest, ExternalRedisWithWrongPasswordIsRefused) {
    RedisOptions opts;
    opts.config = {{"requirepass", "right"}};
    EmbeddedRedis redis(opts);
    std::string url = "redis://:wrong@127.0.0.1:" + std::to_string(redis.endpoint().port);
    std::string msg = environment_error_of([&] { start_servers(url, ""); });
    EXPECT_NE(msg.find("cannot reach redis"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("wrong@"), std::string::npos) << msg;
}

TEST(ServersTest, StartServersEmbedsWithoutUrlsAndUsesUrlsWhenGiven) {
    int redis_pid = 0, pg_pid = 0;
    {
        ServerSet embedded = start_servers("", "");
        ASSERT_TRUE(embedded.embedded_redis && embedded.embedded_pg);
        EXPECT_FALSE(embedded.redis_external);
        EXPECT_FALSE(embedded.pg_external);
        redis_pid = embedded.embedded_redis->pid();
        pg_pid = embedded.embedded_pg->pid();
        EXPECT_EQ(redis_command(embedded.redis, {"PING"}), "PONG");

        ServerSet external = start_servers(embedded.redis.display(), embedded.pg.display());
        EXPECT_TRUE(external.redis_external);
        EXPECT_TRUE(external.pg_external);
        EXPECT_FALSE(external.embedded_redis);
        EXPECT_FALSE(external.embedded_pg);
        EXPECT_EQ(external.redis.port, embedded.redis.port);
        EXPECT_EQ(external.pg.port, embedded.pg.port);
        EXPECT_EQ(external.pg.user, embedded.pg.user);
        EXPECT_EQ(external.pg.dbname, "relab");
        pqxx::connection conn(external.pg.conninfo());
        pqxx::nontransaction tx(conn);
        EXPECT_EQ(tx.exec1("SELECT 1")[0].as<int>(), 1);
    }
    EXPECT_FALSE(has_proc_entry(redis_pid));
    EXPECT_FALSE(has_proc_entry(pg_pid));
}

// ================================================================ ChildProcessTest

ChildOptions shell(const std::string& script) {
    ChildOptions o;
    o.exe = "sh";
    o.args = {"-c", script};
    return o;
}

TEST(ChildProcessTest, ReportsExitCode) {
    ChildProcess c(shell("exit 3"));
    EXPECT_GT(c.pid(), 0);
    ASSERT_TRUE(c.wait_for(5000ms));
    EXPECT_EQ(c.exit_code(), 3);
    EXPECT_FALSE(c.running());
    EXPECT_FALSE(has_proc_entry(c.pid()));
}

TEST(ChildProcessTest, ExitCodeIsEmptyWhileRunning) {
    ChildProcess c(shell("sleep 30"));
    EXPECT_TRUE(c.running());
    EXPECT_FALSE(c.wait_for(50ms));
    EXPECT_EQ(c.exit_code(), std::nullopt);
}

TEST(ChildProcessTest, KilledBySignalReports128PlusSignal) {
    ChildProcess c(shell("kill -KILL $$"));
    ASSERT_TRUE(c.wait_for(5000ms));
    EXPECT_EQ(c.exit_code(), 128 + SIGKILL);
}

TEST(ChildProcessTest, TerminateStopsWithTheFirstSignalWhenHonoured) {
    ChildProcess c(shell("exec sleep 30"));
    auto t0 = std::chrono::steady_clock::now();
    c.terminate(5000ms, SIGTERM);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 2000ms);
    EXPECT_EQ(c.exit_code(), 128 + SIGTERM);
    EXPECT_FALSE(has_proc_entry(c.pid()));
}

TEST(ChildProcessTest, TerminateKillsAProcessIgnoringSigtermAndReapsIt) {
    TempDir dir;
    const std::string ready = dir.path() + "/ready";
    ChildProcess c(shell("trap '' TERM; touch " + ready + "; exec sleep 30"));
    ASSERT_TRUE(eventually([&] { return fs::exists(ready); }));
    const int pid = c.pid();
    auto t0 = std::chrono::steady_clock::now();
    c.terminate(300ms, SIGTERM);
    auto elapsed = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(elapsed, 300ms);  // SIGTERM was ignored for the whole grace period
    EXPECT_LT(elapsed, 3000ms);
    EXPECT_EQ(c.exit_code(), 128 + SIGKILL);
    EXPECT_FALSE(has_proc_entry(pid)) << "zombie left behind";
    c.terminate();  // idempotent
}

TEST(ChildProcessTest, DestructorStopsAndReaps) {
    int pid = 0;
    {
        ChildProcess c(shell("exec sleep 30"));
        pid = c.pid();
        EXPECT_TRUE(alive(pid));
    }
    EXPECT_FALSE(has_proc_entry(pid));
}

TEST(ChildProcessTest, MovedChildIsOwnedOnce) {
    ChildProcess a(shell("exec sleep 30"));
    const int pid = a.pid();
    ChildProcess b(std::move(a));
    EXPECT_EQ(b.pid(), pid);
    EXPECT_FALSE(a.running());  // NOLINT(bugprone-use-after-move): the moved-from object is empty
    EXPECT_TRUE(b.running());
    b.terminate();
    EXPECT_FALSE(has_proc_entry(pid));
}

TEST(ChildProcessTest, RedirectsOutputToFilesAndAddsEnvironment) {
    TempDir dir;
    ChildOptions o = shell("echo out $RELAB_TEST_VALUE; echo err >&2; pwd");
    o.stdout_path = dir.path() + "/out.txt";
    o.stderr_path = dir.path() + "/err.txt";
    o.env = {{"RELAB_TEST_VALUE", "42"}};
    o.working_dir = dir.path();
    ChildProcess c(o);
    ASSERT_TRUE(c.wait_for(5000ms));
    EXPECT_EQ(c.exit_code(), 0);
    EXPECT_EQ(slurp(o.stdout_path), "out 42\n" + fs::canonical(dir.path()).string() + "\n");
    EXPECT_EQ(slurp(o.stderr_path), "err\n");
}

TEST(ChildProcessTest, StdoutAndStderrMayShareAFile) {
    TempDir dir;
    ChildOptions o = shell("echo one; echo two >&2; echo three");
    o.stdout_path = o.stderr_path = dir.path() + "/both.txt";
    ChildProcess c(o);
    ASSERT_TRUE(c.wait_for(5000ms));
    EXPECT_EQ(slurp(o.stdout_path), "one\ntwo\nthree\n");
}

TEST(ChildProcessTest, MissingExecutableIsAnEnvironmentError) {
    ChildOptions o;
    o.exe = "relab-no-such-program";
    std::string msg = environment_error_of([&] { ChildProcess c(o); });
    EXPECT_NE(msg.find("relab-no-such-program"), std::string::npos) << msg;
    EXPECT_NE(msg.find("not found on PATH"), std::string::npos) << msg;
    o.exe = "/nonexistent/relab-program";
    msg = environment_error_of([&] { ChildProcess c(o); });
    EXPECT_NE(msg.find("/nonexistent/relab-program"), std::string::npos) << msg;
}

TEST(ChildProcessTest, ExecFailureIsReportedAndTheChildReaped) {
    // Servers shared by other suites in this binary may be running; only new ones count.
    const auto children_before = our_children();
    TempDir dir;
    const std::string bogus = dir.path() + "/not-a-program";
    {
        std::ofstream out(bogus);
        out << "\x7f" << "ELF garbage";
    }
    chmod(bogus.c_str(), 0755);
    ChildOptions o;
    o.exe = bogus;
    std::string msg = environment_error_of([&] { ChildProcess c(o); });
    EXPECT_NE(msg.find("execve"), std::string::npos) << msg;
    EXPECT_NE(msg.find("not-a-program"), std::string::npos) << msg;
    EXPECT_EQ(our_children(), children_before);
}

TEST(ChildProcessTest, FailedSetupStepInTheChildIsNamedAndTheChildReaped) {
    // chdir runs in relab's on_exec_setup hook, after the fork: its failure travels back through
    // Boost.Process, names the step and the program, and leaves no zombie.
    const auto children_before = our_children();
    ChildOptions o = shell("true");
    o.working_dir = "/nonexistent-relab-dir";
    std::string msg = environment_error_of([&] { ChildProcess c(o); });
    EXPECT_NE(msg.find("cannot start sh"), std::string::npos) << msg;
    EXPECT_NE(msg.find("working directory"), std::string::npos) << msg;
    EXPECT_NE(msg.find("No such file or directory"), std::string::npos) << msg;
    EXPECT_EQ(our_children(), children_before);
}

TEST(ChildProcessTest, DescriptorsOpenedWithoutCloexecDoNotLeakIntoTheChild) {
    TempDir dir;
    int fd = open(dir.path().c_str(), O_RDONLY | O_DIRECTORY);  // no O_CLOEXEC
    ASSERT_GE(fd, 0);
    int high = fcntl(fd, F_DUPFD, 100);  // F_DUPFD leaves FD_CLOEXEC clear
    close(fd);
    ASSERT_GE(high, 100);
    const std::string proc_fd = "/proc/$$/fd/" + std::to_string(high);
    ChildOptions o = shell("if [ -e " + proc_fd + " ]; then echo leaked; else echo clean; fi");
    o.stdout_path = dir.path() + "/out.txt";
    ChildProcess c(o);
    ASSERT_TRUE(c.wait_for(5000ms));
    close(high);
    EXPECT_EQ(slurp(o.stdout_path), "clean\n");
}

TEST(ChildProcessTest, UnwritableOutputFileIsAnEnvironmentError) {
    const auto children_before = our_children();
    ChildOptions o = shell("true");
    o.stdout_path = "/nonexistent-dir/out.txt";
    std::string msg = environment_error_of([&] { ChildProcess c(o); });
    EXPECT_NE(msg.find("/nonexistent-dir/out.txt"), std::string::npos) << msg;
    EXPECT_EQ(our_children(), children_before);
}

TEST(ChildProcessTest, RunsAsAnotherUser) {
    if (geteuid() != 0) GTEST_SKIP() << "switching users needs root";
    struct passwd* pw = getpwnam("postgres");
    if (!pw) GTEST_SKIP() << "no user postgres";
    // The user's groups as initgroups() would set them (Debian's postgres is also in ssl-cert),
    // and none of root's.
    std::vector<gid_t> groups(64);
    int n = static_cast<int>(groups.size());
    ASSERT_GE(getgrouplist(pw->pw_name, pw->pw_gid, groups.data(), &n), 0);
    std::set<std::string> expected_groups;
    for (int i = 0; i < n; ++i) expected_groups.insert(std::to_string(groups[static_cast<size_t>(i)]));
    TempDir dir;
    chmod(dir.path().c_str(), 0777);
    ChildOptions o = shell("id -u; id -g; echo $HOME; echo $USER $LOGNAME; id -G");
    o.run_as_user = "postgres";
    o.stdout_path = dir.path() + "/out.txt";
    ChildProcess c(o);
    ASSERT_TRUE(c.wait_for(5000ms));
    EXPECT_EQ(c.exit_code(), 0);
    std::istringstream out(slurp(o.stdout_path));
    std::string uid, gid, home, user, group_line;
    std::getline(out, uid);
    std::getline(out, gid);
    std::getline(out, home);
    std::getline(out, user);
    std::getline(out, group_line);
    EXPECT_EQ(uid, std::to_string(pw->pw_uid));
    EXPECT_EQ(gid, std::to_string(pw->pw_gid));
    EXPECT_EQ(home, pw->pw_dir);
    EXPECT_EQ(user, "postgres postgres");
    std::istringstream group_words(group_line);
    std::set<std::string> got_groups{std::istream_iterator<std::string>(group_words), std::istream_iterator<std::string>()};
    EXPECT_EQ(got_groups, expected_groups) << group_line;
}

TEST(ChildProcessTest, UnknownUserIsAnEnvironmentError) {
    ChildOptions o = shell("true");
    o.run_as_user = "relab-no-such-user";
    std::string msg = environment_error_of([&] { ChildProcess c(o); });
    EXPECT_NE(msg.find("relab-no-such-user"), std::string::npos) << msg;
}

TEST(ChildProcessTest, OwnProcessGroupTerminateKillsGrandchildren) {
    TempDir dir;
    const std::string pid_file = dir.path() + "/grandchild";
    ChildOptions o = shell("sleep 30 & echo $! > " + pid_file + ".tmp; mv " + pid_file + ".tmp " + pid_file + "; wait");
    o.own_process_group = true;
    ChildProcess c(o);
    ASSERT_TRUE(eventually([&] { return fs::exists(pid_file); }));
    int grandchild = std::stoi(slurp(pid_file));
    EXPECT_TRUE(alive(grandchild));
    EXPECT_EQ(proc_stat(grandchild)->pgrp, c.pid());
    c.terminate(2000ms, SIGTERM);
    EXPECT_FALSE(has_proc_entry(c.pid()));
    EXPECT_TRUE(eventually([&] { return !alive(grandchild); }));
}

TEST(ChildProcessTest, OwnProcessGroupIgnoringSigtermIsKilledWholeAndReaped) {
    // The shell and its grandchild both ignore SIGTERM: only the SIGKILL to the group after the
    // grace period stops them, and the blocking wait leaves no zombie of the child.
    TempDir dir;
    const std::string pid_file = dir.path() + "/grandchild";
    ChildOptions o = shell("trap '' TERM; sleep 30 & echo $! > " + pid_file + ".tmp; mv " + pid_file + ".tmp " +
                           pid_file + "; wait");
    o.own_process_group = true;
    ChildProcess c(o);
    ASSERT_TRUE(eventually([&] { return fs::exists(pid_file); }));
    const int grandchild = std::stoi(slurp(pid_file));
    EXPECT_EQ(proc_stat(grandchild)->pgrp, c.pid());
    c.terminate(300ms, SIGTERM);
    EXPECT_EQ(c.exit_code(), 128 + SIGKILL);
    EXPECT_FALSE(has_proc_entry(c.pid())) << "zombie left behind";
    EXPECT_TRUE(eventually([&] { return !alive(grandchild); }));
}

TEST(ChildProcessTest, ChildDiesWhenItsParentIsKilled) {
    // A forked copy of this test spawns a child and is then SIGKILLed, as relab might be.
    int pipe_fds[2];
    ASSERT_EQ(pipe(pipe_fds), 0);
    pid_t parent = fork();
    ASSERT_GE(parent, 0);
    if (parent == 0) {
        close(pipe_fds[0]);
        int pid = -1;
        try {
            ChildProcess c(shell("exec sleep 30"));
            pid = c.pid();
            if (write(pipe_fds[1], &pid, sizeof pid) != sizeof pid) _exit(1);
            pause();  // until SIGKILL: no destructor runs
        } catch (...) {
        }
        _exit(1);
    }
    close(pipe_fds[1]);
    int child = -1;
    ASSERT_EQ(read(pipe_fds[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
    close(pipe_fds[0]);
    EXPECT_TRUE(alive(child));
    kill(parent, SIGKILL);
    int status = 0;
    waitpid(parent, &status, 0);
    EXPECT_TRUE(eventually([&] { return !alive(child); }, 3000ms)) << "orphan " << child << " survived";
    if (alive(child)) kill(child, SIGKILL);
}

}  // namespace servers_test
}  // namespace relab
