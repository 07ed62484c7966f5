// `relab schema`: the scenario files' JSON Schema (scenarios/schema.json) with every described
// struct's part generated from its description (scenario/schema_defs.h), and the scenario file
// reference (docs/scenarios.md) rendered from it.
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "report/schema_doc.h"
#include "scenario/scenario.h"
#include "scenario/schema_defs.h"

namespace relab {

void setup_schema(CLI::App& app, SchemaOptions& o) {
    app.add_option("--scenarios", o.scenarios_dir, "folder of scenario files whose schema.json is documented");
    app.add_option("--format", o.format, "json: scenarios/schema.json; markdown: docs/scenarios.md")
        ->check(CLI::IsMember({"json", "markdown"}));
    // A shell redirect would empty schema.json before relab reads its hand-written part.
    app.add_flag("--write", o.write, "with --format json: rewrite scenarios/schema.json in place");
}

std::string scenario_schema_json(const std::string& scenarios_dir) {
    const std::string path = scenarios_dir + "/" + k_schema_file;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path + ": give --scenarios DIR, the folder with schema.json");
    std::ostringstream text;
    text << in.rdbuf();
    return schema_with_descriptions(text.str());
}

std::string schema_reference_markdown(const std::string& scenarios_dir) {
    return schema_markdown(scenario_schema_json(scenarios_dir), "relab schema --format markdown > docs/scenarios.md");
}

int run_schema(const SchemaOptions& o) {
    try {
        const std::string dir = o.scenarios_dir.empty() ? default_scenarios_dir() : o.scenarios_dir;
        if (o.write && o.format != "json") throw std::runtime_error("--write needs --format json");
        if (!o.write) {
            std::cout << (o.format == "json" ? scenario_schema_json(dir) : schema_reference_markdown(dir));
            return 0;
        }
        const std::string text = scenario_schema_json(dir);
        std::ofstream out(dir + "/" + k_schema_file, std::ios::binary | std::ios::trunc);
        out << text;
        if (!out) throw std::runtime_error("cannot write " + dir + "/" + k_schema_file);
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "relab schema: " << e.what() << "\n";
        return 2;
    }
}

}  // namespace relab
