#include "cli/run_jobs.h"

#include <map>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>
#include <numeric>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "process/child_process.h"
#include "util/interrupt.h"
#include "process/temp_dir.h"
#include "report/reporter.h"

namespace relab {

int parse_jobs(const std::string& text) {
    const auto cores = [] { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); };
    if (text == "auto") return cores();
    size_t used = 0;
    int n = -1;
    try {
        n = std::stoi(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || n < 0 || n > 1024)
        throw std::invalid_argument("--jobs takes a count of parallel runs (1..1024), or 0 or auto for every core, got '" +
                                    text + "'");
    return n == 0 ? cores() : n;
}

namespace {

// What a trial costs besides its own content, roughly: role processes started and stopped, the
// trial's keys and rows set up, results read back and checked.
constexpr int64_t k_trial_overhead_us = 300'000;
constexpr int64_t k_server_start_us = 1'000'000;   // a redis-server or PostgreSQL of the lab's own
constexpr int64_t k_cluster_start_us = 3'000'000;  // S2's Redis Cluster, once per lab

}  // namespace

int64_t estimated_lab_us(const Scenario& s, std::optional<int> runs) {
    if (counts_cases(s.kind)) {
        int64_t us = 0;
        for (const auto& c : s.sessions().cases) {
            int64_t last = 0;
            for (const auto& session : c.sessions)
                for (const auto& step : session.steps) last = std::max(last, step.at_ms);
            us += k_trial_overhead_us + last * 1000;
        }
        return us;
    }
    static const StreamLab no_stream;  // an idempotency lab's trials publish nothing
    const StreamLab& flow = s.flow_if() ? *s.flow_if() : no_stream;
    int64_t per_trial = k_trial_overhead_us;
    int64_t last_ms = 0;
    for (const auto& e : flow.events) {
        last_ms = std::max(last_ms, e.at_ms);
        if (e.cost_us >= 0) {
            per_trial += e.cost_us;
        } else if (const auto it = flow.job_cost_ms.find(e.type); it != flow.job_cost_ms.end()) {
            per_trial += it->second * 1000;
        }
    }
    per_trial += last_ms * 1000;
    if (s.servers.own) per_trial += k_server_start_us;
    if (s.servers.postgres) per_trial += k_server_start_us;
    const int n = std::max(1, runs.value_or(s.runs));
    return (flow.shard.enabled ? k_cluster_start_us : 0) + per_trial * n;
}

std::vector<std::vector<size_t>> split_labs(const std::vector<int64_t>& estimates, int jobs) {
    const size_t n = std::min(estimates.size(), static_cast<size_t>(std::max(jobs, 1)));
    std::vector<std::vector<size_t>> groups(n);
    if (n == 0) return groups;
    std::vector<size_t> order(estimates.size());
    std::iota(order.begin(), order.end(), size_t{0});
    // Longest first; equal estimates keep their order, so the split is the same on every run.
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return estimates[a] > estimates[b]; });
    std::vector<int64_t> load(n, 0);
    for (size_t i : order) {
        const size_t g = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
        groups[g].push_back(i);
        load[g] += std::max<int64_t>(estimates[i], 0);
    }
    for (auto& g : groups) std::sort(g.begin(), g.end());
    return groups;
}

std::vector<std::string> child_run_args(const RunOptions& o, const JobGroup& g, const std::string& json_path) {
    std::vector<std::string> a = {"run", "--quiet", "--json", json_path, "--backend", o.backend};
    if (o.seed) a.insert(a.end(), {"--seed", std::to_string(*o.seed)});
    if (o.runs) a.insert(a.end(), {"--runs", std::to_string(*o.runs)});
    if (o.trials) a.insert(a.end(), {"--trials", std::to_string(*o.trials)});
    if (o.orders && g.orders_apply) a.insert(a.end(), {"--orders", std::to_string(*o.orders)});
    if (!o.mutant.empty()) a.insert(a.end(), {"--mutant", o.mutant});
    if (!o.shard.empty()) a.insert(a.end(), {"--shard", o.shard});
    if (o.allow_server_faults) a.push_back("--allow-server-faults");
    if (!o.scenarios_dir.empty()) a.insert(a.end(), {"--scenarios", o.scenarios_dir});
    a.push_back("--");
    a.insert(a.end(), g.files.begin(), g.files.end());
    return a;
}

