#include "process/redis_benchmark_tool.h"

#include <algorithm>

#include <fmt/format.h>

#include "ports/ports.h"  // HarnessError
#include "process/child_process.h"
#include "process/tool_run.h"

namespace relab {

std::string find_redis_benchmark(const std::string& who, const std::string& without_it) {
    if (auto path = find_on_path("redis-benchmark")) return *path;
    throw EnvironmentError(fmt::format("{} runs redis-benchmark, which is not on PATH: install it (apt-get install -y "
                                       "redis-tools, or the redis package of your system){}",
                                       who, without_it.empty() ? "" : " or " + without_it));
}

RedisBenchmarkTool::RedisBenchmarkTool(std::string who, std::string exe, RedisEndpoint ep, std::string work_dir)
    : m_who(std::move(who)), m_exe(std::move(exe)), m_ep(std::move(ep)), m_dir(std::move(work_dir)) {
    if (!m_ep.password.empty())
        throw EnvironmentError(fmt::format(
            "{} runs redis-benchmark, which takes a password only on its command line, where every user of the "
            "machine can read it: run it on the servers relab starts itself (no --redis-url) or on a Redis without "
            "a password",
            m_who));
}

RedisBenchmarkRow RedisBenchmarkTool::run(const std::vector<std::string>& args, int requests, int clients,
                                          int pipeline) {
    ChildOptions o;
    o.exe = m_exe;
    o.args = {"-h", m_ep.host, "-p", std::to_string(m_ep.port), "--dbnum", std::to_string(m_ep.db),
              "-c", std::to_string(clients), "-n", std::to_string(requests), "-P", std::to_string(pipeline), "--csv"};
    o.args.insert(o.args.end(), args.begin(), args.end());
    const std::string out_path = fmt::format("{}/redis-benchmark-{}.out", m_dir, ++m_runs);
    // A minute plus 1 ms per request: far above any healthy run, so only a hung tool hits it.
    const std::chrono::milliseconds timeout(60000 + static_cast<int64_t>(requests));
    const ToolExit exit = run_tool(o, out_path, timeout);
    const std::string out = slurp_file(out_path);
    const std::optional<RedisBenchmarkRow> row = parse_redis_benchmark_row(out);
    if (exit.code == 0 && row) return *row;
    const std::string tail = out.size() > 1500 ? "..." + out.substr(out.size() - 1500) : out;
    std::string shown;
    for (const auto& a : o.args) shown += " " + a;
    throw HarnessError(fmt::format("{}: redis-benchmark ({}{}) {} and printed {}: {}", m_who, m_exe, shown,
                                   tool_exit_text(exit, timeout), row ? "a figure" : "no figure",
                                   tail.empty() ? "(no output)" : tail));
}

std::optional<std::string> RedisBenchmarkTool::version() {
    ChildOptions o;
    o.exe = m_exe;
    o.args = {"--version"};
    const std::string out_path = m_dir + "/redis-benchmark-version.out";
    const ToolExit exit = run_tool(o, out_path, std::chrono::milliseconds(10000));
    if (exit.code != 0) return std::nullopt;
    return parse_redis_benchmark_version(slurp_file(out_path));
}

}  // namespace relab
