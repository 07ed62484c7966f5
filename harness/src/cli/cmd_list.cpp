#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "report/article_words.h"
#include "report/compare/lab_catalogue.h"
#include "report/compare/lab_diff.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"

namespace relab {

void setup_list(CLI::App& app, ListOptions& o) {
    app.add_option("--scenarios", o.scenarios_dir, "folder of scenario files");
    app.add_option("--format", o.format, "text (the default) or markdown: the lab catalogue, docs/labs.md")
        ->check(CLI::IsMember({"text", "markdown"}));
    app.add_option("--reference", o.reference,
                   "markdown: the reference run's measured figures (a digest file or folder; default: "
                   "reports/reference beside the scenarios folder)");
}

namespace {

// The labs `relab list` shows: the folder's, then the load and soak labs (a run of every lab
// leaves those out; `relab run load` / `soak` runs them).
std::vector<CatalogueFolder> catalogue_folders(const std::string& dir) {
    std::vector<CatalogueFolder> out;
    out.push_back({"scenarios/", "`relab run all`, `relab run` with no lab named, or `./run_labs.sh`", load_scenario_dir(dir)});
    for (const std::string& named_only : named_only_scenario_dirs(dir)) {
        const std::string name = std::filesystem::path(named_only).filename().string();
        out.push_back({"scenarios/" + name + "/", fmt::format("`relab run {0}` or `./run_labs.sh {0}`", name),
                       load_scenario_dir(named_only)});
    }
    return out;
}

void print_text(const std::vector<CatalogueFolder>& folders) {
    for (const auto& f : folders)
        for (const auto& s : f.labs) {
            std::cout << fmt::format("{:<20} part={:<10} {}\n", s.id, s.part, s.title);
            // The count and relab's summary, then the article's own words apart, with their section.
            std::string doc = s.documented.text.empty() ? "" : "relab's summary: " + s.documented.text;
            if (s.documented.wrong && s.documented.of)
                doc = fmt::format("{}/{}{}{}", *s.documented.wrong, *s.documented.of, doc.empty() ? "" : " — ", doc);
            std::cout << fmt::format("{:<20} documented: {}\n", "", doc);
            if (!s.documented.quote_vi.empty())
                std::cout << fmt::format("{:<20} the article ({}): {}\n", "", s.documented.section, quoted(s.documented.quote_vi));
            for (const auto& m : s.mutants) std::cout << fmt::format("{:<20} mutant {}: {}\n", "", m.name, m.change);
        }
}

}  // namespace

std::string default_reference_dir(const std::string& scenarios_dir) {
    std::filesystem::path dir = std::filesystem::path(scenarios_dir).lexically_normal();
    if (dir.filename().empty()) dir = dir.parent_path();  // "scenarios/"
    return (dir.parent_path() / "reports" / "reference").string();
}

std::string labs_markdown(const std::string& scenarios_dir, const std::string& reference) {
    CatalogueInput in;
    in.folders = catalogue_folders(scenarios_dir);
    if (!std::filesystem::exists(reference))
        throw std::runtime_error(fmt::format("no reference run at {}: give --reference DIR_OR_FILE (relab diff "
                                             "--save-reference writes one)",
                                             reference));
    std::vector<std::string> notes;
    in.reference = read_digest(reference, notes);
    in.reference_label = "reports/reference/";
    if (std::filesystem::is_regular_file(reference)) {
        in.reference_label += std::filesystem::path(reference).filename().string();
    } else {
        // The labs a run of every lab leaves out have references of their own, one folder each
        // (reports/reference/load from ./run_labs.sh load), so that `relab diff` of a full run
        // does not list them as missing.
        std::vector<std::string> extra;
        for (const char* name : {"load", "soak", "examples"}) {
            const std::filesystem::path sub = std::filesystem::path(reference) / name;
            if (!std::filesystem::is_directory(sub)) continue;
            for (LabDigest& l : read_digest(sub.string(), notes).labs) in.reference.labs.push_back(std::move(l));
            extra.push_back(std::string(name) + "/");
        }
        if (!extra.empty()) in.reference_label += fmt::format(" with {}", fmt::join(extra, ", "));
    }
    in.regenerate = "relab list --format markdown > docs/labs.md";
    return lab_catalogue_markdown(in);
}

int run_list(const ListOptions& o) {
    try {
        const std::string dir = o.scenarios_dir.empty() ? default_scenarios_dir() : o.scenarios_dir;
        if (o.format == "markdown") {
            std::cout << labs_markdown(dir, o.reference.empty() ? default_reference_dir(dir) : o.reference);
            return 0;
        }
        print_text(catalogue_folders(dir));
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "relab list: " << e.what() << "\n";
        return 2;
    }
}

}  // namespace relab
