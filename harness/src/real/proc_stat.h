// What /proc/PID/stat says about a process: its state letter, parent and process group. Used to
// see a signal take effect (T after SIGSTOP), a postmaster's backends die with it, and in tests.
#pragma once

#include <optional>
#include <vector>

namespace relab {

struct ProcStat {
    char state = '?';  // R, S, D, T, Z (zombie), X (dead), ...
    int ppid = 0;
    int pgrp = 0;
};

// nullopt when the process is gone.
std::optional<ProcStat> proc_stat(int pid);
// Present and neither a zombie nor dead.
bool process_running(int pid);
// The processes whose parent is `pid` (a postmaster's backends and workers).
std::vector<int> children_of(int pid);

}  // namespace relab
