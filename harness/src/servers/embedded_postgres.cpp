#include "servers/embedded_postgres.h"

#include <pwd.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <pqxx/pqxx>
#include <thread>

#include "process/child_process.h"
#include "process/proc_stat.h"
#include "process/temp_dir.h"
#include "servers/local_server.h"
#include "util/interrupt.h"

namespace relab {

namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

std::string current_user_name() {
    if (struct passwd* pw = ::getpwuid(::geteuid())) return pw->pw_name;
    if (const char* u = std::getenv("USER")) return u;
    throw EnvironmentError("cannot determine the name of the current user (uid " +
                           std::to_string(::geteuid()) + ")");
}

// Gone, or a zombie (its memory, the shared segment included, is released).
bool process_ended(int pid) { return !relab::process_running(pid); }

// postgres from the same installation as initdb: a data directory only fits its own version.
std::string postgres_beside(const std::string& initdb) {
    std::error_code ec;
    std::string postgres = (std::filesystem::canonical(initdb, ec).parent_path() / "postgres").string();
    if (ec || !is_executable_file(postgres)) postgres = find_binary("postgres");
    return postgres;
}

// The user PostgreSQL runs as, and whom to switch to: it refuses to run as root, so under root
// it is RELAB_PG_USER (default "postgres"), who is handed `base`.
std::pair<std::string, std::optional<std::string>> pg_user(const std::string& base) {
    if (::geteuid() != 0) return {current_user_name(), std::nullopt};
    const char* env_user = std::getenv("RELAB_PG_USER");
    const std::string user = env_user && *env_user ? env_user : "postgres";
    struct passwd* pw = ::getpwnam(user.c_str());
    if (!pw)
        throw EnvironmentError(
            "relab runs as root and PostgreSQL refuses to, so it runs PostgreSQL as user '" + user +
            "', which does not exist; create it (useradd --system --create-home " + user +
            "), set RELAB_PG_USER to an existing unprivileged user, or install postgresql "
            "(apt-get install -y postgresql), which creates the user 'postgres'");
    if (::chown(base.c_str(), pw->pw_uid, pw->pw_gid) != 0)
        throw EnvironmentError("cannot hand " + base + " to user " + user + ": " + std::strerror(errno));
    return {user, user};
}

// What each step of starting an embedded PostgreSQL needs.
struct PgStart {
    std::vector<std::pair<std::string, std::string>> settings;  // merged, for -c
    std::string initdb, postgres;                               // the binaries
    std::string base;                                           // the temporary directory: logs, socket
    std::string log;                                            // the postmaster's log
    std::string user;                                           // the server's user
    ChildOptions child;                                         // run as, working directory, own group
    SteadyClock::time_point deadline;                           // for initdb and the first session both
    milliseconds timeout{0};

    EnvironmentError timeout_error(const std::string& what, const std::vector<std::string>& logs) const {
        return EnvironmentError(what + " did not finish within " + std::to_string(timeout.count()) +
                                " ms; the machine may be overloaded:" + local_server::log_tails(logs));
    }
};

PgStart pg_start(const PgOptions& opts, std::vector<std::pair<std::string, std::string>> settings,
                 const std::string& initdb, const std::string& postgres, const std::string& base) {
    PgStart start;
    start.settings = std::move(settings);
    start.initdb = initdb;
    start.postgres = postgres;
    start.base = base;
    start.log = base + "/postgres.log";
    std::optional<std::string> run_as;
    std::tie(start.user, run_as) = pg_user(base);
    start.child.run_as_user = run_as;
    start.child.working_dir = base;
    start.child.own_process_group = true;
    start.deadline = SteadyClock::now() + opts.start_timeout;
    start.timeout = opts.start_timeout;
    return start;
}

}  // namespace

struct EmbeddedPostgres::Impl {
    TempDir dir{"relab-pg-"};
    std::string data_dir = dir.path() + "/data";
    PgEndpoint endpoint;
    std::optional<ChildProcess> child;
    ChildOptions postmaster;   // how it was started, for restart()
    int version_num = 0;       // server_version_num
    std::vector<int> stopped;  // the postmaster's children pause() stopped
    bool is_paused = false;

