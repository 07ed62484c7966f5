#include "cli/cli_main.h"

#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/argv_secrets.h"
#include "cli/commands.h"

namespace relab {

int cli_main(int argc, char** argv) {
    // The arguments as given, for CLI11; then the passwords in URLs are hidden from ps and
    // /proc/<pid>/cmdline (and from the argv every fork inherits), before anything is started.
    std::vector<std::string> args(argv, argv + argc);
    hide_url_passwords(argc, argv);
    std::vector<char*> own;
    for (auto& a : args) own.push_back(a.data());
    own.push_back(nullptr);
    argv = own.data();
    CLI::App app{"relab: replay ordering and idempotency labs on real Redis and PostgreSQL"};
    app.require_subcommand(1);
    ListOptions list_opts;
    RunOptions run_opts;
    RoleOptions role_opts;
    auto* list = app.add_subcommand("list", "show every scenario with its title and documented result");
    setup_list(*list, list_opts);
    auto* run = app.add_subcommand("run", "run labs by id, part name or file");
    setup_run(*run, run_opts);
    auto* role = app.add_subcommand("role", "internal: one actor of a trial, spawned by `relab run`");
    setup_role(*role, role_opts);
    ReportOptions report_opts;
    auto* report = app.add_subcommand("report", "render index.html, summary.md and junit.xml from saved JSON reports");
    setup_report(*report, report_opts);
    DiffOptions diff_opts;
    auto* diff = app.add_subcommand("diff", "the labs whose outcome changed between two runs: relab diff reports/reference reports/out");
    setup_diff(*diff, diff_opts);
    BenchOptions bench_opts;
    auto* bench = app.add_subcommand("bench", "measure relab against redis-benchmark and the simulator's trials/s: relab bench [all|sim|redis]");
    setup_bench(*bench, bench_opts);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? 0 : 2;
    }
    if (*list) return run_list(list_opts);
    if (*run) return run_run(run_opts);
    if (*role) return run_role(role_opts);
    if (*report) return run_report(report_opts);
    if (*diff) return run_diff(diff_opts);
    if (*bench) return run_bench(bench_opts);
    return 2;
}

}  // namespace relab
