#include "bench/measure/bench_sim.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "backend_sim/sim_backend.h"

namespace relab {

namespace {

double process_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

SimBenchResult bench_sim_lab(const Scenario& s, int trials, int jobs) {
    jobs = std::clamp(jobs, 1, std::max(trials, 1));
    struct Range {
        int first = 1, count = 0;
        LabResult lab;
    };
    std::vector<Range> ranges(static_cast<size_t>(jobs));
    int next = 1;
    for (int j = 0; j < jobs; ++j) {
        ranges[j].first = next;
        ranges[j].count = trials / jobs + (j < trials % jobs ? 1 : 0);
        next += ranges[j].count;
    }
    std::mutex error_mutex;
    std::exception_ptr error;
    auto work = [&](Range& r) {
        try {
            SimOptions o;
            o.trials = r.count;
            o.first_trial = r.first;
            o.self_check = r.first == 1;  // trial 1's determinism re-run, as in a one-thread run
            r.lab = SimBackend(o).run(s);
        } catch (...) {
            std::lock_guard<std::mutex> lock(error_mutex);
            if (!error) error = std::current_exception();
        }
    };
    const auto started = std::chrono::steady_clock::now();
    const double cpu_started = process_cpu_seconds();
    if (jobs == 1) {
        work(ranges[0]);  // on this thread: the one-core figure has no thread start in it
    } else {
        std::vector<std::thread> threads;
        threads.reserve(ranges.size());
        for (auto& r : ranges) threads.emplace_back(work, std::ref(r));
        for (auto& t : threads) t.join();
    }
    SimBenchResult result;
    result.jobs = jobs;
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    result.cpu_seconds = process_cpu_seconds() - cpu_started;
    if (error) std::rethrow_exception(error);
    for (const auto& r : ranges) {
        result.total += r.lab.total;
        result.wrong += r.lab.wrong;
        result.simulated += r.lab.total + (r.first == 1 ? 1 : 0);
    }
    return result;
}

}  // namespace relab