    ~Impl() { stop(); }
    // SIGSTOP the postmaster first, so it forks no new child while its children are listed.
    std::vector<int> freeze() {
        if (!child) return {};
        child->signal(SIGSTOP);
        std::vector<int> kids = relab::children_of(child->pid());
        for (int k : kids) ::kill(k, SIGSTOP);
        return kids;
    }
    void thaw() noexcept {
        for (int k : stopped) ::kill(k, SIGCONT);
        stopped.clear();
        if (child) child->signal(SIGCONT);
        is_paused = false;
    }
    void crash() {
        if (!child) return;
        std::vector<int> kids = freeze();
        for (int k : stopped) kids.push_back(k);
        for (int k : kids) ::kill(k, SIGKILL);
        child->terminate(milliseconds(0), SIGKILL);  // and reaped
        child.reset();
        stopped.clear();
        is_paused = false;
        // A backend still attached to the shared memory would keep the next postmaster from starting.
        const auto deadline = SteadyClock::now() + milliseconds(10000);
        while (!std::all_of(kids.begin(), kids.end(), process_ended)) {
            if (SteadyClock::now() > deadline)
                throw EnvironmentError("PostgreSQL's processes did not end within 10 s of SIGKILL");
            std::this_thread::sleep_for(milliseconds(2));
        }
    }
    void stop() noexcept {
        if (is_paused) thaw();  // a stopped process would never act on SIGQUIT
        if (child) {
            // SIGQUIT is PostgreSQL's immediate shutdown: no shutdown checkpoint. The data directory
            // is deleted next, and the checkpoint (fast shutdown, SIGINT) would fsync every file of
            // the new database for nothing.
            child->terminate(milliseconds(5000), SIGQUIT);
            child.reset();
        }
        dir.remove();
    }

    // Starting, a step each; every step throws EnvironmentError, with the logs, when it fails.
    void init_data_dir(const PgStart& start) const;
    ChildOptions postmaster_options(const PgStart& start, int port) const;
    bool wait_for_sessions(const PgStart& start, int port, bool may_move);
    bool set_up_if_ours(const PgStart& start, int port, bool may_move);
};

EmbeddedPostgres::EmbeddedPostgres(const PgOptions& opts) : m_impl(std::make_unique<Impl>()) {
    Impl& impl = *m_impl;
    const auto settings = local_server::merge_settings({{"listen_addresses", "127.0.0.1"}}, opts.config,
                                         {"port", "unix_socket_directories", "data_directory"}, "postgresql");
    const std::string initdb = find_binary("initdb");
    const PgStart start = pg_start(opts, settings, initdb, postgres_beside(initdb), impl.dir.path());
    impl.init_data_dir(start);

    impl.endpoint.host = "127.0.0.1";
    impl.endpoint.user = start.user;
    impl.endpoint.dbname = "postgres";
    int port = opts.preferred_port > 0 ? opts.preferred_port : free_loopback_port();
    for (int attempt = 1;; ++attempt) {
        const ChildOptions o = impl.postmaster_options(start, port);
        impl.child.emplace(o);
        impl.endpoint.port = port;
        const bool may_move = attempt < local_server::port_attempts;
        if (!impl.wait_for_sessions(start, port, may_move) || !impl.set_up_if_ours(start, port, may_move)) {
            port = free_loopback_port();
            continue;
        }
        impl.endpoint.dbname = "relab";
        impl.postmaster = o;
        // After a crash the startup process fsyncs every file of the data directory first, one by
        // one; syncfs (PostgreSQL 14+) does it in one call. A setting of the caller's wins.
        if (impl.version_num >= 140000 && !opts.config.count("recovery_init_sync_method")) {
            impl.postmaster.args.push_back("-c");
            impl.postmaster.args.push_back("recovery_init_sync_method=syncfs");
        }
        return;
    }
}

// initdb as the server's user, within the start's deadline.
void EmbeddedPostgres::Impl::init_data_dir(const PgStart& start) const {
    const std::string log = start.base + "/initdb.log";
    ChildOptions o = start.child;
    o.exe = start.initdb;
    o.args = {"-D", data_dir, "-U", start.user, "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"};
    o.stdout_path = log;
    o.stderr_path = log;
    ChildProcess initdb(o);
    for (;;) {
        throw_if_interrupted();
        if (initdb.wait_for(local_server::poll_interval)) break;
        if (SteadyClock::now() >= start.deadline) throw start.timeout_error("initdb", {log});
    }
    if (initdb.exit_code() != 0)
        throw EnvironmentError("initdb (" + start.initdb + ") failed with status " +
                               std::to_string(initdb.exit_code().value_or(-1)) + " as user " + start.user + " in " +
                               start.base + "; if the user cannot reach that directory, set TMPDIR to one it can:" +
                               local_server::log_tails({log}));
}

// The postmaster on `port`: its socket in the start's directory, the merged settings as -c.
ChildOptions EmbeddedPostgres::Impl::postmaster_options(const PgStart& start, int port) const {
    ChildOptions o = start.child;
    o.exe = start.postgres;
    o.args = {"-D", data_dir, "-p", std::to_string(port), "-k", start.base};
    for (const auto& [name, value] : start.settings) {
        o.args.push_back("-c");
        o.args.push_back(name + "=" + value);
    }
    o.stdout_path = start.log;
    o.stderr_path = start.log;
    return o;
}

