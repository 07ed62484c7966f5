// The reaper: what a SIGKILLed relab leaves behind is cleared by a process of its own, as
// testcontainers' Ryuk does for containers. `relab run` forks it first thing; from then on every
// temp dir, server or role process, Redis key prefix and PostgreSQL schema the run creates is
// registered with it through a pipe, and forgotten again when relab removes it itself. When the pipe
// reaches end of file without relab's "done" (relab was killed and the kernel closed its end), the
// reaper kills the registered process groups, deletes the keys under the registered prefixes, drops
// the schemas, removes the dirs, and exits. The children also die by PR_SET_PDEATHSIG; the reaper is
// what removes the rest (temp dirs, and keys and tables on external servers).
#pragma once

#include <string>
#include <sys/types.h>

#include "clients/endpoint.h"

namespace relab::reaper {

// Forks the reaper (once; later calls do nothing). Call before any thread starts: the reaper is a
// copy of this process that keeps only its pipe. It runs in a session of its own, so a terminal's
// Ctrl-C or a kill of relab's process group does not reach it, and it ignores SIGINT/SIGTERM/SIGHUP.
void start();
// True between start() and finish() in the process that started it (not in its children).
bool running();

// Registrations: no-ops when no reaper runs (unit tests, `relab role`). Never throw.
void watch_dir(const std::string& path);
void forget_dir(const std::string& path);
// A child process; `group`: kill its whole process group (it leads one).
void watch_process(pid_t pid, bool group);
void forget_process(pid_t pid);
void watch_redis_prefix(const RedisEndpoint& ep, const std::string& prefix);
void forget_redis_prefix(const RedisEndpoint& ep, const std::string& prefix);
void watch_pg_schema(const PgEndpoint& ep, const std::string& schema);
void forget_pg_schema(const PgEndpoint& ep, const std::string& schema);

// A normal end (whatever the exit status): tells the reaper nothing is to be cleared and waits for
// it to exit, so relab leaves no process behind. Idempotent.
void finish() noexcept;

// Calls finish() on scope exit.
struct Guard {
    Guard() { start(); }
    ~Guard() { finish(); }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
};

}  // namespace relab::reaper
