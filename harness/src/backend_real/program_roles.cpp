#include "backend_real/program_roles.h"

#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "backend_real/program_env.h"
#include "engine/timeouts.h"
#include "process/child_process.h"
#include "process/program_role.h"
#include "process/temp_dir.h"
#include "process/tool_run.h"
#include "util/interrupt.h"

namespace relab {

namespace {

namespace fs = std::filesystem;

std::string install_hint(const ExecSpec& e) {
    return e.install.empty() ? std::string() : "; install it: " + e.install;
}

// One program's check, run once per run (a lab and its mutants share it).
std::optional<std::string> check_program(const Scenario& s, const ExecSpec& e) {
    const std::string& exe = e.argv.front();
    const bool found = exe.find('/') != std::string::npos ? is_executable_file(exe) : find_on_path(exe).has_value();
    if (!found)
        return fmt::format("needs {}, which is not {}{}", exe, exe.find('/') != std::string::npos ? "an executable file" : "on PATH",
                           install_hint(e));
    if (e.check.empty()) return std::nullopt;
    TempDir tmp("relab-check-");
    const std::string out = tmp.path() + "/check.out";
    ChildOptions o;
    o.exe = e.check.front();
    o.args.assign(e.check.begin() + 1, e.check.end());
    o.working_dir = program_dir(s, e);
    constexpr std::chrono::milliseconds timeout{20'000};
    ToolExit x;
    try {
        x = run_tool(o, out, timeout);
    } catch (const EnvironmentError& err) {
        return fmt::format("its check `{}` could not start ({}){}", program_text(e.check), err.what(), install_hint(e));
    }
    if (x.code == 0) return std::nullopt;
    std::string said = slurp_file(out);
    while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
    return fmt::format("its check `{}` {}{}{}", program_text(e.check), tool_exit_text(x, timeout),
                       said.empty() ? "" : " (" + said.substr(0, 300) + ")", install_hint(e));
}

// A relative argument with a slash that names no file where the program runs: a script missing
// from the checkout, which the interpreter would report as an early exit in the middle of a trial.
std::optional<std::string> missing_file(const ExecSpec& e, const std::string& dir) {
    for (size_t i = 1; i < e.argv.size(); ++i) {
        const std::string& a = e.argv[i];
        if (a.empty() || a[0] == '-' || a[0] == '/' || a.find('/') == std::string::npos || a.find('=') != std::string::npos)
            continue;
        if (!fs::exists(fs::path(dir) / a)) return a;
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> program_skip_reason(const Scenario& s) {
    static std::mutex mu;
    static std::map<std::string, std::optional<std::string>> checked;  // by program and check
    for (const auto& [role, e] : s.exec.by_role) {
        const std::string key = program_text(e.argv) + "\n" + program_text(e.check) + "\n" + program_dir(s, e);
        std::optional<std::string> reason;
        {
            std::lock_guard<std::mutex> lock(mu);
            const auto it = checked.find(key);
            if (it != checked.end()) {
                reason = it->second;
            } else {
                reason = check_program(s, e);
                checked[key] = reason;
            }
        }
        if (reason) return "its " + role + " is the program `" + program_text(e.argv) + "`: " + *reason;
    }
    return std::nullopt;
}

std::string program_dir(const Scenario& s, const ExecSpec& e) {
    const fs::path file = fs::absolute(s.file.empty() ? fs::path("scenario.json") : fs::path(s.file));
    if (!e.dir.empty()) return (file.parent_path() / e.dir).lexically_normal().string();
    for (fs::path p = file.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path())
        if (p.filename() == "scenarios") return p.parent_path().string();
    return file.parent_path().string();
}

std::unique_ptr<RoleProcess> start_program_role(const Scenario& s, const RoleConfig& c, const ExecSpec& e,
                                                const std::string& dir, const std::string& stderr_path,
                                                const std::string& trace_path) {
    ProgramStart p;
    p.argv = e.argv;
    p.dir = program_dir(s, e);
    if (const auto missing = missing_file(e, p.dir))
        throw EnvironmentError(fmt::format("{} of {}: the program `{}` names {}, which does not exist in {} (a relative "
                                           "path is taken from there: give \"dir\" beside \"exec\", relative to the "
                                           "scenario file, or an absolute path)",
                                           c.actor, s.id, program_text(e.argv), *missing, p.dir));
    p.env = program_env(s, c, e);
    p.stdout_path = dir + "/" + c.actor + ".out";
    p.stderr_path = stderr_path;
    if (e.trace) p.trace_path = trace_path;
    return spawn_program_role(p);
}

void wait_for_readers(RedisClient& admin, const Scenario& s, const std::string& prefix,
                      const std::function<std::string(const std::string&)>& why_not,
                      const std::function<bool()>& passed) {
    const auto deadline = std::chrono::steady_clock::now() + timeouts::kBarrier;
    std::set<std::string> blocked;
    for (;;) {
        throw_if_interrupted();
        blocked.clear();
        std::istringstream lines(admin.call({"CLIENT", "LIST"}).str);
        for (std::string line; std::getline(lines, line);) {
            const auto name_at = line.find(" name=" + prefix);
            if (name_at == std::string::npos || line.find(" cmd=xreadgroup") == std::string::npos) continue;
            const auto flags_at = line.find(" flags=");
            if (flags_at == std::string::npos || line.substr(flags_at + 7, line.find(' ', flags_at + 7) - flags_at - 7).find('b') == std::string::npos)
                continue;
            const size_t from = name_at + 6 + prefix.size();
            blocked.insert(line.substr(from, line.find(' ', from) - from));
        }
        if (static_cast<int>(blocked.size()) >= s.flow().consumers || passed()) return;
        if (std::chrono::steady_clock::now() > deadline) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::string missing;
    for (int i = 1; i <= s.flow().consumers; ++i) {
        const std::string actor = fmt::format("C{}", i);
        if (blocked.count(actor)) continue;
        const std::string note = why_not(actor);
        missing += fmt::format("\n  {}{}", actor, note.empty() ? "" : ": " + note);
    }
    const ExecSpec* e = s.exec.of("consumer");
    throw HarnessError(fmt::format(
        "{} of {} consumers were seen blocked in XREADGROUP within {} ms; a consumer program (`{}`) names its Redis "
        "connection $RELAB_CLIENT_NAME (CLIENT SETNAME) and reads the group with XREADGROUP ... BLOCK "
        "(docs/your-code.md). Not seen:{}",
        blocked.size(), s.flow().consumers, timeouts::kBarrier.count(), e ? program_text(e->argv) : std::string("?"), missing));
}

std::vector<HistoryRecord> program_output_records(const std::string& actor, const std::string& stdout_path,
                                                  const std::string& stderr_path, int64_t at_ns) {
    std::vector<HistoryRecord> out;
    for (const auto& [what, path] : {std::pair<const char*, std::string>{"stdout", stdout_path}, {"stderr", stderr_path}}) {
        const std::string text = tail_of_file(path, k_output_bytes);
        if (!text.empty())
            out.push_back(HistoryRecord{0, at_ns, actor, Op::observe, {{"text", fmt::format("{}'s {}: {}", actor, what, text)}}});
    }
    return out;
}

}  // namespace relab
