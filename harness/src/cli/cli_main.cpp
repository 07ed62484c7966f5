#include "cli/cli_main.h"

#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/argv_secrets.h"
#include "cli/cli_spec.h"
#include "cli/commands.h"

namespace relab {

namespace {

// Every subcommand's options, filled by parsing.
struct AllOptions {
    ListOptions list;
    SchemaOptions schema;
    RunOptions run;
    RoleOptions role;
    ReportOptions report;
    MergeOptions merge;
    DiffOptions diff;
    BenchOptions bench;
};

// The whole command line: what `relab` parses and what cli_spec() describes.
void build_app(CLI::App& app, AllOptions& o) {
    app.require_subcommand(1);
    setup_list(*app.add_subcommand("list", "show every scenario with its title and documented result "
                                           "(--format markdown: the lab catalogue, docs/labs.md)"),
               o.list);
    setup_run(*app.add_subcommand("run", "run labs by id, part name or file"), o.run);
    setup_role(*app.add_subcommand("role", "internal: one actor of a trial, spawned by `relab run`"), o.role);
    setup_report(*app.add_subcommand("report", "render index.html, summary.md and junit.xml from saved JSON reports"),
                 o.report);
    setup_merge(*app.add_subcommand("merge", "combine the reports of a run's shards (relab run --shard K/N) into "
                                             "the run one runner would have made: relab merge DIR... --out-dir OUT"),
                o.merge);
    setup_diff(*app.add_subcommand("diff", "the labs whose outcome changed between two runs: relab diff "
                                           "reports/reference reports/out"),
               o.diff);
    setup_bench(*app.add_subcommand("bench", "measure relab against redis-benchmark and the simulator's trials/s: "
                                             "relab bench [all|sim|redis]"),
                o.bench);
    setup_schema(*app.add_subcommand("schema", "the scenario file reference from scenarios/schema.json "
                                               "(--format markdown: docs/scenarios.md)"),
                 o.schema);
}

CliCommandSpec command_spec(const CLI::App& app) {
    CliCommandSpec c;
    c.name = app.get_name();
    for (const CLI::Option* opt : app.get_options()) {
        if (opt->get_positional()) {
            c.positionals.push_back(opt->get_name());
            continue;
        }
        CliOptionSpec o;
        for (const auto& s : opt->get_snames()) o.names.push_back("-" + s);
        for (const auto& l : opt->get_lnames()) o.names.push_back("--" + l);
        o.takes_value = opt->get_items_expected_max() != 0;
        c.options.push_back(std::move(o));
    }
    return c;
}

}  // namespace

const CliOptionSpec* CliCommandSpec::option(const std::string& name) const {
    for (const auto& o : options)
        for (const auto& n : o.names)
            if (n == name) return &o;
    return nullptr;
}

std::vector<CliCommandSpec> cli_spec() {
    CLI::App app{"relab"};
    AllOptions o;
    build_app(app, o);
    std::vector<CliCommandSpec> out{command_spec(app)};
    const CLI::App& defined = app;
    for (const CLI::App* sub : defined.get_subcommands(std::function<bool(const CLI::App*)>{}))
        out.push_back(command_spec(*sub));
    return out;
}

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
    AllOptions o;
    build_app(app, o);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? 0 : 2;
    }
    if (app.got_subcommand("list")) return run_list(o.list);
    if (app.got_subcommand("run")) return run_run(o.run);
    if (app.got_subcommand("role")) return run_role(o.role);
    if (app.got_subcommand("report")) return run_report(o.report);
    if (app.got_subcommand("merge")) return run_merge(o.merge);
    if (app.got_subcommand("diff")) return run_diff(o.diff);
    if (app.got_subcommand("bench")) return run_bench(o.bench);
    if (app.got_subcommand("schema")) return run_schema(o.schema);
    return 2;
}

}  // namespace relab
