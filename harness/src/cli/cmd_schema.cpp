// `relab schema --format markdown`: the scenario file reference (docs/scenarios.md) from the
// scenarios folder's schema.json, the one source of what each field means.
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "report/schema_doc.h"
#include "scenario/scenario.h"

namespace relab {

void setup_schema(CLI::App& app, SchemaOptions& o) {
    app.add_option("--scenarios", o.scenarios_dir, "folder of scenario files whose schema.json is documented");
    app.add_option("--format", o.format, "markdown (the only format): docs/scenarios.md")
        ->check(CLI::IsMember({"markdown"}));
}

std::string schema_reference_markdown(const std::string& scenarios_dir) {
    const std::string path = scenarios_dir + "/" + k_schema_file;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path + ": give --scenarios DIR, the folder with schema.json");
    std::ostringstream text;
    text << in.rdbuf();
    return schema_markdown(text.str(), "relab schema --format markdown > docs/scenarios.md");
}

int run_schema(const SchemaOptions& o) {
    try {
        std::cout << schema_reference_markdown(o.scenarios_dir.empty() ? default_scenarios_dir() : o.scenarios_dir);
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "relab schema: " << e.what() << "\n";
        return 2;
    }
}

}  // namespace relab
