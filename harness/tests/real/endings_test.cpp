// Every way a run can end, and what it leaves: for each ending, the processes relab started (seen
// while it ran), the processes naming its temp dirs, the temp dirs themselves, its keys on the
// Redis and its schemas and tables on the PostgreSQL it was given. Every count must be 0, also
// when relab itself is SIGKILLed (its children die by their parent-death signal, the reaper clears
// the rest: see process/reaper.h).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "outside_servers.h"
#include "relab_cli.h"

namespace endings_test {

namespace fs = std::filesystem;
using relab::test::OutsideServers;
using relab::test::SeenProcess;
using relab::test::slurp;

struct Ended {
    int status = -1;  // exit status, or 128 + signal when killed by one
    std::string out, err;
    std::vector<SeenProcess> seen;  // every descendant seen while it ran
    bool acted = false;             // the ending's action happened
};

class EndingsTest : public relab::test::OutsideServersTest {
protected:
    void SetUp() override {
        OutsideServersTest::SetUp();
        ASSERT_EQ(s_servers->relab_keys(), 0) << "an earlier test left keys";
        ASSERT_EQ(s_servers->relab_schemas_and_tables(), 0) << "an earlier test left schemas";
    }

    // Runs `relab run ARGS` in the background; every 20 ms records its descendants and, once
    // `ready(descendants)` holds, calls `act(pid, descendants)` once. Returns when relab has exited.
    Ended run(const std::string& args,
              const std::function<bool(const std::vector<SeenProcess>&)>& ready = nullptr,
              const std::function<void(pid_t, const std::vector<SeenProcess>&)>& act = nullptr) {
        const pid_t pid = start_relab("run " + args + " --timelines none");
        Ended e;
        std::map<std::pair<int, unsigned long long>, SeenProcess> seen;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(180);
        int status = 0;
        for (;;) {
            const pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid) break;
            const auto now = relab::test::descendants(pid);
            // The latest name: a reaper is "relab" from its fork until it names itself.
            for (const auto& p : now) seen.insert_or_assign(std::make_pair(p.pid, p.start), p);
            if (!e.acted && ready && ready(now)) {
                act(pid, now);
                e.acted = true;
            }
            if (std::chrono::steady_clock::now() > deadline) {
                kill(pid, SIGKILL);
                waitpid(pid, &status, 0);
                ADD_FAILURE() << "relab did not end within 180 s";
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        e.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        e.out = slurp(m_dir / "out.txt");
        e.err = slurp(m_dir / "err.txt");
        for (auto& [k, p] : seen) e.seen.push_back(p);
        return e;
    }

    // Nothing of the run is left: processes, temp dirs, keys, schemas and tables.
    void expect_nothing_left(const Ended& e) {
        EXPECT_FALSE(e.seen.empty()) << "no child of relab was ever seen: the test watched nothing";
        const auto alive = relab::test::still_alive(e.seen);
        EXPECT_TRUE(alive.empty()) << "processes left: " << relab::test::names(alive);
        const auto naming = relab::test::processes_naming((m_dir / "tmp").string());
        EXPECT_TRUE(naming.empty()) << "processes naming the run's temp dir: " << naming.front();
        // The reaper may still be removing them when the processes are gone: a short grace.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
        while (std::chrono::steady_clock::now() < deadline &&
               (!fs::is_empty(m_dir / "tmp") || s_servers->relab_keys() || s_servers->relab_schemas_and_tables()))
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        std::string dirs;
        for (const auto& d : fs::directory_iterator(m_dir / "tmp")) dirs += d.path().filename().string() + " ";
        EXPECT_TRUE(dirs.empty()) << "temp dirs left: " << dirs;
        EXPECT_EQ(s_servers->relab_keys(), 0) << "keys left under relab:";
        EXPECT_EQ(s_servers->relab_schemas_and_tables(), 0) << "relab_ schemas or tables left";
    }

    static bool is_role(const SeenProcess& p) {
        return p.comm == "relab" && relab::test::proc_file(p.pid, "cmdline").find(" role ") != std::string::npos;
    }
    // Inside a trial: the roles are running.
    static bool in_trial(const std::vector<SeenProcess>& now) {
        int roles = 0;
        for (const auto& p : now) roles += is_role(p);
        return roles >= 2;
    }
    static void kill_first(const std::vector<SeenProcess>& now, const std::string& comm, int sig) {
        for (const auto& p : now)
            if (p.comm == comm) {
                kill(p.pid, sig);
                return;
            }
        ADD_FAILURE() << "no " << comm << " among relab's processes";
    }
};

TEST_F(EndingsTest, a_normal_end_leaves_nothing) {
    const Ended e = run(fmt::format("baseline --runs 1 {}", s_servers->urls()));
    EXPECT_EQ(e.status, 0) << e.err;
    expect_nothing_left(e);
}

TEST_F(EndingsTest, a_failed_expectation_leaves_nothing) {
    const Ended e = run(fmt::format("baseline --mutant cas-write --runs 1 {}", s_servers->urls()));
    EXPECT_EQ(e.status, 1) << e.err;
    EXPECT_NE(e.err.find("broke"), std::string::npos) << e.err;
    expect_nothing_left(e);
}

TEST_F(EndingsTest, a_role_crash_is_an_error_and_leaves_nothing) {
    const Ended e = run(fmt::format("baseline --runs 3 {}", s_servers->urls()), in_trial,
                        [](pid_t, const std::vector<SeenProcess>& now) {
                            for (const auto& p : now)
                                if (is_role(p)) {
                                    kill(p.pid, SIGKILL);
                                    return;
                                }
                        });
    ASSERT_TRUE(e.acted) << "the run never reached a trial";
    EXPECT_EQ(e.status, 2) << "a role that dies is a harness failure, never a verdict\n" << e.out << e.err;
    EXPECT_NE(e.err.find("harness failure, no lab result reported: lab 08a-baseline trial "), std::string::npos) << e.err;
    EXPECT_NE(e.err.find(": role C"), std::string::npos) << e.err;
    EXPECT_NE(e.err.find("killed by signal 9"), std::string::npos) << e.err;
    expect_nothing_left(e);
}

// relab's own redis-server, killed in a trial; PostgreSQL is the test's, so its tables can be counted.
TEST_F(EndingsTest, redis_killed_midway_is_an_error_and_leaves_nothing) {
    const Ended e = run(fmt::format("baseline --runs 3 --pg-url {}", s_servers->pg_url()), in_trial,
                        [](pid_t, const std::vector<SeenProcess>& now) { kill_first(now, "redis-server", SIGKILL); });
    ASSERT_TRUE(e.acted) << "the run never reached a trial";
    EXPECT_EQ(e.status, 2) << e.out << e.err;
    EXPECT_NE(e.err.find("redis"), std::string::npos) << e.err;
    EXPECT_EQ(e.out.find("held"), std::string::npos) << "no verdict after a harness failure:\n" << e.out;
    expect_nothing_left(e);
}

// relab's own PostgreSQL, killed in a trial; Redis is the test's, so its keys can be counted.
TEST_F(EndingsTest, postgres_killed_midway_is_an_error_and_leaves_nothing) {
    const Ended e = run(fmt::format("baseline --runs 3 --redis-url {}", s_servers->redis_url()), in_trial,
                        [](pid_t, const std::vector<SeenProcess>& now) { kill_first(now, "postgres", SIGKILL); });
    ASSERT_TRUE(e.acted) << "the run never reached a trial";
    EXPECT_EQ(e.status, 2) << e.out << e.err;
    EXPECT_NE(e.err.find("postgres"), std::string::npos) << e.err;
    EXPECT_EQ(e.out.find("held"), std::string::npos) << "no verdict after a harness failure:\n" << e.out;
    expect_nothing_left(e);
}

TEST_F(EndingsTest, sigint_exits_130_and_leaves_nothing) {
    const Ended e = run(fmt::format("baseline --runs 3 {}", s_servers->urls()), in_trial,
                        [](pid_t pid, const std::vector<SeenProcess>&) { kill(pid, SIGINT); });
    ASSERT_TRUE(e.acted) << "the run never reached a trial";
    EXPECT_EQ(e.status, 130) << e.err;
    expect_nothing_left(e);
}

TEST_F(EndingsTest, sigterm_exits_143_and_leaves_nothing) {
    const Ended e = run(fmt::format("baseline --runs 3 {}", s_servers->urls()), in_trial,
                        [](pid_t pid, const std::vector<SeenProcess>&) { kill(pid, SIGTERM); });
    ASSERT_TRUE(e.acted) << "the run never reached a trial";
    EXPECT_EQ(e.status, 143) << e.err;
    expect_nothing_left(e);
}

// relab cannot clean up after a SIGKILL: its children die by PR_SET_PDEATHSIG, and the reaper
// it forked at the start deletes its keys, drops its schema and removes its temp dirs.
TEST_F(EndingsTest, sigkill_of_relab_leaves_nothing_once_the_reaper_is_done) {
    bool saw_keys = false;
    const Ended e = run(fmt::format("baseline --runs 3 {}", s_servers->urls()), in_trial,
                        [&](pid_t pid, const std::vector<SeenProcess>&) {
                            saw_keys = s_servers->relab_keys() > 0 && s_servers->relab_schemas_and_tables() > 0;
                            kill(pid, SIGKILL);
                        });
    ASSERT_TRUE(e.acted) << "the run never reached a trial";
    EXPECT_EQ(e.status, 128 + SIGKILL);
    EXPECT_TRUE(saw_keys) << "the run had no keys or tables when it was killed: nothing was tested";
    bool reaper = false;
    for (const auto& p : e.seen) reaper |= p.comm == "relab-reaper";
    EXPECT_TRUE(reaper) << "no reaper among relab's processes: " << relab::test::names(e.seen);
    expect_nothing_left(e);
}

// --jobs: relab's children are relab runs with reapers of their own; a SIGKILL of the parent
// reaches them by their parent-death signal, and each reaper clears its run.
// The kill waits for a trial and for every run's reaper under its own name (a reaper is "relab"
// from its fork until it names itself): the three reapers are what this test puts to work.
TEST_F(EndingsTest, sigkill_of_relab_with_jobs_leaves_nothing) {
    const auto reapers = [](const std::vector<SeenProcess>& ps) {
        int n = 0;
        for (const auto& p : ps) n += p.comm == "relab-reaper";
        return n;
    };
    const Ended e = run(fmt::format("baseline s1 --jobs 2 --runs 3 {}", s_servers->urls()),
                        [&](const std::vector<SeenProcess>& now) { return in_trial(now) && reapers(now) == 3; },
                        [](pid_t pid, const std::vector<SeenProcess>&) { kill(pid, SIGKILL); });
    ASSERT_TRUE(e.acted) << "no trial ran beside a reaper for the parent and one per child run: "
                         << relab::test::names(e.seen) << "\n" << e.err;
    EXPECT_EQ(e.status, 128 + SIGKILL);
    expect_nothing_left(e);
}

// The same with the servers relab started itself: they die with it.
TEST_F(EndingsTest, sigkill_of_relab_takes_its_own_servers_with_it) {
    const Ended e = run("baseline --runs 3", in_trial, [](pid_t pid, const std::vector<SeenProcess>&) { kill(pid, SIGKILL); });
    ASSERT_TRUE(e.acted) << "the run never reached a trial";
    EXPECT_EQ(e.status, 128 + SIGKILL);
    int servers = 0;
    for (const auto& p : e.seen) servers += p.comm == "redis-server" || p.comm == "postgres";
    EXPECT_GE(servers, 2) << relab::test::names(e.seen);
    expect_nothing_left(e);
}

// Exec roles (docs/your-code.md): a consumer given as a /bin/sh program, so that the endings do
// not depend on PHP or Python being installed.
class ExecEndingsTest : public EndingsTest {
protected:
    // A one-consumer stream lab whose consumer is `/bin/sh -c script`, written into the test's folder.
    std::string lab(const std::string& id, const std::string& script) {
        const nlohmann::json doc = {
            {"id", id},
            {"kind", "workload"},
            {"part", id},
            {"title", "an exec consumer: " + script},
            {"runs", 1},
            {"orders", {{{"id", 42}}}},
            {"events", {{{"order", 42}, {"type", "created"}, {"version", 1}}}},
            {"job_cost_ms", {{"created", 10}}},
            {"expect", {{"wrong", "none"}}},
            {"consumers", {{"count", 1}, {"exec", {"/bin/sh", "-c", script}}}},
        };
        const fs::path file = m_dir / (id + ".json");
        std::ofstream(file) << doc.dump(2);
        return file.string();
    }
    static bool program_running(const std::vector<SeenProcess>& now) {
        return std::any_of(now.begin(), now.end(), [](const SeenProcess& p) { return p.comm == "sleep"; });
    }
};

TEST_F(ExecEndingsTest, a_killed_program_is_an_error_naming_it_and_leaves_nothing) {
    const Ended e = run(fmt::format("{} {}", lab("exec-killed", "exec sleep 1000"), s_servers->urls()),
                        program_running,
                        [](pid_t, const std::vector<SeenProcess>& now) { kill_first(now, "sleep", SIGKILL); });
    ASSERT_TRUE(e.acted) << "the program was never seen running";
    EXPECT_EQ(e.status, 2) << e.out << e.err;
    EXPECT_NE(e.err.find("C1 of exec-killed (the program `/bin/sh -c 'exec sleep 1000'`) exited"), std::string::npos)
        << e.err;
    expect_nothing_left(e);
}

TEST_F(ExecEndingsTest, a_hung_program_is_an_error_at_the_barrier_and_leaves_nothing) {
    const Ended e = run(fmt::format("{} {}", lab("exec-hung", "exec sleep 1000"), s_servers->urls()));
    EXPECT_EQ(e.status, 2) << e.out << e.err;
    EXPECT_NE(e.err.find("0 of 1 consumers were seen blocked in XREADGROUP"), std::string::npos) << e.err;
    EXPECT_NE(e.err.find("C1: running, but not blocked in XREADGROUP"), std::string::npos) << e.err;
    const auto sleeping = std::count_if(e.seen.begin(), e.seen.end(), [](const SeenProcess& p) { return p.comm == "sleep"; });
    EXPECT_GE(sleeping, 1) << "the program never ran";
    expect_nothing_left(e);
}

TEST_F(ExecEndingsTest, a_missing_program_is_a_skip_that_says_so_and_leaves_nothing) {
    const std::string file = lab("exec-missing", "true");
    // The same lab, its program a path that names nothing.
    std::string text = slurp(file);
    text.replace(text.find("\"/bin/sh\""), 9, "\"/nonexistent/relab-program\"");
    std::ofstream(file) << text;
    const Ended e = run(fmt::format("{} {}", file, s_servers->urls()));
    EXPECT_EQ(e.status, 0) << e.out << e.err;
    EXPECT_NE((e.out + e.err).find("SKIPPED exec-missing: its consumer is the program `/nonexistent/relab-program -c true`: "
                         "needs /nonexistent/relab-program, which is not an executable file"),
              std::string::npos)
        << e.out << e.err;
    expect_nothing_left(e);
}

TEST_F(ExecEndingsTest, a_program_that_exits_before_reading_is_an_error_with_its_words) {
    const Ended e = run(fmt::format("{} {}", lab("exec-exits", "echo 'cannot connect' >&2; exit 3"), s_servers->urls()));
    EXPECT_EQ(e.status, 2) << e.out << e.err;
    EXPECT_NE(e.err.find("exited with status 3 before it read the group: cannot connect"), std::string::npos) << e.err;
    expect_nothing_left(e);
}

}  // namespace endings_test