std::map<std::string, std::string> child_run_env(const RunOptions& o) {
    std::map<std::string, std::string> env;
    if (!o.redis_url.empty()) env["REDIS_URL"] = o.redis_url;
    if (!o.pg_url.empty()) env["DATABASE_URL"] = o.pg_url;
    return env;
}

namespace {

// "child 2 of 3 (scenarios/08a-baseline.json ...)": its labs by file, or by id when given.
std::string group_name(const std::vector<JobGroup>& groups, size_t k, const std::vector<std::string>& ids = {}) {
    return fmt::format("child {} of {} ({})", k + 1, groups.size(), fmt::join(ids.empty() ? groups[k].files : ids, " "));
}

}  // namespace

std::vector<LabResult> merge_child_labs(const std::vector<Scenario>& expanded, const std::vector<size_t>& base_of,
                                        const std::vector<JobGroup>& groups, std::vector<RunReport> reports) {
    std::vector<std::optional<LabResult>> slots(expanded.size());
    for (size_t k = 0; k < groups.size(); ++k) {
        std::vector<size_t> mine;  // the expanded labs this child ran, in its order
        for (size_t i = 0; i < expanded.size(); ++i)
            if (std::binary_search(groups[k].labs.begin(), groups[k].labs.end(), base_of[i])) mine.push_back(i);
        std::vector<std::string> ids;
        for (size_t i : mine) ids.push_back(expanded[i].id);
        auto& got = reports.at(k).labs;
        if (got.size() != mine.size())
            throw HarnessError(fmt::format("--jobs: {} reported {} lab(s), {} expected", group_name(groups, k, ids),
                                           got.size(), mine.size()));
        for (size_t m = 0; m < mine.size(); ++m) {
            const Scenario& want = expanded[mine[m]];
            if (got[m].scenario.id != want.id)
                throw HarnessError(fmt::format("--jobs: {} reported lab {} where {} was expected", group_name(groups, k, ids),
                                               got[m].scenario.id, want.id));
            // The scenario as this process selected it: the JSON's copy lacks what the file's
            // place gives it (its file, part and group).
            got[m].scenario = want;
            slots[mine[m]] = std::move(got[m]);
        }
    }
    std::vector<LabResult> out;
    for (size_t i = 0; i < slots.size(); ++i) {
        if (!slots[i]) throw HarnessError(fmt::format("--jobs: no child ran lab {}", expanded[i].id));
        out.push_back(std::move(*slots[i]));
        out.back().sequence = static_cast<int>(i) + 1;
    }
    return out;
}

