// redis-benchmark against one server, one run at a time, its output in a work folder. Used by
// `relab bench` for the reference figures relab's own client is compared with.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/redis_benchmark_output.h"
#include "servers/servers.h"

namespace relab {

// The redis-benchmark binary on PATH. Throws EnvironmentError saying what to install.
std::string find_redis_benchmark();

class RedisBenchmarkTool {
public:
    // `work_dir` must exist and outlive the object; its output files go there.
    RedisBenchmarkTool(std::string exe, RedisEndpoint ep, std::string work_dir);

    // `redis-benchmark -h H -p P -c clients -n requests -P pipeline --csv ARGS...`, where ARGS is a
    // command (XADD k * f v) or a test selection (-t ping_mbulk). Throws HarnessError naming the
    // tool, its exit and the end of its output when it fails or prints no figure.
    RedisBenchmarkRow run(const std::vector<std::string>& args, int requests, int clients = 1, int pipeline = 1);
    // "7.0.15", or nullopt when `redis-benchmark --version` does not say.
    std::optional<std::string> version();
    const std::string& exe() const { return m_exe; }

private:
    std::string m_exe;
    RedisEndpoint m_ep;
    std::string m_dir;
    int m_runs = 0;  // one output file per run, kept until the work folder goes
};

}  // namespace relab
