// `relab bench [all|sim|redis] [LAB...]`: relab's speed against reference tools, in one run.
//   sim    simulated trials/s of the labs (default 08a-baseline and 08c-s4a) on 1 thread and on
//          --jobs threads (default every core), through the same SimBackend::run as
//          `relab run --backend sim` (checker included, reporters excluded).
//   redis  relab's client against redis-benchmark on a throwaway redis-server: round trips
//          (XADD, XREADGROUP, SET NX GET), PING and XADD → blocked consumer receipt p50/p99, and
//          the producer's XADD rate.
//   all    (the default) both.
// Every run also times the machine itself (bench/measure/bench_machine.h): figures without a target, for
// telling two bench files from different machines apart.
// The figures print as a table, and go to --json FILE / --out-dir DIR in google/benchmark's shape.
// --compare OLD.json prints old against new for every name in both (new = this run, or
// --against NEW.json without measuring). Exit 0, or 1 with --fail-on-miss when a figure misses its
// target, 2 for a usage or environment error, 130 when interrupted.
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/bench_compare.h"
#include "bench/bench_json.h"
#include "bench/bench_text.h"
#include "backend_real/real_backend.h"
#include "bench/measure/bench_parts.h"
#include "cli/commands.h"
#include "engine/seeds.h"
#include "process/child_process.h"
#include "servers/servers.h"
#include "ports/ports.h"  // HarnessError
#include "util/interrupt.h"
#include "process/reaper.h"
#include "util/environment_error.h"
#include "relab_commit.h"

namespace relab {

namespace {

// A file the bench cannot read or write: exit 2, with the file named.
class BenchFileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

std::vector<BenchFigure> read_bench_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw BenchFileError(fmt::format("cannot read {}: check the path", path));
    std::stringstream text;
    text << in.rdbuf();
    try {
        return figures_from_json(nlohmann::json::parse(text.str()));
    } catch (const std::exception& e) {
        throw BenchFileError(fmt::format("{} is not a `relab bench --json` file: {}", path, e.what()));
    }
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::trunc);
    out << text;
    out.flush();
    if (!out)
        throw BenchFileError(fmt::format("could not write {} (a missing folder, a read-only place or a full disk?)", path));
}

// "2026-05-02T14:03:11+02:00", as google/benchmark writes its date.
std::string iso_date_now() {
    const std::time_t t = std::time(nullptr);
    std::tm local{};
    localtime_r(&t, &local);
    char buf[64];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", &local);
    std::string s = buf;
    if (s.size() >= 5) s.insert(s.size() - 2, ":");  // +0200 → +02:00
    return s;
}

std::string host_name() {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0) return "";
    return buf;
}

int all_cores() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

// The command that reproduces this run, for the JSON's context.
std::string command_line(const BenchOptions& o, int jobs) {
    std::string s = "relab bench " + o.backend;
    for (const auto& l : o.labs) s += " " + l;
    if (o.backend == "scale") return s + fmt::format(" --orders {}", o.scale_orders);
    if (o.backend != "redis") s += fmt::format(" --trials {} --jobs {}", o.trials, jobs);
    if (o.backend != "sim")
        s += fmt::format(" --requests {} --samples {} --repetitions {} --pipeline {}", o.requests, o.samples,
                         o.repetitions, o.pipeline);
    return s;
}

// The labs `relab run` would pick for these names in the bench's scenarios folder.
LabPicker lab_picker(const BenchOptions& o) {
    return [dir = o.scenarios_dir](const std::vector<std::string>& labs) {
        RunOptions ro;
        ro.scenarios_dir = dir;
        ro.labs = labs;
        return select_labs(ro);
    };
}

// `relab bench scale`: load-s2 and load-s3 varied, on a real backend over servers of its own.
std::vector<BenchFigure> measure_scale(const BenchOptions& o) {
    const std::vector<Scenario> templates = lab_picker(o)({"load-s2", "load-s3"});
    ServerSet servers = start_servers("", "");
    BackendOptions bo;
    bo.relab_exe = self_executable();
    bo.run_id = new_run_id();
    RealBackend backend(servers, bo);
    return measure_scale_part(templates, o, [&backend](const Scenario& lab) { return backend.run(lab); });
}

}  // namespace