// True once the postmaster just started accepts a session. False when it exited because its port
// was taken and `may_move` lets another be tried; throws when it exited otherwise or time ran out.
bool EmbeddedPostgres::Impl::wait_for_sessions(const PgStart& start, int port, bool may_move) {
    for (;;) {
        throw_if_interrupted();
        if (!child->running()) {
            int code = child->exit_code().value_or(-1);
            child.reset();
            if (local_server::any_log_contains({start.log}, "Address already in use") && may_move) return false;
            throw EnvironmentError("postgres (" + start.postgres + ") exited with status " + std::to_string(code) +
                                   " while starting on 127.0.0.1:" + std::to_string(port) +
                                   "; check the postgresql settings of the scenario, or free the port if it "
                                   "is taken:" + local_server::log_tails({start.log}));
        }
        const std::string last_error = local_server::probe_pg(endpoint, 2);
        if (last_error.empty()) return true;
        if (SteadyClock::now() >= start.deadline)
            throw start.timeout_error("postgres start (last error: " + last_error + ")", {start.log});
        local_server::sleep_poll();
    }
}

// A stranger on the port would answer too: ours is the one serving our data directory. In ours,
// creates the database relab and reads the version: true. False when a stranger answered and
// `may_move` lets another port be tried (ours is stopped).
bool EmbeddedPostgres::Impl::set_up_if_ours(const PgStart& start, int port, bool may_move) {
    try {
        pqxx::connection conn(endpoint.conninfo());
        pqxx::nontransaction tx(conn);
        auto dir = tx.exec1("SHOW data_directory")[0].as<std::string>();
        if (std::filesystem::weakly_canonical(dir) != std::filesystem::weakly_canonical(data_dir)) {
            child->terminate(milliseconds(5000), SIGQUIT);
            child.reset();
            if (may_move) return false;
            throw EnvironmentError("another PostgreSQL answers on 127.0.0.1:" + std::to_string(port));
        }
        tx.exec0("CREATE DATABASE relab");
        version_num = tx.exec1("SHOW server_version_num")[0].as<int>();
        return true;
    } catch (const pqxx::failure& e) {
        throw EnvironmentError("embedded PostgreSQL at " + endpoint.display() +
                               " answered but CREATE DATABASE relab failed: " + local_server::one_line(e.what()) +
                               local_server::log_tails({start.log}));
    }
}

void EmbeddedPostgres::crash() { m_impl->crash(); }

void EmbeddedPostgres::restart() {
    Impl& impl = *m_impl;
    impl.crash();
    const std::string log = impl.dir.path() + "/postgres.log";
    impl.child.emplace(impl.postmaster);
    // Crash recovery first: until it is done, connections are refused ("the database system is
    // starting up").
    const auto deadline = SteadyClock::now() + milliseconds(60000);
    std::string last_error;
    for (;;) {
        throw_if_interrupted();
        if (!impl.child->running()) {
            const int code = impl.child->exit_code().value_or(-1);
            impl.child.reset();
            throw EnvironmentError("postgres exited with status " + std::to_string(code) + " while restarting on " +
                                   impl.endpoint.display() + local_server::log_tails({log}));
        }
        last_error = local_server::probe_pg(impl.endpoint, 2);
        if (last_error.empty()) return;
        if (SteadyClock::now() >= deadline)
            throw EnvironmentError("postgres did not accept connections within 60 s of its restart (last error: " +
                                   last_error + ")" + local_server::log_tails({log}));
        std::this_thread::sleep_for(milliseconds(5));
    }
}

bool EmbeddedPostgres::running() const { return m_impl->child.has_value(); }

void EmbeddedPostgres::pause() {
    if (m_impl->is_paused || !m_impl->child) return;
    m_impl->stopped = m_impl->freeze();
    m_impl->is_paused = true;
}

void EmbeddedPostgres::resume() noexcept {
    if (m_impl->is_paused) m_impl->thaw();
}

bool EmbeddedPostgres::paused() const { return m_impl->is_paused; }

EmbeddedPostgres::~EmbeddedPostgres() = default;

const PgEndpoint& EmbeddedPostgres::endpoint() const { return m_impl->endpoint; }
int EmbeddedPostgres::pid() const { return m_impl->child ? m_impl->child->pid() : -1; }
const std::string& EmbeddedPostgres::data_dir() const { return m_impl->data_dir; }
void EmbeddedPostgres::stop() { m_impl->stop(); }

}  // namespace relab
