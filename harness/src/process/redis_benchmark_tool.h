// redis-benchmark against one server, one run at a time, its output in a work folder: relab's one
// way to find, run and read it. Used by `relab bench` for the reference figures relab's own client
// is compared with, and by the idem-bench lab for the article's figure beside relab's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tool_output/redis_benchmark_output.h"
#include "clients/endpoint.h"

namespace relab {

// The redis-benchmark binary on PATH. Throws EnvironmentError saying that `who` ("idem-bench")
// runs it, what to install and, when given, what runs without it.
std::string find_redis_benchmark(const std::string& who, const std::string& without_it = "");

class RedisBenchmarkTool {
public:
    // `work_dir` must exist and outlive the object; its output files go there. `who` names the
    // caller in errors. Throws EnvironmentError for a Redis with a password: redis-benchmark takes
    // it only on its command line, where every user of the machine can read it.
    RedisBenchmarkTool(std::string who, std::string exe, RedisEndpoint ep, std::string work_dir);

    // `redis-benchmark -h H -p P -c clients -n requests -P pipeline --csv ARGS...`, where ARGS is a
    // command (XADD k * f v) or a test selection (-t ping_mbulk). Throws HarnessError naming the
    // tool, its exit and the end of its output when it fails or prints no figure.
    RedisBenchmarkRow run(const std::vector<std::string>& args, int requests, int clients = 1, int pipeline = 1);
    // "7.0.15", or nullopt when `redis-benchmark --version` does not say.
    std::optional<std::string> version();
    const std::string& exe() const { return m_exe; }

private:
    std::string m_who;
    std::string m_exe;
    RedisEndpoint m_ep;
    std::string m_dir;
    int m_runs = 0;  // one output file per run, kept until the work folder goes
};

}  // namespace relab
