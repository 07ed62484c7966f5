// `relab run --jobs N` end to end: the same labs at --jobs 1 and --jobs 2 give the same verdicts and
// the same wrong counts, both print their wall and inherent time, and nothing is left behind.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "relab_cli.h"

namespace jobs_test {

namespace fs = std::filesystem;
using relab::test::lab_of;
using relab::test::RelabRun;
using relab::test::run_relab;
using relab::test::slurp;

// A /proc file of a process that may have exited meanwhile (the roles of a run come and go while
// the test looks): its text, or "" once the process is gone, rather than an exception.
std::string proc_file(const fs::path& path) {
    try {
        return slurp(path);
    } catch (const std::exception&) {
        return {};
    }
}

class JobsTest : public relab::test::RelabDirTest {
protected:
    // Processes whose command line names this test's folder: relab children, roles and servers
    // all live under its TMPDIR.
    std::vector<std::string> leftovers() const {
        std::vector<std::string> out;
        for (const auto& p : fs::directory_iterator("/proc")) {
            const std::string name = p.path().filename().string();
            if (name.find_first_not_of("0123456789") != std::string::npos) continue;
            std::string cmd = proc_file(p.path() / "cmdline");
            std::replace(cmd.begin(), cmd.end(), '\0', ' ');
            // The role spawner and the roles it forks name no path: theirs is the run's TMPDIR.
            const std::string env = proc_file(p.path() / "environ");
            if (cmd.find(m_dir.string()) != std::string::npos || env.find(m_dir.string()) != std::string::npos)
                out.push_back(name + ": " + cmd);
        }
        return out;
    }
};

// "relab: wall time W s, inherent time I s (W/I = r×), jobs N"
bool prints_wall_and_inherent_time(const std::string& err, int jobs) {
    const std::regex line(fmt::format(R"(relab: wall time [0-9.]+ s, inherent time [0-9.]+ s \(W/I = [0-9.]+×\), jobs {})",
                                      jobs));
    return std::regex_search(err, line);
}

TEST_F(JobsTest, two_jobs_give_the_same_verdicts_and_wrong_counts_as_one_and_leave_nothing_behind) {
    const std::string labs = "08a-baseline 08b-s1 08d-s5 --runs 2";
    const RelabRun one = run_relab(m_dir, labs + " --jobs 1");
    ASSERT_EQ(one.exit_code, 0) << one.err;
    const RelabRun two = run_relab(m_dir, labs + " --jobs 2");
    ASSERT_EQ(two.exit_code, 0) << two.err;

    // The same labs in the same order, with the same verdicts; the deterministic labs go wrong in
    // the same trials (08a in every one, 08b and 08d in none).
    ASSERT_EQ(one.report.at("labs").size(), 3u);
    ASSERT_EQ(two.report.at("labs").size(), 3u);
    for (size_t i = 0; i < 3; ++i)
        EXPECT_EQ(two.report.at("labs")[i].at("id"), one.report.at("labs")[i].at("id")) << i;
    for (const auto& [id, wrong] : std::vector<std::pair<std::string, int>>{{"08a-baseline", 2}, {"08b-s1", 0}, {"08d-s5", 0}}) {
        for (const RelabRun* r : {&one, &two}) {
            const auto& s = lab_of(*r, id).at("summary");
            EXPECT_EQ(s.at("verdict"), "held") << id;
            EXPECT_EQ(s.at("trials"), 2) << id;
            EXPECT_EQ(s.at("wrong"), wrong) << id;
        }
    }
    // The text reports are the same labs in the same order.
    EXPECT_LT(two.out.find("08a-baseline"), two.out.find("08b-s1"));
    EXPECT_LT(two.out.find("08b-s1"), two.out.find("08d-s5"));

    EXPECT_TRUE(prints_wall_and_inherent_time(one.err, 1)) << one.err;
    EXPECT_TRUE(prints_wall_and_inherent_time(two.err, 2)) << two.err;
    for (const RelabRun* r : {&one, &two}) {
        EXPECT_GT(r->report.at("wall_s").get<double>(), 0);
        // 3 labs × 2 trials; 08a's and 08b's trials last over 800 ms (created's job).
        EXPECT_GT(r->report.at("inherent_s").get<double>(), 3.2);
    }
    EXPECT_EQ(one.report.at("jobs"), 1);
    EXPECT_EQ(two.report.at("jobs"), 2);

    EXPECT_TRUE(fs::is_empty(m_dir / "tmp")) << "temp dirs left in " << (m_dir / "tmp");
    EXPECT_EQ(leftovers(), std::vector<std::string>{});
}

TEST_F(JobsTest, ctrl_c_reaches_every_child_and_leaves_no_process_or_temp_dir) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        setenv("TMPDIR", (m_dir / "tmp").c_str(), 1);
        const int null = ::open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        execl(RELAB_BINARY, RELAB_BINARY, "run", "08a-baseline", "08b-s1", "--runs", "20", "--jobs", "2",
              static_cast<char*>(nullptr));
        _exit(127);
    }
    // Wait until both children run trials: role processes under the test's folder.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    bool in_trials = false;
    while (!in_trials && std::chrono::steady_clock::now() < deadline) {
        // pid (comm) state ppid ...
        const auto parent_of = [&](const std::string& pid) {
            const std::string stat = proc_file(fs::path("/proc") / pid / "stat");
            const auto close = stat.rfind(')');
            std::string state, ppid;
            if (close != std::string::npos) std::istringstream(stat.substr(close + 2)) >> state >> ppid;
            return ppid;
        };
        std::set<std::string> parents;  // the relab children whose roles run
        for (const auto& p : leftovers()) {
            const std::string pid = p.substr(0, p.find(':'));
            // A role: forked by its run's spawner (comm relab-spawner), so named relab with the
            // spawner's command line; the run is the spawner's parent.
            if (p.find(" role --spawner") == std::string::npos || proc_file(fs::path("/proc") / pid / "comm") != "relab\n")
                continue;
            const std::string spawner = parent_of(pid);
            if (!spawner.empty()) parents.insert(parent_of(spawner));
        }
        in_trials = parents.size() >= 2;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_TRUE(in_trials) << "the children never reached their trials";
    ASSERT_EQ(kill(pid, SIGINT), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 130);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(leftovers(), std::vector<std::string>{});
    EXPECT_TRUE(fs::is_empty(m_dir / "tmp")) << "temp dirs left in " << (m_dir / "tmp");
}

}  // namespace jobs_test