namespace {

// The last lines of a child's stderr, for the message that says why it failed.
std::string tail_of(const std::string& path, size_t max_chars = 2000) {
    std::ifstream in(path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    if (text.empty()) return "  (its stderr is empty)";
    if (text.size() > max_chars) {
        text = text.substr(text.size() - max_chars);
        if (const auto nl = text.find('\n'); nl != std::string::npos) text = text.substr(nl + 1);
        text = "…\n" + text;
    }
    std::string out;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t end = std::min(text.find('\n', start), text.size());
        out += "  | " + text.substr(start, end - start) + "\n";
        start = end + 1;
    }
    if (!out.empty()) out.pop_back();
    return out;
}

// A child that stops on its own signal handler unwinds through its servers and temp dirs; this
// long is allowed before it and its process group are killed.
constexpr auto k_stop_grace = std::chrono::seconds(60);

void stop_all(std::vector<ChildProcess>& kids, int sig) {
    for (auto& k : kids) k.signal(sig);
    for (auto& k : kids) k.terminate(k_stop_grace, sig);
}

// Where child k's files go: "<dir>/child-<k+1>.json", ".out", ".err".
struct ChildFiles {
    std::string dir;
    std::string path(size_t k, const char* what) const { return fmt::format("{}/child-{}.{}", dir, k + 1, what); }
};

void start_children(const RunOptions& o, const std::string& relab_exe, const std::vector<JobGroup>& groups,
                    const ChildFiles& files, std::vector<ChildProcess>& kids) {
    for (size_t k = 0; k < groups.size(); ++k) {
        ChildOptions c;
        c.exe = relab_exe;
        c.args = child_run_args(o, groups[k], files.path(k, "json"));
        c.env = child_run_env(o);
        c.stdout_path = files.path(k, "out");
        c.stderr_path = files.path(k, "err");
        // Ctrl-C reaches the children through this process, which waits for each to stop.
        c.own_process_group = true;
        kids.emplace_back(c);
    }
}

// How a child that ended without a verdict (status 0 or 1) ended.
std::string child_exit_text(int code) {
    return code == 130                 ? std::string("was interrupted (status 130)")
           : code > 128 && code < 160 ? fmt::format("was killed by signal {}", code - 128)
           : code < 0                 ? std::string("could not be waited for")
                                      : fmt::format("exited with status {}", code);
}

// The children still running. One that ended without a verdict stops the others and throws.
size_t count_running(std::vector<ChildProcess>& kids, const std::vector<JobGroup>& groups, const ChildFiles& files,
                     bool show_progress) {
    size_t running = 0;
    for (size_t k = 0; k < kids.size(); ++k) {
        if (kids[k].running()) {
            ++running;
            continue;
        }
        const int code = kids[k].exit_code().value_or(-1);
        if (code == 0 || code == 1) continue;  // its labs held or broke: verdicts, read below
        if (show_progress) std::cerr << "\r\033[K" << std::flush;
        stop_all(kids, SIGTERM);
        throw HarnessError(fmt::format("--jobs: {} {}, so the run has no result for its labs; the tail of its "
                                       "stderr:\n{}",
                                       group_name(groups, k), child_exit_text(code), tail_of(files.path(k, "err"))));
    }
    return running;
}

// Polls the children until all have ended, showing progress; a signal stops them all.
void wait_for_children(std::vector<ChildProcess>& kids, const std::vector<JobGroup>& groups, const ChildFiles& files,
                       bool show_progress) {
    const auto started = std::chrono::steady_clock::now();
    size_t running = kids.size();
    while (running > 0) {
        if (const int sig = interrupt_signal(); sig != 0) {
            if (show_progress) std::cerr << "\r\033[K" << std::flush;
            std::cerr << fmt::format("relab: signal {}: stopping {} child run(s)…\n", sig, running);
            stop_all(kids, sig);
            throw Interrupted(sig);
        }
        running = count_running(kids, groups, files, show_progress);
        if (show_progress) {
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
            std::cerr << fmt::format("\r\033[K{} of {} child run(s) finished ({:.1f} s)", kids.size() - running,
                                     kids.size(), s)
                      << std::flush;
        }
        if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (show_progress) std::cerr << "\r\033[K" << std::flush;
}

std::vector<RunReport> read_child_reports(std::vector<ChildProcess>& kids, const std::vector<JobGroup>& groups,
                                          const ChildFiles& files) {
    std::vector<RunReport> reports;
    for (size_t k = 0; k < groups.size(); ++k) {
        std::ifstream in(files.path(k, "json"), std::ios::binary);
        try {
            if (!in) throw std::runtime_error("it wrote no JSON report");
            reports.push_back(run_from_json(nlohmann::json::parse(in)));
        } catch (const std::exception& e) {
            throw HarnessError(fmt::format("--jobs: {} exited with status {} but its JSON report cannot be read ({}); "
                                           "the tail of its stderr:\n{}",
                                           group_name(groups, k), kids[k].exit_code().value_or(-1), e.what(),
                                           tail_of(files.path(k, "err"))));
        }
    }
    return reports;
}

}  // namespace

std::vector<RunReport> run_job_groups(const RunOptions& o, const std::string& relab_exe,
                                      const std::vector<JobGroup>& groups, bool show_progress) {
    TempDir tmp("relab-jobs-");
    const ChildFiles files{tmp.path()};
    std::vector<ChildProcess> kids;
    kids.reserve(groups.size());
    try {
        start_children(o, relab_exe, groups, files, kids);
        wait_for_children(kids, groups, files, show_progress);
    } catch (...) {
        stop_all(kids, SIGTERM);  // a child that could not start: the others stop too
        throw;
    }
    return read_child_reports(kids, groups, files);
}

}  // namespace relab
