#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "scenario/scenario.h"

namespace relab {

void setup_list(CLI::App& app, ListOptions& o) {
    app.add_option("--scenarios", o.scenarios_dir, "folder of scenario files");
}

int run_list(const ListOptions& o) {
    try {
        const std::string dir = o.scenarios_dir.empty() ? default_scenarios_dir() : o.scenarios_dir;
        auto all = load_scenario_dir(dir);
        // The load and soak labs (a run of every lab leaves them out, `relab run load` / `soak` runs
        // them) are listed too.
        for (const std::string& named_only : named_only_scenario_dirs(dir))
            for (auto& s : load_scenario_dir(named_only)) all.push_back(std::move(s));
        for (const auto& s : all) {
            std::cout << fmt::format("{:<20} part={:<10} {}\n", s.id, s.part, s.title);
            std::string doc = s.documented.text;
            if (s.documented.wrong && s.documented.of)
                doc = fmt::format("{}/{} — {}", *s.documented.wrong, *s.documented.of, doc);
            std::cout << fmt::format("{:<20} documented: {}\n", "", doc);
            for (const auto& m : s.mutants)
                std::cout << fmt::format("{:<20} mutant {}: {}\n", "", m.name, m.change);
        }
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "relab list: " << e.what() << "\n";
        return 2;
    }
}

}  // namespace relab
