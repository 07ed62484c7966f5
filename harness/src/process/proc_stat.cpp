#include "process/proc_stat.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <sstream>
#include <string>

namespace relab {

std::optional<std::string> read_proc_file(int pid, const char* name) {
    const std::string path = "/proc/" + std::to_string(pid) + "/" + name;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::string out;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) {
            out.append(buf, static_cast<size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        ::close(fd);
        if (n < 0) return std::nullopt;  // ESRCH: the process ended after the open
        return out;
    }
}

std::optional<ProcStat> proc_stat(int pid) {
    const auto read = read_proc_file(pid, "stat");
    if (!read) return std::nullopt;
    const std::string& text = *read;
    // The command name (in parentheses) may itself hold spaces and parentheses: read after the last.
    const auto close = text.rfind(')');
    if (close == std::string::npos || close + 2 >= text.size()) return std::nullopt;
    std::istringstream rest(text.substr(close + 2));
    ProcStat s;
    rest >> s.state >> s.ppid >> s.pgrp;
    return s;
}

bool process_running(int pid) {
    const auto s = proc_stat(pid);
    return s && s->state != 'Z' && s->state != 'X';
}

namespace {

// Every process in /proc whose stat satisfies `keep`.
template <typename Keep>
std::vector<int> processes_where(Keep keep) {
    std::vector<int> out;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        const int pid = std::stoi(name);
        const auto s = proc_stat(pid);
        if (s && keep(*s)) out.push_back(pid);
    }
    return out;
}

}  // namespace

std::vector<int> children_of(int pid) {
    return processes_where([pid](const ProcStat& s) { return s.ppid == pid; });
}

bool group_running(int pgrp) {
    return !processes_where([pgrp](const ProcStat& s) { return s.pgrp == pgrp && s.state != 'Z' && s.state != 'X'; })
                .empty();
}

}  // namespace relab
