// The role spawner (process/role_spawner.h): roles forked from `relab role --spawner` run the role's
// code on the real servers, report their exit status and stderr as an exec'd role does, take
// relab's signals, and go with the spawner; nothing of them is left.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "clients/pg_client.h"
#include "process/proc_stat.h"
#include "process/real_clock.h"
#include "clients/redis_client.h"
#include "scenario/loader/loader.h"
#include "servers/servers.h"
#include "process/temp_dir.h"
#include "roles/role_settings.h"
#include "process/role_process.h"
#include "process/role_spawner.h"
#include "scenario/scenario.h"

namespace relab {
namespace role_spawner_test {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

bool process_exists(int pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

class RoleSpawnerTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() { s_servers = new ServerSet(start_servers("", "")); }
    static void TearDownTestSuite() {
        delete s_servers;
        s_servers = nullptr;
    }
    void SetUp() override {
        m_prefix = fmt::format("relab:spawnertest:{:08x}:", std::random_device{}());
        m_admin = std::make_unique<RedisClient>(s_servers->redis);
    }
    void TearDown() override { delete_keys_with_prefix(*m_admin, m_prefix); }

    // 08a's consumer C1 on the suite's servers: it blocks in XREADGROUP until told to stop.
    RoleConfig consumer() {
        const Scenario s = load_scenario(std::string(RELAB_SOURCE_DIR) + "/scenarios/08a-baseline.json");
        m_admin->call({"XGROUP", "CREATE", m_prefix + s.flow().stream.key, s.flow().stream.group, "$", "MKSTREAM"});
        RoleConfig c;
        c.role = "consumer";
        c.actor = "C1";
        c.seed = 1;
        c.redis = s_servers->redis;
        c.pg = s_servers->pg;
        c.schema = "public";
        c.key_prefix = m_prefix;
        c.barrier_prefix = m_prefix;
        c.settings = role_settings(s);
        c.history_path = (fs::path(m_dir.path()) / "C1.jsonl").string();
        return c;
    }

    // Sent, then waited for: spawn() returns before the spawner answers.
    std::unique_ptr<RoleProcess> spawn(RoleSpawner& spawner, const RoleConfig& c) {
        auto role = spawn_role_process(&spawner, RELAB_BINARY, c, m_dir.path(), m_dir.path() + "/C1.err");
        EXPECT_EQ(role->pid(), -1) << "answered before it was asked";
        role->started();
        EXPECT_GT(role->pid(), 0);
        return role;
    }

    // True once C1 is blocked in XREADGROUP on the server (CLIENT LIST), as the barrier sees it.
    bool blocked_within(milliseconds d) {
        const auto deadline = std::chrono::steady_clock::now() + d;
        while (std::chrono::steady_clock::now() < deadline) {
            const std::string list = m_admin->call({"CLIENT", "LIST"}).str;
            std::istringstream lines(list);
            for (std::string line; std::getline(lines, line);)
                if (line.find(" name=" + m_prefix + "C1 ") != std::string::npos &&
                    line.find("cmd=xreadgroup") != std::string::npos && line.find("flags=b") != std::string::npos)
                    return true;
            std::this_thread::sleep_for(milliseconds(5));
        }
        return false;
    }

    // The Redis connection named "<prefix>C1" (CLIENT LIST's id), 0 while there is none.
    int64_t named_c1_id() {
        std::istringstream lines(m_admin->call({"CLIENT", "LIST"}).str);
        for (std::string line; std::getline(lines, line);)
            if (line.find(" name=" + m_prefix + "C1 ") != std::string::npos) return std::stoll(line.substr(3));
        return 0;
    }

    // Every Redis connection's id, and every PostgreSQL client backend's pid but `pg`'s own.
    std::set<int64_t> redis_ids() {
        std::set<int64_t> ids;
        std::istringstream lines(m_admin->call({"CLIENT", "LIST"}).str);
        for (std::string line; std::getline(lines, line);)
            if (line.rfind("id=", 0) == 0) ids.insert(std::stoll(line.substr(3)));
        return ids;
    }
    static std::set<int64_t> pg_backends(PgSession& pg) {
        std::set<int64_t> pids;
        for (const auto& row : pg.exec("SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid "
                                       "<> pg_backend_pid()")
                                   .rows)
            pids.insert(std::stoll(row.at(0)));
        return pids;
    }

    // The spawner started (open_ahead waits for the first spawn), then one shell asked for `key`
    // and `redis`: the Redis connection and PostgreSQL backend it opened, once both are there.
    std::pair<int64_t, int64_t> open_one_ahead(RoleSpawner& spawner, const std::string& key, PgSession& pg,
                                               const RedisEndpoint& redis) {
        auto first = spawner.spawn(RoleStart{m_dir.path() + "/none.json", "", "", "", ""});
        first->started();
        EXPECT_TRUE(first->wait_for(milliseconds(10000)));
        const std::set<int64_t> redis_before = redis_ids(), pg_before = pg_backends(pg);
        spawner.open_ahead(key, 1, &redis);
        const auto deadline = std::chrono::steady_clock::now() + milliseconds(10000);
        while (std::chrono::steady_clock::now() < deadline) {
            int64_t redis = 0, backend = 0;
            for (int64_t id : redis_ids())
                if (!redis_before.count(id)) redis = id;
            for (int64_t pid : pg_backends(pg))
                if (!pg_before.count(pid)) backend = pid;
            if (redis && backend) return {redis, backend};
            std::this_thread::sleep_for(milliseconds(5));
        }
        ADD_FAILURE() << "the shell did not connect within 10 s";
        return {0, 0};
    }

    static inline ServerSet* s_servers = nullptr;
    TempDir m_dir{"relab-spawner-test-"};
    std::string m_prefix;
    std::unique_ptr<RedisClient> m_admin;
};

TEST_F(RoleSpawnerTest, a_forked_role_runs_on_the_servers_takes_signals_and_reports_how_it_ended) {
    RoleSpawner spawner(RELAB_BINARY);
    auto role = spawn(spawner, consumer());
    ASSERT_TRUE(blocked_within(milliseconds(10000))) << slurp(m_dir.path() + "/C1.err");
    EXPECT_TRUE(role->running());
    EXPECT_FALSE(role->exit_code());
    // A child of the spawner, named as an exec'd role is.
    const auto stat = proc_stat(role->pid());
    ASSERT_TRUE(stat);
    EXPECT_EQ(slurp(fmt::format("/proc/{}/comm", role->pid())), "relab\n");
    EXPECT_EQ(slurp(fmt::format("/proc/{}/comm", stat->ppid)), "relab-spawner\n");
    EXPECT_NE(stat->ppid, ::getpid());

    role->signal(SIGSTOP);
    bool stopped = false;
    for (int i = 0; i < 500 && !stopped; ++i) {
        const auto s = proc_stat(role->pid());
        stopped = s && s->state == 'T';
        if (!stopped) std::this_thread::sleep_for(milliseconds(2));
    }
    EXPECT_TRUE(stopped) << "SIGSTOP did not reach the role";
    role->signal(SIGCONT);
    role->signal(SIGKILL);
    ASSERT_TRUE(role->wait_for(milliseconds(5000)));
    EXPECT_EQ(role->exit_code(), 128 + SIGKILL);
    EXPECT_FALSE(role->running());
    EXPECT_FALSE(process_exists(role->pid())) << "the spawner reaped it";
}

TEST_F(RoleSpawnerTest, a_role_that_fails_reports_its_exit_status_and_its_stderr) {
    RoleSpawner spawner(RELAB_BINARY);
    RoleConfig c = consumer();
    c.redis.port = 1;  // nothing listens there
    auto role = spawn(spawner, c);
    ASSERT_TRUE(role->wait_for(milliseconds(10000)));
    EXPECT_EQ(role->exit_code(), 1);
    const std::string err = slurp(m_dir.path() + "/C1.err");
    EXPECT_NE(err.find("relab role: "), std::string::npos) << err;
    EXPECT_NE(err.find("127.0.0.1:1"), std::string::npos) << err;
}

TEST_F(RoleSpawnerTest, an_output_file_that_cannot_be_opened_is_a_clear_error) {
    RoleSpawner spawner(RELAB_BINARY);
    RoleStart start{m_dir.path() + "/none.json", "", m_dir.path() + "/no-such-dir/C1.out", m_dir.path() + "/C1.err", ""};
    try {
        spawner.spawn(start)->started();
        FAIL() << "spawned with an output file that cannot be opened";
    } catch (const EnvironmentError& e) {
        EXPECT_NE(std::string(e.what()).find("cannot open " + m_dir.path() + "/no-such-dir/C1.out"), std::string::npos)
            << e.what();
    }
    // The spawner is still there for the next role.
    auto role = spawner.spawn(RoleStart{m_dir.path() + "/none.json", "", "", m_dir.path() + "/C1.err", ""});
    role->started();
    ASSERT_TRUE(role->wait_for(milliseconds(10000)));
    EXPECT_EQ(role->exit_code(), 2);
    EXPECT_NE(slurp(m_dir.path() + "/C1.err").find("cannot read"), std::string::npos);
}

TEST_F(RoleSpawnerTest, the_roles_and_the_spawner_go_when_relab_is_done_with_them) {
    int role_pid = 0, spawner_pid = 0;
    {
        RoleSpawner spawner(RELAB_BINARY);
        auto role = spawn(spawner, consumer());
        ASSERT_TRUE(blocked_within(milliseconds(10000))) << slurp(m_dir.path() + "/C1.err");
        role_pid = role->pid();
        spawner_pid = proc_stat(role_pid)->ppid;
    }  // the role is stopped (SIGTERM), then the spawner reads the end of its socket
    EXPECT_FALSE(process_exists(role_pid));
    EXPECT_FALSE(process_exists(spawner_pid));
}

TEST_F(RoleSpawnerTest, a_spawner_killed_from_outside_takes_its_roles_and_says_so) {
    RoleSpawner spawner(RELAB_BINARY);
    auto role = spawn(spawner, consumer());
    ASSERT_TRUE(blocked_within(milliseconds(10000))) << slurp(m_dir.path() + "/C1.err");
    const int spawner_pid = proc_stat(role->pid())->ppid;
    ::kill(spawner_pid, SIGKILL);
    ASSERT_TRUE(role->wait_for(milliseconds(5000))) << "the role outlived its spawner";
    EXPECT_EQ(role->exit_code(), 128 + SIGKILL);
    try {
        spawner.spawn(RoleStart{m_dir.path() + "/none.json", "", "", "", ""});
        FAIL() << "a spawner that is gone took a request";
    } catch (const EnvironmentError& e) {
        EXPECT_NE(std::string(e.what()).find("role spawner"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("is gone"), std::string::npos) << e.what();
    }
}

// A role forked ahead (RoleSpawner::open_ahead) runs on the connections its shell opened before the
// role was asked for: no Redis connection and no PostgreSQL backend is opened on its trial's clock.
TEST_F(RoleSpawnerTest, a_role_forked_ahead_runs_on_the_connections_its_shell_opened_before) {
    RoleSpawner spawner(RELAB_BINARY);
    PgSession pg(s_servers->pg, "public");
    const RoleConfig c = consumer();
    const auto [redis_id, backend] = open_one_ahead(spawner, role_ahead_key(c), pg, c.redis);
    ASSERT_GT(redis_id, 0);
    auto role = spawn(spawner, c);
    ASSERT_TRUE(blocked_within(milliseconds(10000))) << slurp(m_dir.path() + "/C1.err");
    EXPECT_EQ(named_c1_id(), redis_id) << "the role opened a Redis connection of its own";
    const std::set<int64_t> backends = pg_backends(pg);
    EXPECT_TRUE(backends.count(backend)) << "the shell's backend is gone";
    EXPECT_EQ(backends.size(), 1u) << "the role opened a PostgreSQL backend of its own";
    EXPECT_EQ(slurp(fmt::format("/proc/{}/comm", proc_stat(role->pid())->ppid)), "relab-spawner\n");
    role->signal(SIGKILL);
    ASSERT_TRUE(role->wait_for(milliseconds(5000)));
    EXPECT_EQ(role->exit_code(), 128 + SIGKILL);
}

// A role on another Redis (a lab's own server; here another database of the same one) takes the
// shell's PostgreSQL backend and connects to its Redis itself.
TEST_F(RoleSpawnerTest, a_role_on_another_redis_takes_the_shells_backend_and_connects_its_own_redis) {
    RoleSpawner spawner(RELAB_BINARY);
    PgSession pg(s_servers->pg, "public");
    const RoleConfig c = consumer();
    RedisEndpoint other = c.redis;
    other.db = 1;
    const auto [redis_id, backend] = open_one_ahead(spawner, role_ahead_key(c), pg, other);
    ASSERT_GT(redis_id, 0);
    auto role = spawn(spawner, c);
    ASSERT_TRUE(blocked_within(milliseconds(10000))) << slurp(m_dir.path() + "/C1.err");
    EXPECT_GT(named_c1_id(), redis_id) << "the role took a connection to another database";
    const std::set<int64_t> backends = pg_backends(pg);
    EXPECT_TRUE(backends.count(backend)) << "the shell's backend is gone";
    EXPECT_EQ(backends.size(), 1u) << "the role opened a PostgreSQL backend of its own";
    role->signal(SIGKILL);
    ASSERT_TRUE(role->wait_for(milliseconds(5000)));
}

// A connection the server closed while the shell waited is not used: the role connects itself.
// A role whose servers differ from the shells' key is forked as before.
TEST_F(RoleSpawnerTest, a_shell_connection_closed_meanwhile_or_of_another_key_is_not_taken) {
    RoleSpawner spawner(RELAB_BINARY);
    PgSession pg(s_servers->pg, "public");
    const RoleConfig c = consumer();
    const auto [redis_id, backend] = open_one_ahead(spawner, role_ahead_key(c), pg, c.redis);
    ASSERT_GT(redis_id, 0);
    m_admin->call({"CLIENT", "KILL", "ID", std::to_string(redis_id)});
    pg.exec(fmt::format("SELECT pg_terminate_backend({})", backend));
    std::this_thread::sleep_for(milliseconds(100));  // the close reaches the shell's sockets
    auto role = spawn(spawner, c);
    ASSERT_TRUE(blocked_within(milliseconds(10000))) << slurp(m_dir.path() + "/C1.err");
    EXPECT_GT(named_c1_id(), redis_id) << "the role took the closed connection";
    EXPECT_TRUE(role->running()) << slurp(m_dir.path() + "/C1.err");
    role->signal(SIGKILL);
    ASSERT_TRUE(role->wait_for(milliseconds(5000)));

    RoleConfig other = c;
    other.schema = "relab_no_such_schema";  // another key
    const auto [other_id, other_backend] = open_one_ahead(spawner, role_ahead_key(other), pg, c.redis);
    ASSERT_GT(other_id, 0);
    delete_keys_with_prefix(*m_admin, m_prefix);
    auto second = spawn(spawner, consumer());
    ASSERT_TRUE(blocked_within(milliseconds(10000))) << slurp(m_dir.path() + "/C1.err");
    EXPECT_NE(named_c1_id(), other_id) << "a role took a shell of another key";
    second->signal(SIGKILL);
    ASSERT_TRUE(second->wait_for(milliseconds(5000)));
}

// The spawner leads a process group that its roles and shells stay in: a SIGKILLed relab's reaper
// kills that group (process/reaper.h), so a shell or a role whose pid relab had not read yet goes too.
TEST_F(RoleSpawnerTest, the_spawner_its_roles_and_its_shells_are_one_process_group) {
    RoleSpawner spawner(RELAB_BINARY);
    PgSession pg(s_servers->pg, "public");
    const RoleConfig c = consumer();
    RoleConfig other = c;
    other.schema = "relab_no_such_schema";  // a shell of another key stays a shell
    ASSERT_GT(open_one_ahead(spawner, role_ahead_key(other), pg, c.redis).first, 0);
    auto role = spawn(spawner, c);
    ASSERT_TRUE(blocked_within(milliseconds(10000))) << slurp(m_dir.path() + "/C1.err");
    const int spawner_pid = proc_stat(role->pid())->ppid;
    EXPECT_EQ(proc_stat(spawner_pid)->pgrp, spawner_pid) << "the spawner leads no group of its own";
    const std::vector<int> children = children_of(spawner_pid);
    ASSERT_EQ(children.size(), 2u) << "the role and the shell";
    for (int child : children) EXPECT_EQ(proc_stat(child)->pgrp, spawner_pid) << "pid " << child;
    ::kill(-spawner_pid, SIGKILL);
    ASSERT_TRUE(role->wait_for(milliseconds(5000)));
    for (int child : children) {
        const auto deadline = std::chrono::steady_clock::now() + milliseconds(5000);
        while (process_running(child) && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(milliseconds(5));
        EXPECT_FALSE(process_running(child)) << "pid " << child;
    }
}

// A process with the trial-end handler (every forked role has it): a sleep without the signal is
// whole; the signal cuts the sleep it arrives in short, and caps every later one at 1 ms.
TEST(TrialEndWakeupTest, the_signal_cuts_a_sleep_short_and_caps_the_later_ones) {
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        using std::chrono::steady_clock;
        install_trial_end_wakeup();
        RealClock clock;
        auto t0 = steady_clock::now();
        clock.sleep_for(milliseconds(50));
        const bool whole = steady_clock::now() - t0 >= milliseconds(50) && !trial_end_signalled();
        (void)!::write(ready[1], "x", 1);
        t0 = steady_clock::now();
        clock.sleep_for(std::chrono::seconds(20));  // the parent signals now
        const bool cut = steady_clock::now() - t0 < std::chrono::seconds(10) && trial_end_signalled();
        t0 = steady_clock::now();
        clock.sleep_for(std::chrono::seconds(20));
        const bool capped = steady_clock::now() - t0 < std::chrono::seconds(1);
        ::_exit(!whole ? 1 : !cut ? 2 : !capped ? 3 : 0);
    }
    ::close(ready[1]);
    char byte = 0;
    ASSERT_EQ(::read(ready[0], &byte, 1), 1);
    ::close(ready[0]);
    std::this_thread::sleep_for(milliseconds(50));
    ::kill(pid, kTrialEndSignal);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 0) << "1: a sleep without the signal was cut; 2: the signal did not cut the "
                                         "sleep it came in; 3: a later sleep lasted 1 s or more";
}

}  // namespace role_spawner_test
}  // namespace relab
