#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/run_outputs.h"
#include "relab_commit.h"
#include "check/inherent_time.h"
#include "cli/run_jobs.h"
#include "scenario/loader/loader.h"
#include "util/interrupt.h"
#include "process/child_process.h"
#include "process/reaper.h"
#include "clients/redis_client.h"
#include "clients/pg_client.h"
#include "report/lab_summary.h"
#include "report/text/load_table.h"
#include "report/text/soak_table.h"
#include "report/reporter.h"
#include "backend_real/real_backend.h"
#include "backend_sim/sim_backend.h"
#include "scenario/scenario.h"

namespace relab {

namespace {

std::string env_or(const char* name, const std::string& fallback) {
    if (!fallback.empty()) return fallback;
    const char* v = std::getenv(name);
    return v ? v : "";
}

int64_t unix_now_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::string utc_iso(int64_t unix_us) {
    const std::time_t t = static_cast<std::time_t>(unix_us / 1'000'000);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

}  // namespace

// Every argument is a file, a folder of them, a scenario id or a part name; order is kept,
// duplicates dropped. The load and soak labs live in <scenarios>/load and <scenarios>/soak: a run of
// every lab leaves them out (they take minutes), and naming them ("load", "load-s1", "soak") finds
// them there.
std::vector<Scenario> select_labs(const RunOptions& o) {
    std::vector<Scenario> chosen = select_base_labs(o);
    if (!o.mutant.empty()) return mutants_of(chosen, o.mutant);
    return chosen;
}

std::vector<Scenario> select_base_labs(const RunOptions& o) {
    const std::string dir = o.scenarios_dir.empty() ? default_scenarios_dir() : o.scenarios_dir;
    std::vector<Scenario> all;
    if (std::filesystem::is_directory(dir)) all = load_scenario_dir(dir);
    std::vector<Scenario> chosen;
    if (o.labs.empty()) {
        if (all.empty()) throw UsageError("no scenario files in " + dir);
        chosen = all;
    } else {
        const size_t every_lab = all.size();  // "all": what a run without names runs (not load, not soak)
        for (const std::string& named_only : named_only_scenario_dirs(dir))
            for (auto& s : load_scenario_dir(named_only)) {
                if (std::any_of(all.begin(), all.end(), [&](const Scenario& a) { return a.id == s.id; }))
                    throw ScenarioError(s.file, "/id", "the id \"" + s.id + "\" is taken by another lab under " + dir);
                all.push_back(std::move(s));
            }
        std::set<std::string> seen;
        auto add = [&](const Scenario& s) {
            if (seen.insert(s.id).second) chosen.push_back(s);
        };
        for (const auto& arg : o.labs) {
            if (arg == "all") {
                if (every_lab == 0) throw UsageError("no scenario files in " + dir);
                for (size_t i = 0; i < every_lab; ++i) add(all[i]);
                continue;
            }
            if (std::filesystem::is_regular_file(arg)) {
                add(load_scenario(arg));
                continue;
            }
            // A name before a folder: the repository's examples/ folder holds programs, the group "examples" labs.
            bool found = false;
            for (const auto& s : all)
                if (s.id == arg || s.part == arg || s.output == arg || (!s.group.empty() && s.group == arg)) {
                    add(s);
                    found = true;
                }
            if (!found && std::filesystem::is_directory(arg)) {
                for (const auto& s : load_scenario_dir(arg)) add(s);
                continue;
            }
            if (!found) {
                std::set<std::string> parts;
                for (const auto& s : all) {
                    parts.insert(s.part);
                    if (!s.group.empty()) parts.insert(s.group);
                }
                throw UsageError(fmt::format("unknown lab '{}': not a file, a scenario id or a part ({}); `relab list` shows them",
                                             arg, fmt::join(parts, ", ")));
            }
        }
    }
    if (o.orders) {
        // A generated workload at another size (a CI-sized load run); the other labs list their orders.
        bool any = false;
        for (auto& s : chosen)
            if (s.source.contains("generate")) {
                s = with_generated_orders(s, *o.orders);
                any = true;
            }
        if (!any) throw UsageError("--orders resizes a generated workload (\"generate\"), and none of the chosen labs has one");
    }
    return chosen;
}

// Each lab replaced by its mutant called `name` ("all": by every mutant it has).
std::vector<Scenario> mutants_of(const std::vector<Scenario>& labs, const std::string& name) {
    std::vector<Scenario> out;
    for (const auto& s : labs) {
        bool found = false;
        for (const auto& m : s.mutants)
            if (name == "all" || m.name == name) {
                out.push_back(apply_mutant(s, m));
                found = true;
            }
        if (!found && name != "all") {
            std::vector<std::string> names;
            for (const auto& m : s.mutants) names.push_back(m.name);
            throw UsageError(fmt::format("lab {} has no mutant '{}'; its mutants: {}", s.id, name,
                                         names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "))));
        }
    }
    if (out.empty()) throw UsageError("none of the chosen labs has a mutant");
    return out;
}

namespace {

// This process's memory high-water mark (the parent: histories, reports).
double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

void setup_run(CLI::App& app, RunOptions& o) {
    app.add_option("labs", o.labs, "scenario ids, part names (baseline, s1, lock, cas, ...), groups (idem) or files; none or \"all\": every lab but load and soak");
    app.add_option("--scenarios", o.scenarios_dir, "folder of scenario files");
    app.add_option("--runs", o.runs, "trials per lab (overrides the files)")->check(CLI::Range(1, 100000));
    app.add_option("--orders", o.orders, "generated workloads (the load labs): this many orders instead of the file's")
        ->check(CLI::Range(1, 100000));
    app.add_option("--seed", o.seed, "root seed; every lab and trial seed derives from it");
    app.add_option("--json", o.json_path, "write the whole run as JSON to this file");
    app.add_option("--out-dir", o.out_dir, "write <output>.txt and <output>.json per lab output here (sim: <output>.sim.txt/.json)");
    app.add_option("--lang", o.lang, "text language: en or vi");
    app.add_option("--timelines", o.timelines, "which trials get a timeline: first (trial 1 + first wrong), wrong, all, none");
    app.add_option("--redis-url", o.redis_url, "use this Redis instead of starting one (or $REDIS_URL)");
    app.add_option("--pg-url", o.pg_url, "use this PostgreSQL instead of starting one (or $DATABASE_URL)");
    app.add_flag("--allow-server-faults", o.allow_server_faults,
                 "with --redis-url redis+sentinel://…: let the failover lab detach your replica and fail your "
                 "primary over to it (else it is skipped)");
    app.add_flag("--quiet", o.quiet, "no text report on stdout");
    app.add_option("--backend", o.backend, "real (throwaway redis-server and PostgreSQL) or sim (deterministic simulator)")
        ->check(CLI::IsMember({"real", "sim"}));
    app.add_option("--trials", o.trials, "sim: explore this many seeds (trials); real: as --runs")
        ->check(CLI::Range(1, 10'000'000));
    app.add_option("--replay", o.replay, "sim: run only the trial with this seed (as printed: 0x...) and show its timeline");
    app.add_flag("--self-check", o.self_check, "sim: run one seed twice per lab and compare history fingerprints");
    app.add_option("--mutant", o.mutant,
                   "run this mutant of each lab instead of the lab (\"all\": every mutant); its verdict should be broken");
    app.add_option("--jobs", o.jobs,
                   "run this many labs at once, each group by a relab child process with servers of its own (0 or "
                   "auto: one per core); the same verdicts as --jobs 1");
    app.add_option("--shard", o.shard,
                   "K/N: run only this runner's share of every lab's trials (every N-th, from the K-th); "
                   "relab merge combines the N shards' reports into the run one runner would have made");
}

namespace {

// `--backend sim --self-check`: per lab, one trial seed (--replay's, else trial 1's) run twice.
int run_self_check(const RunOptions& o, const std::vector<Scenario>& labs) {
    SimOptions so;
    so.self_check = false;
    SimBackend backend(so);
    int differing = 0;
    for (const auto& s : labs) {
        if (auto reason = sim_skip_reason(s)) {
            std::cout << fmt::format("self-check {}: skipped: {}\n", s.id, *reason);
            continue;
        }
        const uint64_t seed = o.replay ? parse_seed(*o.replay) : trial_seed(lab_seed(s, o.seed), 1);
        const auto [a, b] = backend.self_check(s, seed);
        if (a == b) {
            std::cout << fmt::format("self-check {} seed {}: history fingerprint {} twice → deterministic\n", s.id,
                                     seed_text(seed), seed_text(a));
        } else {
            ++differing;
            std::cout << fmt::format("self-check {} seed {}: history fingerprints {} and {} → NOT DETERMINISTIC\n",
                                     s.id, seed_text(seed), seed_text(a), seed_text(b));
        }
    }
    return differing == 0 ? 0 : 1;
}

}  // namespace

namespace {

// What every run does once its labs have run, in this process or in --jobs children: the text
// reports, --json and --out-dir, the load table, the summary lines and the exit status.
// The run split over child processes (run_jobs.h): the groups balanced by estimate, each child's
// labs given by their files, the reports merged back into the order of a --jobs 1 run.
void run_in_children(const RunOptions& o, const std::vector<Scenario>& base, const std::vector<Scenario>& labs,
                     const std::vector<std::vector<size_t>>& split, RunReport& report, bool progress) {
    std::vector<size_t> base_of;
    for (size_t i = 0; i < base.size(); ++i) {
        const size_t n = o.mutant.empty() ? 1 : o.mutant == "all" ? base[i].mutants.size() : 1;
        base_of.insert(base_of.end(), n, i);
    }
    if (base_of.size() != labs.size())
        throw HarnessError(fmt::format("--jobs: {} labs expected from {} chosen, {} selected", base_of.size(),
                                       base.size(), labs.size()));
    std::vector<JobGroup> groups;
    for (const auto& g : split) {
        JobGroup j;
        j.labs = g;
        for (size_t i : g) {
            j.files.push_back(base[i].file);
            if (base[i].source.contains("generate")) j.orders_apply = true;
        }
        groups.push_back(std::move(j));
    }
    std::vector<RunReport> parts = run_job_groups(o, self_executable(), groups, progress);
    report.servers = parts.front().servers;
    report.labs = merge_child_labs(labs, base_of, groups, std::move(parts));
}

}  // namespace

namespace {

// The options checked against each other, before any scenario is read.
struct RunPlan {
    int jobs = 1;
    RunShard shard;
    bool sim = false;
    std::optional<int> runs;  // --trials, else --runs
};

RunPlan plan_run(const RunOptions& o) {
    RunPlan p;
    try {
        p.jobs = parse_jobs(o.jobs);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    if (!o.shard.empty()) {
        const auto parsed = parse_run_shard(o.shard);
        if (!parsed) throw UsageError(fmt::format("--shard {}: expected K/N with 1 <= K <= N, e.g. --shard 2/4", o.shard));
        p.shard = *parsed;
    }
    p.sim = o.backend == "sim";
    const bool one_seed = o.replay || o.self_check;
    if (!p.shard.whole() && one_seed)
        throw UsageError("--shard splits a lab's trials; --replay and --self-check run one trial seed: leave --shard out");
    if (!p.sim && one_seed) throw UsageError("--replay and --self-check need --backend sim");
    if (o.replay) {
        try {
            parse_seed(*o.replay);
        } catch (const std::invalid_argument& e) {
            throw UsageError(std::string("--replay: ") + e.what());
        }
    }
    if (p.jobs > 1 && one_seed)
        throw UsageError("--replay and --self-check run one trial seed per lab in this process; leave --jobs out");
    p.runs = o.trials ? o.trials : o.runs;
    return p;
}

// "lab trial k/n (s)" on a terminal's stderr, redrawn in place; nothing when piped.
std::function<void(const std::string&, int, int)> progress_line(bool shown) {
    if (!shown) return {};
    const auto started = std::chrono::steady_clock::now();
    return [started](const std::string& lab, int k, int n) {
        std::cerr << fmt::format("\r\033[K{} trial {}/{} ({:.1f} s)", lab, k, n, seconds_since(started)) << std::flush;
    };
}

// Stamps a finished lab with when and in which place it finished: `relab report` keeps the newest
// result of a lab by them.
void add_finished(RunReport& report, LabResult lab) {
    lab.finished_at_us = unix_now_us();
    lab.sequence = static_cast<int>(report.labs.size()) + 1;
    report.labs.push_back(std::move(lab));
}

// No server is started: the simulator is the servers.
void run_on_sim(const RunOptions& o, const RunPlan& p, const std::vector<Scenario>& labs, RunReport& report,
                bool progress) {
    SimOptions so;
    so.seed = o.seed;
    so.trials = p.runs;
    so.shard = p.shard;
    if (o.replay) so.replay = parse_seed(*o.replay);
    so.progress = progress_line(progress);
    SimBackend backend(so);
    report.servers.redis_version = "simulated (Redis 7 semantics)";
    report.servers.pg_version = "simulated (PostgreSQL semantics)";
    for (const auto& s : labs) add_finished(report, backend.run(s));
}

void run_on_servers(const RunOptions& o, const RunPlan& p, const std::vector<Scenario>& labs, RunReport& report,
                    bool progress) {
    ServerSet servers = start_servers(env_or("REDIS_URL", o.redis_url), env_or("DATABASE_URL", o.pg_url));
    BackendOptions bo;
    bo.seed = o.seed;
    bo.runs = p.runs;
    bo.shard = p.shard;
    bo.relab_exe = self_executable();
    bo.run_id = new_run_id();
    bo.allow_server_faults = o.allow_server_faults;
    bo.progress = progress_line(progress);
    RealBackend backend(servers, bo);
    report.servers = backend.server_info();
    for (size_t i = 0; i < labs.size(); ++i) {
        // What the next labs start in the background (a cluster, a lab's own servers) starts now.
        if (i + 1 < labs.size()) backend.upcoming(labs[i + 1], std::span<const Scenario>(labs).subspan(i + 2));
        add_finished(report, backend.run(labs[i]));
    }
}

// The exit status of the exception being handled, its message on stderr.
int exit_status_of_current_exception() {
    try {
        throw;
    } catch (const Interrupted& e) {
        std::cerr << "\nrelab: " << e.what() << "; servers stopped and temp dirs removed\n";
        return 128 + e.signal_number();
    } catch (const ScenarioError& e) {
        std::cerr << "relab: bad scenario: " << e.what() << "\n";
    } catch (const HarnessError& e) {
        std::cerr << "relab: harness failure, no lab result reported: " << e.what() << "\n";
    } catch (const OutputError& e) {
        std::cerr << "relab: " << e.what() << "\n";
    } catch (const UsageError& e) {
        std::cerr << "relab: " << e.what() << "\n";
    } catch (const EnvironmentError& e) {
        std::cerr << "relab: " << e.what() << "\n";
    } catch (const std::exception& e) {
        std::cerr << "relab: run failed: " << e.what() << "\n";
    }
    return 2;
}

}  // namespace

int run_run(const RunOptions& o) {
    // Forked before any thread starts; clears what a SIGKILLed run leaves (see process/reaper.h).
    reaper::Guard reaper_guard;
    install_interrupt_handlers();
    const auto run_started = std::chrono::steady_clock::now();
    try {
        const TextOptions topts = text_options(o);
        const RunPlan plan = plan_run(o);
        // Every file validated before any server starts.
        const std::vector<Scenario> base = select_base_labs(o);
        const std::vector<Scenario> labs = o.mutant.empty() ? base : mutants_of(base, o.mutant);
        check_outputs_writable(o);
        if (plan.sim && o.self_check) return run_self_check(o, labs);
        const bool progress = isatty(STDERR_FILENO);
        RunReport report;
        report.relab_commit = RELAB_COMMIT;
        report.seed = o.seed.value_or(0);
        report.shard = plan.shard;
        report.started_at_us = unix_now_us();
        report.started_at = utc_iso(report.started_at_us);
        std::vector<std::vector<size_t>> split;
        if (plan.jobs > 1) {
            std::vector<int64_t> estimates;
            for (const auto& s : base) estimates.push_back(estimated_lab_us(s, plan.runs));
            split = split_labs(estimates, plan.jobs);
        }
        report.jobs = split.size() > 1 ? static_cast<int>(split.size()) : 1;
        if (split.size() > 1)
            run_in_children(o, base, labs, split, report, progress);
        else if (plan.sim)
            run_on_sim(o, plan, labs, report, progress);
        else
            run_on_servers(o, plan, labs, report, progress);
        if (progress && split.size() <= 1) std::cerr << "\r\033[K" << std::flush;
        report.wall_s = seconds_since(run_started);
        report.inherent_s = static_cast<double>(run_inherent_us(report.labs)) / 1e6;
        return report_run(o, topts, report, plan.sim);
    } catch (...) {
        return exit_status_of_current_exception();
    }
}

}  // namespace relab
