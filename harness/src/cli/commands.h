// One function pair per subcommand: setup_x adds it to the app, run_x does the work and returns
// the exit status (0 ok, 1 an expectation broke, 2 usage or environment error).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/bench_options.h"

// CLI11 costs every file that includes it seconds of compile time; only the files that build the
// command line (cmd_*.cpp, main.cpp) include <CLI/CLI.hpp>, not the tests that include this.
namespace CLI {
class App;
}  // namespace CLI

namespace relab {

struct ListOptions {
    std::string scenarios_dir;
    std::string format = "text";  // text | markdown (the lab catalogue, docs/labs.md)
    std::string reference;        // the reference run (markdown); empty: default_reference_dir()
};
void setup_list(CLI::App& app, ListOptions& o);
int run_list(const ListOptions& o);
// The lab catalogue (`relab list --format markdown`, docs/labs.md): every lab under `scenarios_dir`,
// its load and soak folders included, with the measured figures of the reference run at `reference`
// (a digest file or a folder of them or of run reports). Throws ScenarioError or std::runtime_error.
std::string labs_markdown(const std::string& scenarios_dir, const std::string& reference);
// Where the reference run lives beside a scenarios folder: <scenarios>/../reports/reference.
std::string default_reference_dir(const std::string& scenarios_dir);

struct SchemaOptions {
    std::string scenarios_dir;
    std::string format = "markdown";
    bool write = false;  // json only: rewrite <scenarios_dir>/schema.json in place
};
void setup_schema(CLI::App& app, SchemaOptions& o);
int run_schema(const SchemaOptions& o);
// The scenario file reference (`relab schema --format markdown`, docs/scenarios.md) from
// <scenarios_dir>/schema.json. Throws std::runtime_error for a schema it cannot read or document.
std::string schema_reference_markdown(const std::string& scenarios_dir);
// scenarios/schema.json as the descriptions give it (`relab schema --format json --write`).
std::string scenario_schema_json(const std::string& scenarios_dir);

struct RunOptions {
    std::vector<std::string> labs;  // ids, parts or files; empty = all
    std::string scenarios_dir;
    std::optional<int> runs;
    std::optional<int> orders;  // generated workloads: this many orders instead of the file's
    std::optional<uint64_t> seed;
    std::string json_path;
    std::string out_dir;  // writes <output>.txt and <output>.json per output group
    std::string lang = "en";
    std::string timelines = "first";  // first | wrong | all | none (first = trial 1 + first wrong)
    std::string redis_url;
    std::string pg_url;
    bool quiet = false;
    std::string backend = "real";       // real | sim
    std::optional<int> trials;          // sim: seeds to explore; real: as runs
    std::optional<std::string> replay;  // sim: run only this trial seed (0x... or decimal)
    bool self_check = false;            // sim: run a seed twice and compare history fingerprints
    std::string mutant;                 // run this mutant of each lab instead ("all": every mutant)
    std::string jobs = "1";             // labs run at once, each group by a child relab; 0 / auto: per core
    std::string shard;                  // "K/N": this runner's share of every lab's trials; empty: all
    bool allow_server_faults = false;   // the failover lab may fault the servers behind a redis+sentinel URL
};
void setup_run(CLI::App& app, RunOptions& o);
int run_run(const RunOptions& o);

struct RoleOptions {
    std::string config_path;
    bool spawner = false;  // serve spawn requests on stdin (process/role_spawner.h)
};
void setup_role(CLI::App& app, RoleOptions& o);
int run_role(const RoleOptions& o);

struct ReportOptions {
    std::string dir = "reports/out";  // reads its *.json run reports, writes index.html, summary.md, junit.xml
};
void setup_report(CLI::App& app, ReportOptions& o);
int run_report(const ReportOptions& o);

struct MergeOptions {
    std::vector<std::string> inputs;  // each shard's --out-dir folder or --json file
    std::string out_dir;
    std::string json_path;
    std::string lang = "en";
    std::string timelines = "first";
    bool quiet = false;
};
void setup_merge(CLI::App& app, MergeOptions& o);
int run_merge(const MergeOptions& o);

struct DiffOptions {
    std::vector<std::string> paths;  // OLD NEW; with save_reference: IN
    std::string save_reference;      // OUT_DIR: write IN's digest to OUT_DIR/reference.json
    bool strict = false;             // a lab missing from NEW is a regression
    bool json = false;
};
void setup_diff(CLI::App& app, DiffOptions& o);
int run_diff(const DiffOptions& o);

void setup_bench(CLI::App& app, BenchOptions& o);
int run_bench(const BenchOptions& o);

struct Scenario;
// The labs `relab run` picks for o.labs and o.scenarios_dir (files, scenario ids or part names;
// none = all), every file validated. Throws std::runtime_error for an unknown lab.
std::vector<Scenario> select_labs(const RunOptions& o);
// select_labs before --mutant: the labs whose mutants (if any) run.
std::vector<Scenario> select_base_labs(const RunOptions& o);
// Each lab replaced by its mutant called `name` ("all": every mutant it has). Throws for a lab
// without such a mutant.
std::vector<Scenario> mutants_of(const std::vector<Scenario>& labs, const std::string& name);

// The scenarios folder: --scenarios, else $RELAB_SCENARIOS, else ./scenarios, else the source tree's.
std::string default_scenarios_dir();
// The folders under `dir` whose labs run only when named (a run of every lab leaves them out, they
// take minutes): <dir>/load (the load labs) and <dir>/soak (the soak labs), those that exist.
std::vector<std::string> named_only_scenario_dirs(const std::string& dir);

}  // namespace relab