void setup_bench(CLI::App& app, BenchOptions& o) {
    app.add_option("backend", o.backend, "what to measure: all (default: sim and redis), sim, redis, or scale (S2 and S3 at 1, 2, 4 consumers)")
        ->check(CLI::IsMember({"all", "sim", "redis", "scale"}));
    app.add_option("labs", o.labs, "sim: scenario ids, part names or files; none = 08a-baseline and 08c-s4a");
    app.add_option("--scenarios", o.scenarios_dir, "folder of scenario files");
    app.add_option("--trials", o.trials, "sim: trials per lab")->check(CLI::Range(1, 10'000'000));
    app.add_option("--jobs", o.jobs, "sim: threads for the many-thread figure (default: every core)")
        ->check(CLI::Range(1, 1024));
    app.add_option("--requests", o.requests, "redis: round trips per command and per tool")
        ->check(CLI::Range(10, 10'000'000));
    app.add_option("--samples", o.samples, "redis: XADD → blocked consumer receipts")->check(CLI::Range(10, 1'000'000));
    app.add_option("--repetitions", o.repetitions, "redis: alternating relab / redis-benchmark runs (median kept)")
        ->check(CLI::Range(1, 100));
    app.add_option("--pipeline", o.pipeline, "redis: XADDs per write in the load figure")->check(CLI::Range(1, 10000));
    app.add_option("--orders", o.scale_orders, "scale: orders per run (3 events each)")->check(CLI::Range(10, 1'000'000));
    app.add_option("--json", o.json_path, "write the figures as google/benchmark-style JSON");
    app.add_option("--out-dir", o.out_dir, "write bench.json and bench.txt in this folder");
    app.add_option("--compare", o.compare_path, "an older --json file: print old against new for each figure");
    app.add_option("--against", o.against_path, "with --compare: the newer file; nothing is measured");
    app.add_flag("--fail-on-miss", o.fail_on_miss, "exit 1 when a figure misses its target");
}

int run_bench(const BenchOptions& o) {
    reaper::Guard reaper_guard;  // before any thread: see process/reaper.h
    install_interrupt_handlers();
    try {
        if (!o.against_path.empty() && o.compare_path.empty())
            throw BenchFileError("--against NEW.json needs --compare OLD.json");
        if (!o.compare_path.empty() && !o.against_path.empty()) {
            std::cout << compare_table(compare_benchmarks(read_bench_file(o.compare_path), read_bench_file(o.against_path)));
            return 0;
        }
        // Read before measuring, so a bad file costs no measuring time.
        const std::vector<BenchFigure> old_figures =
            o.compare_path.empty() ? std::vector<BenchFigure>{} : read_bench_file(o.compare_path);
        if (!o.out_dir.empty()) std::filesystem::create_directories(o.out_dir);

        const int jobs = o.jobs.value_or(all_cores());
        BenchContext context;
        context.date = iso_date_now();
        context.host_name = host_name();
        context.num_cpus = all_cores();
        context.jobs = jobs;
        context.relab_commit = RELAB_COMMIT;
        context.command = command_line(o, jobs);

        std::vector<BenchFigure> figures;
        const bool scale = o.backend == "scale";
        const bool sim = !scale && o.backend != "redis", redis = !scale && o.backend != "sim";
        if (redis) check_redis_tools();  // a missing tool fails before the simulator's minutes
        if (redis) figures = measure_redis_part(o, context, lab_picker(o));
        for (auto& f : measure_machine_part()) figures.push_back(std::move(f));
        if (sim)
            for (auto& f : measure_sim_part(o, jobs, lab_picker(o))) figures.push_back(std::move(f));
        if (scale)
            for (auto& f : measure_scale(o)) figures.push_back(std::move(f));

        const std::string table = bench_table(figures);
        std::cout << "\n" << table;
        const std::string json = bench_json(context, figures).dump(2) + "\n";
        if (!o.json_path.empty()) write_file(o.json_path, json);
        if (!o.out_dir.empty()) {
            write_file(o.out_dir + "/bench.json", json);
            write_file(o.out_dir + "/bench.txt", table);
        }
        int missed = 0;
        for (const auto& f : figures)
            if (f.met() == false) ++missed;
        if (missed)
            std::cout << fmt::format("\n{} figure{} missed {} target.\n", missed, missed == 1 ? "" : "s",
                                     missed == 1 ? "its" : "their");
        if (!o.compare_path.empty())
            std::cout << "\nAgainst " << o.compare_path << ":\n" << compare_table(compare_benchmarks(old_figures, figures));
        return o.fail_on_miss && missed ? 1 : 0;
    } catch (const Interrupted& e) {
        std::cerr << "\nrelab bench: " << e.what() << "; servers stopped and temp dirs removed\n";
        return 128 + e.signal_number();
    } catch (const EnvironmentError& e) {
        std::cerr << "relab bench: " << e.what() << "\n";
        return 2;
    } catch (const HarnessError& e) {
        std::cerr << "relab bench: harness failure, no figures reported: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "relab bench: " << e.what() << "\n";
        return 2;
    }
}

}  // namespace relab
