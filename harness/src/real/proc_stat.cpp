#include "real/proc_stat.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace relab {

std::optional<ProcStat> proc_stat(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
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

std::vector<int> children_of(int pid) {
    std::vector<int> out;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        const int child = std::stoi(name);
        const auto s = proc_stat(child);
        if (s && s->ppid == pid) out.push_back(child);
    }
    return out;
}

}  // namespace relab
