// `relab merge INPUT... --out-dir DIR`: the reports of a run's N shards (`relab run --shard K/N`, one
// folder or --json file each) combined into the report one runner would have written, its verdicts
// and exit status those of the whole run.
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/run_outputs.h"
#include "report/compare/report_dir.h"
#include "report/compare/shard_merge.h"

namespace relab {

void setup_merge(CLI::App& app, MergeOptions& o) {
    app.add_option("inputs", o.inputs, "each shard's --out-dir folder or --json file")->required();
    app.add_option("--out-dir", o.out_dir, "write the merged <output>.txt and <output>.json here (sim: .sim.*)");
    app.add_option("--json", o.json_path, "write the merged run as one JSON file");
    app.add_option("--lang", o.lang, "text language: en or vi");
    app.add_option("--timelines", o.timelines, "which trials get a timeline: first, wrong, all, none");
    app.add_flag("--quiet", o.quiet, "no text report on stdout");
}

namespace {

RunReport read_shard(const std::string& input) {
    namespace fs = std::filesystem;
    if (fs::is_directory(input)) return read_report_dir(input).run;
    if (fs::is_regular_file(input)) return read_report_files({input}).run;
    throw UsageError(fmt::format("{}: no such folder or file; give each shard's --out-dir or --json", input));
}

}  // namespace

int run_merge(const MergeOptions& o) {
    try {
        RunOptions ro;
        ro.out_dir = o.out_dir;
        ro.json_path = o.json_path;
        ro.lang = o.lang;
        ro.timelines = o.timelines;
        ro.quiet = o.quiet;
        const TextOptions topts = text_options(ro);
        check_outputs_writable(ro);
        std::vector<RunReport> shards;
        for (const auto& input : o.inputs) shards.push_back(read_shard(input));
        RunReport merged = merge_shards(std::move(shards));
        const bool sim = !merged.labs.empty() && merged.labs.front().backend == "sim";
        std::cerr << fmt::format("relab merge: {} shard(s), {} lab(s)\n", o.inputs.size(), merged.labs.size());
        return report_run(ro, topts, merged, sim);
    } catch (const std::exception& e) {
        std::cerr << "relab merge: " << e.what() << "\n";
        return 2;
    }
}

}  // namespace relab
