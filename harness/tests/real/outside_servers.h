// Servers a test owns and hands to relab with --redis-url/--pg-url, as a user's CI hands it theirs,
// and what relab left on them and on the machine afterwards: keys under "relab:", schemas named
// "relab_…" and their tables, temp dirs, processes.
#pragma once

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "clients/pg_client.h"
#include "process/proc_stat.h"
#include "clients/redis_client.h"
#include "servers/servers.h"

namespace relab::test {

// key -> (DUMP payload, PEXPIRETIME) of every key of the endpoint's database: the bytes and the
// absolute expiry, so a test sees any change relab made to data it does not own.
using RedisSnapshot = std::map<std::string, std::pair<std::string, long long>>;
inline RedisSnapshot redis_snapshot(const RedisEndpoint& ep) {
    RedisClient c(ep);
    RedisSnapshot out;
    std::string cursor = "0";
    do {
        const RedisReply r = c.call({"SCAN", cursor, "COUNT", "1000"});
        cursor = r.elements.at(0).str;
        for (const auto& k : r.elements.at(1).elements)
            out[k.str] = {c.call({"DUMP", k.str}).str, c.call({"PEXPIRETIME", k.str}).integer};
    } while (cursor != "0");
    return out;
}

struct OutsideServers {
    std::unique_ptr<EmbeddedRedis> redis;
    std::unique_ptr<EmbeddedPostgres> pg;

    OutsideServers() : redis(std::make_unique<EmbeddedRedis>()), pg(std::make_unique<EmbeddedPostgres>()) {}

    std::string redis_url() const { return fmt::format("redis://127.0.0.1:{}/0", redis->endpoint().port); }
    std::string pg_url() const {
        const auto& ep = pg->endpoint();
        return fmt::format("postgresql://{}@127.0.0.1:{}/{}", ep.user, ep.port, ep.dbname);
    }
    std::string urls() const { return fmt::format("--redis-url {} --pg-url {}", redis_url(), pg_url()); }

    // Everything relab may have left: every key, relab's schemas.
    void clear() const {
        RedisClient c(redis->endpoint());
        c.call({"FLUSHALL"});
        PgSession s(pg->endpoint(), "");
        const auto schemas = s.exec("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'relab\\_%'");
        for (const auto& row : schemas.rows) s.exec("DROP SCHEMA \"" + row.at(0) + "\" CASCADE");
    }

