// What /proc/PID/stat says about a process: its state letter, parent and process group. Used to
// see a signal take effect (T after SIGSTOP), a postmaster's backends die with it, and in tests.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace relab {

struct ProcStat {
    char state = '?';  // R, S, D, T, Z (zombie), X (dead), ...
    int ppid = 0;
    int pgrp = 0;
};

// The bytes of /proc/PID/NAME, or nullopt when the process is gone. A process can end between the
// open and the read: read(2) then fails with ESRCH, which an ifstream read through an
// istreambuf_iterator turns into an exception. This returns nullopt instead.
std::optional<std::string> read_proc_file(int pid, const char* name);
// nullopt when the process is gone.
std::optional<ProcStat> proc_stat(int pid);
// Present and neither a zombie nor dead.
bool process_running(int pid);
// The processes whose parent is `pid` (a postmaster's backends and workers).
std::vector<int> children_of(int pid);
// True while a member of process group `pgrp` is present and neither a zombie nor dead.
bool group_running(int pgrp);

}  // namespace relab