    // Keys of relab's namespace ("relab:*"), in every database.
    long long relab_keys() const {
        long long n = 0;
        for (int db = 0; db < 16; ++db) {
            RedisEndpoint ep = redis->endpoint();
            ep.db = db;
            RedisClient c(ep);
            std::string cursor = "0";
            do {
                const RedisReply r = c.call({"SCAN", cursor, "MATCH", "relab:*", "COUNT", "1000"});
                cursor = r.elements.at(0).str;
                n += static_cast<long long>(r.elements.at(1).elements.size());
            } while (cursor != "0");
        }
        return n;
    }
    // relab's schemas (relab_<run>) plus the tables in them.
    long long relab_schemas_and_tables() const {
        PgSession s(pg->endpoint(), "");
        const auto schemas = s.exec("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'relab\\_%'");
        const auto tables =
            s.exec("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                   "WHERE n.nspname LIKE 'relab\\_%'");
        return std::stoll(schemas.rows.at(0).at(0)) + std::stoll(tables.rows.at(0).at(0));
    }
};

// /proc/<pid>/stat's ppid and start time; nullopt once the process is gone (or a zombie, which
// holds nothing but its pid).
struct ProcInfo {
    int ppid = 0;
    unsigned long long start = 0;
    char state = '?';
};
inline bool read_proc(int pid, ProcInfo& out) {
    std::ifstream stat(fmt::format("/proc/{}/stat", pid));
    std::string line;
    if (!std::getline(stat, line)) return false;
    const auto close = line.rfind(')');
    if (close == std::string::npos) return false;
    std::istringstream rest(line.substr(close + 2));
    rest >> out.state >> out.ppid;
    std::string skip;
    for (int field = 5; field < 22; ++field) rest >> skip;  // fields 5..21; 22 is starttime
    rest >> out.start;
    return true;
}

inline std::vector<int> all_pids() {
    std::vector<int> out;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
        const std::string name = e.path().filename();
        if (name.find_first_not_of("0123456789") == std::string::npos) out.push_back(std::stoi(name));
    }
    return out;
}

// Empty once the process is gone (it may end while being read).
inline std::string proc_file(int pid, const char* what) {
    std::string s = relab::read_proc_file(pid, what).value_or("");
    for (auto& ch : s)
        if (ch == '\0') ch = ' ';
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n')) s.pop_back();
    return s;
}

// A process seen once, identified by pid and start time (a pid can be reused).
struct SeenProcess {
    int pid;
    unsigned long long start;
    std::string comm;
};

// Every descendant of `root` now (children, their children, …).
inline std::vector<SeenProcess> descendants(int root) {
    std::vector<std::pair<int, ProcInfo>> procs;
    for (int pid : all_pids()) {
        ProcInfo p;
        if (read_proc(pid, p)) procs.emplace_back(pid, p);
    }
    std::set<int> tree{root};
    std::vector<SeenProcess> out;
    for (bool grew = true; grew;) {
        grew = false;
        for (const auto& [pid, p] : procs)
            if (tree.count(p.ppid) && !tree.count(pid)) {
                tree.insert(pid);
                out.push_back({pid, p.start, proc_file(pid, "comm")});
                grew = true;
            }
    }
    return out;
}

// Those of `seen` still alive (not zombies), after waiting up to `wait` for them to go.
inline std::vector<SeenProcess> still_alive(const std::vector<SeenProcess>& seen,
                                            std::chrono::milliseconds wait = std::chrono::milliseconds(15000)) {
    const auto deadline = std::chrono::steady_clock::now() + wait;
    for (;;) {
        std::vector<SeenProcess> alive;
        for (const auto& s : seen) {
            ProcInfo p;
            if (read_proc(s.pid, p) && p.start == s.start && p.state != 'Z') alive.push_back(s);
        }
        if (alive.empty() || std::chrono::steady_clock::now() >= deadline) return alive;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

// Processes anywhere whose command line names `dir` (a server's or a role's files under the test's
// TMPDIR): what a run left running even if it was reparented away from the tree.
inline std::vector<std::string> processes_naming(const std::string& dir) {
    std::vector<std::string> out;
    for (int pid : all_pids()) {
        if (pid == getpid()) continue;
        const std::string cmd = proc_file(pid, "cmdline");
        if (cmd.find(dir) != std::string::npos) out.push_back(fmt::format("{} {}", pid, cmd));
    }
    return out;
}

inline std::string names(const std::vector<SeenProcess>& ps) {
    std::string s;
    for (const auto& p : ps) s += fmt::format("{}{} ({})", s.empty() ? "" : ", ", p.pid, p.comm);
    return s;
}

// A test suite with its own outside servers (started once, cleared after every test) and a folder
// per test with the tmp/ that relab gets as TMPDIR.
class OutsideServersTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() { s_servers = new OutsideServers(); }
    static void TearDownTestSuite() {
        delete s_servers;
        s_servers = nullptr;
    }
    void SetUp() override {
        m_dir = std::filesystem::temp_directory_path() / fmt::format("relab-outside-test-{}-{}", getpid(), ++s_counter);
        std::filesystem::create_directories(m_dir / "tmp");
    }
    void TearDown() override {
        std::filesystem::remove_all(m_dir);
        s_servers->clear();  // a failed test's leftovers must not fail the next one too
    }

    // `relab ARGS` in the background (its TMPDIR the test's tmp/, stdout and stderr to out.txt and
    // err.txt in the test's folder); the caller waits for the pid.
    pid_t start_relab(const std::string& args) const {
        const pid_t pid = fork();
        if (pid == 0) {
            setenv("TMPDIR", (m_dir / "tmp").c_str(), 1);
            const int out = ::open((m_dir / "out.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            const int err = ::open((m_dir / "err.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            dup2(out, 1);
            dup2(err, 2);
            const std::string cmd = fmt::format("exec {} {}", RELAB_BINARY, args);
            execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
            _exit(127);
        }
        return pid;
    }

    std::filesystem::path m_dir;
    static inline int s_counter = 0;
    static inline OutsideServers* s_servers = nullptr;
};

}  // namespace relab::test
