// The layer lint (ctest layer_lint, label lint): every #include "..." of a file of harness/src
// that names another file of harness/src keeps to the layer table of docs/internals.md ("The
// layers"): a folder includes its own files and those of the folders its row builds on, and of
// the folders those build on, never one above it, and no two folders include each other. The
// table's libraries, purity and coldness are checked against CMakeLists.txt's relab_layer calls,
// and each library must link the libraries of the folders its folders build on.
//
// The table is written once, in docs/internals.md, and this test parses it from there: the rule a
// contributor reads is then the rule the test enforces, and moving a folder between layers is one
// edit of one table (CMakeLists.txt follows it, and is checked against it here), with no second
// copy to keep in step. Layers.* show each check failing on fixtures; RepoLayers.* check the
// repository.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace relab {
namespace layer_lint_test {

namespace fs = std::filesystem;

// One row of the table: a folder of harness/src ("report/text" for harness/src/report/text/).
struct Layer {
    std::string folder;
    std::vector<std::string> builds_on;  // the folders the row names
    std::string library;                 // the CMake target compiling it
    bool pure = false;
    bool cold = false;
};

// A file of harness/src: its path below harness/src and its text.
struct Source {
    std::string path;
    std::string text;
};

// An include that runs against the table and is known to: `file` includes `included`.
struct KnownInclude {
    std::string file;
    std::string included;
};

// The includes against the table that are known to (none left: every folder keeps to it). Only
// scenario/ and report/ may have entries; an entry whose include is gone, or no longer runs against
// the table, fails the test, so the list cannot go stale.
const std::vector<KnownInclude> k_known_includes = {};

const char* const k_rule = "docs/internals.md, \"The layers\"";

std::string folder_of(const std::string& path) { return fs::path(path).parent_path().string(); }

std::string trim(const std::string& s) {
    const size_t from = s.find_first_not_of(" \t");
    if (from == std::string::npos) return "";
    return s.substr(from, s.find_last_not_of(" \t") - from + 1);
}

std::string joined(const std::vector<std::string>& items, const std::string& suffix = "/") {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ", ") + i + suffix;
    return out.empty() ? "nothing" : out;
}

// "| a | `b/` |" → {"a", "`b/`"}.
std::vector<std::string> cells_of(const std::string& line) {
    std::vector<std::string> out;
    std::istringstream in(line.substr(line.find('|') + 1));
    for (std::string cell; std::getline(in, cell, '|');) out.push_back(trim(cell));
    if (!out.empty() && out.back().empty()) out.pop_back();
    return out;
}

// The backticked words of a cell: "`roles/`, `check/`" → {"roles/", "check/"}.
std::vector<std::string> backticked(const std::string& cell) {
    static const std::regex word{"`([^`]+)`"};
    std::vector<std::string> out;
    for (std::sregex_iterator it(cell.begin(), cell.end(), word), end; it != end; ++it) out.push_back((*it)[1].str());
    return out;
}

std::string without_slash(std::string folder) {
    if (!folder.empty() && folder.back() == '/') folder.pop_back();
    return folder;
}

// A table row as a Layer; a problem when a cell is not of its column's form.
Layer layer_of(const std::vector<std::string>& cells, std::vector<std::string>& problems) {
    Layer l;
    const std::vector<std::string> folder = backticked(cells[0]), library = backticked(cells[2]);
    if (folder.size() != 1 || folder[0].back() != '/' || library.size() != 1) {
        problems.push_back(fmt::format("{}: the row of '{}' needs one `folder/` and one `library`", k_rule, cells[0]));
        return l;
    }
    l.folder = without_slash(folder[0]);
    for (const auto& b : backticked(cells[1])) l.builds_on.push_back(without_slash(b));
    l.library = library[0];
    l.pure = cells[3].starts_with("yes");
    l.cold = cells[3].find("cold") != std::string::npos;
    if (!l.pure && !cells[3].starts_with("no"))
        problems.push_back(fmt::format("{}: {}/'s pure column says '{}', not yes or no", k_rule, l.folder, cells[3]));
    return l;
}

// The table under the heading "## The layers" whose header starts "| folder | builds on |".
std::vector<Layer> parse_layer_table(const std::string& markdown, std::vector<std::string>& problems) {
    std::istringstream in(markdown);
    std::string line;
    bool in_section = false, in_table = false;
    std::vector<Layer> out;
    while (std::getline(in, line)) {
        if (line.starts_with("## ")) in_section = line == "## The layers";
        if (!in_section) continue;
        const std::vector<std::string> cells = line.starts_with("|") ? cells_of(line) : std::vector<std::string>{};
        if (!in_table) {
            in_table = cells.size() >= 4 && cells[0] == "folder" && cells[1] == "builds on";
            continue;
        }
        if (cells.empty()) break;
        if (cells[0].starts_with("---")) continue;
        if (cells.size() < 4) {
            problems.push_back(fmt::format("{}: a row with {} cells, not 5: {}", k_rule, cells.size(), line));
            continue;
        }
        out.push_back(layer_of(cells, problems));
    }
    if (out.empty()) problems.push_back(fmt::format("{}: no table whose columns start 'folder | builds on'", k_rule));
    return out;
}

std::map<std::string, const Layer*> by_folder(const std::vector<Layer>& table) {
    std::map<std::string, const Layer*> out;
    for (const auto& l : table) out[l.folder] = &l;
    return out;
}

// Every folder `folder` may include: what its row builds on and, through them, all below.
std::set<std::string> allowed_below(const std::map<std::string, const Layer*>& rows, const std::string& folder) {
    std::set<std::string> out;
    std::vector<std::string> todo{folder};
    while (!todo.empty()) {
        const auto it = rows.find(todo.back());
        todo.pop_back();
        if (it == rows.end()) continue;
        for (const auto& b : it->second->builds_on)
            if (out.insert(b).second) todo.push_back(b);
    }
    return out;
}

// The table against the folders that hold sources: a row each, rows of real folders only, names
// it builds on that have rows, and no folder below itself.
std::vector<std::string> table_problems(const std::vector<Layer>& table, const std::set<std::string>& folders) {
    std::vector<std::string> out;
    const auto rows = by_folder(table);
    if (rows.size() != table.size()) out.push_back(fmt::format("{}: a folder has two rows", k_rule));
    for (const auto& f : folders)
        if (!rows.count(f)) out.push_back(fmt::format("harness/src/{}/ has no row in {}: add one", f, k_rule));
    for (const auto& l : table) {
        if (!folders.count(l.folder))
            out.push_back(fmt::format("{}: {}/ has a row but no sources under harness/src", k_rule, l.folder));
        for (const auto& b : l.builds_on)
            if (!rows.count(b)) out.push_back(fmt::format("{}: {}/ builds on {}/, which has no row", k_rule, l.folder, b));
        if (allowed_below(rows, l.folder).count(l.folder))
            out.push_back(fmt::format("{}: {}/ builds, through its rows, on itself: the table has a circle", k_rule,
                                      l.folder));
    }
    return out;
}

// One #include "..." of a file of harness/src naming another file of harness/src.
struct Include {
    std::string file;      // the including file
    int line = 0;
    std::string included;  // as written: the path below harness/src
    std::string text() const { return fmt::format("harness/src/{}:{} includes {}", file, line, included); }
};

std::vector<Include> includes_of(const std::vector<Source>& sources) {
    std::set<std::string> paths;
    for (const auto& s : sources) paths.insert(s.path);
    static const std::regex include{R"re(^\s*#\s*include\s*"([^"]+)")re"};
    std::vector<Include> out;
    for (const auto& s : sources) {
        std::istringstream in(s.text);
        int n = 0;
        for (std::string line; std::getline(in, line);) {
            ++n;
            std::smatch m;
            if (std::regex_search(line, m, include) && paths.count(m[1].str())) out.push_back({s.path, n, m[1].str()});
        }
    }
    return out;
}

bool is_known(const std::vector<KnownInclude>& known, const Include& i) {
    return std::any_of(known.begin(), known.end(),
                       [&](const KnownInclude& k) { return k.file == i.file && k.included == i.included; });
}

// Folders that include each other, directly or round a longer circle: each group once, with the
// first include from each of its folders to another.
std::vector<std::string> circle_problems(const std::vector<Include>& edges) {
    std::map<std::string, std::set<std::string>> next;
    for (const auto& e : edges) next[folder_of(e.file)].insert(folder_of(e.included));
    std::map<std::string, std::set<std::string>> reach;
    for (const auto& [from, _] : next) {
        std::vector<std::string> todo{from};
        while (!todo.empty()) {
            const std::string f = todo.back();
            todo.pop_back();
            for (const auto& t : next[f])
                if (reach[from].insert(t).second) todo.push_back(t);
        }
    }
    std::vector<std::string> out;
    std::set<std::string> reported;
    for (const auto& [from, reached] : reach) {
        if (!reached.count(from) || reported.count(from)) continue;
        std::set<std::string> group{from};
        for (const auto& t : reached)
            if (reach[t].count(from)) group.insert(t);
        reported.insert(group.begin(), group.end());
        std::string how;  // the first include from each folder of the group to another
        std::set<std::pair<std::string, std::string>> shown;
        for (const auto& e : edges) {
            const std::pair<std::string, std::string> pair{folder_of(e.file), folder_of(e.included)};
            if (group.count(pair.first) && group.count(pair.second) && shown.insert(pair).second)
                how += "\n    " + e.text();
        }
        out.push_back(fmt::format("a circle: {} include each other ({} allows no circle):{}",
                                  joined({group.begin(), group.end()}), k_rule, how));
    }
    return out;
}

// Every include against the table (runs up), every circle, and every known include that no longer
// runs against it.
std::vector<std::string> include_problems(const std::vector<Layer>& table, const std::vector<Source>& sources,
                                          const std::vector<KnownInclude>& known) {
    const auto rows = by_folder(table);
    std::vector<std::string> out;
    std::vector<Include> edges;  // between folders, known ones left out
    std::vector<Include> against;
    for (const auto& i : includes_of(sources)) {
        const std::string from = folder_of(i.file), to = folder_of(i.included);
        if (from == to) continue;
        const bool allowed = rows.count(from) && allowed_below(rows, from).count(to);
        if (!allowed) against.push_back(i);
        if (is_known(known, i)) continue;
        edges.push_back(i);
        if (!allowed && rows.count(from))
            out.push_back(fmt::format("{}: it runs up: {}/ builds on {} (and what those build on) only ({})",
                                      i.text(), from, joined(rows.at(from)->builds_on), k_rule));
    }
    for (const auto& c : circle_problems(edges)) out.push_back(c);
    for (const auto& k : known) {
        if (!k.file.starts_with("scenario/") && !k.file.starts_with("report/"))
            out.push_back(fmt::format("known include {} -> {}: only scenario/ and report/ may have known includes",
                                      k.file, k.included));
        const bool still = std::any_of(against.begin(), against.end(), [&](const Include& i) {
            return i.file == k.file && i.included == k.included;
        });
        if (!still)
            out.push_back(fmt::format("known include {} -> {} no longer runs against the table: remove it from "
                                      "k_known_includes in harness/tests/unit/layer_lint_test.cpp",
                                      k.file, k.included));
    }
    return out;
}

// One relab_layer(...) call of CMakeLists.txt.
struct CmakeLayer {
    std::string name;
    bool pure = false, cold = false;
    std::vector<std::string> dirs, exclude_dirs, deps;
};

std::vector<CmakeLayer> parse_cmake_layers(const std::string& cmake) {
    static const std::regex call{R"re((?:^|\n)[ \t]*relab_layer\(([^)]*)\))re"};
    std::vector<CmakeLayer> out;
    for (std::sregex_iterator it(cmake.begin(), cmake.end(), call), end; it != end; ++it) {
        std::istringstream words((*it)[1].str());
        CmakeLayer l;
        words >> l.name;
        std::vector<std::string>* list = nullptr;
        for (std::string w; words >> w;) {
            if (w == "PURE") l.pure = true;
            else if (w == "COLD") l.cold = true;
            else if (w == "DIRS") list = &l.dirs;
            else if (w == "EXCLUDE_DIRS") list = &l.exclude_dirs;
            else if (w == "DEPS") list = &l.deps;
            else if (list) list->push_back(w);
        }
        out.push_back(l);
    }
    return out;
}

bool under(const std::string& folder, const std::string& dir) {
    return folder == dir || folder.starts_with(dir + "/");
}

// The libraries whose DIRS hold `folder` most closely (the longest DIRS entry that does, unless
// the library excludes it): one, or none, or a folder compiled twice.
std::vector<std::string> libraries_of(const std::vector<CmakeLayer>& layers, const std::string& folder) {
    std::vector<std::string> best;
    size_t best_length = 0;
    for (const auto& l : layers) {
        if (std::any_of(l.exclude_dirs.begin(), l.exclude_dirs.end(), [&](const auto& e) { return under(folder, e); }))
            continue;
        for (const auto& d : l.dirs) {
            if (!under(folder, d) || d.size() < best_length) continue;
            if (d.size() > best_length) best.clear();
            best.push_back(l.name);
            best_length = d.size();
        }
    }
    return best;
}

std::string library_of(const std::vector<CmakeLayer>& layers, const std::string& folder) {
    const std::vector<std::string> libs = libraries_of(layers, folder);
    return libs.size() == 1 ? libs[0] : "";
}

// The libraries `name` links, directly or through the ones it links.
std::set<std::string> linked_by(const std::vector<CmakeLayer>& layers, const std::string& name) {
    std::map<std::string, const CmakeLayer*> by_name;
    for (const auto& l : layers) by_name[l.name] = &l;
    std::set<std::string> out;
    std::vector<std::string> todo{name};
    while (!todo.empty()) {
        const auto it = by_name.find(todo.back());
        todo.pop_back();
        if (it == by_name.end()) continue;
        for (const auto& d : it->second->deps)
            if (out.insert(d).second) todo.push_back(d);
    }
    return out;
}

// The table's library, pure and cold columns against CMakeLists.txt, and each library linking
// those of the folders its folders build on.
std::vector<std::string> cmake_problems(const std::vector<Layer>& table, const std::string& cmake) {
    const std::vector<CmakeLayer> layers = parse_cmake_layers(cmake);
    std::map<std::string, const CmakeLayer*> by_name;
    for (const auto& l : layers) by_name[l.name] = &l;
    const auto rows = by_folder(table);
    std::vector<std::string> out;
    for (const auto& row : table) {
        const std::vector<std::string> libs = libraries_of(layers, row.folder);
        if (libs.size() != 1 || libs[0] != row.library) {
            out.push_back(fmt::format("{} puts {}/ in {}; CMakeLists.txt compiles it into {}", k_rule, row.folder,
                                      row.library, libs.empty() ? "no library" : joined(libs, "")));
            continue;
        }
        const std::string& lib = libs[0];
        const CmakeLayer& l = *by_name.at(lib);
        if (l.pure != row.pure || l.cold != row.cold)
            out.push_back(fmt::format("{}: {}/ is {}pure and {}cold there, but {} is {}PURE and {}COLD in CMakeLists.txt",
                                      k_rule, row.folder, row.pure ? "" : "not ", row.cold ? "" : "not ", lib,
                                      l.pure ? "" : "not ", l.cold ? "" : "not "));
        const std::set<std::string> linked = linked_by(layers, lib);
        for (const auto& below : allowed_below(rows, row.folder)) {
            const std::string other = library_of(layers, below);
            if (other != lib && !linked.count(other))
                out.push_back(fmt::format("CMakeLists.txt: {} does not link {} ({}/), which {}/ builds on ({})", lib,
                                          other.empty() ? "any library" : other, below, row.folder, k_rule));
        }
    }
    return out;
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Every .h and .cpp under `root`, with its path below it.
std::vector<Source> read_sources(const fs::path& root) {
    std::vector<Source> out;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
        const std::string ext = e.path().extension().string();
        if (e.is_regular_file() && (ext == ".h" || ext == ".cpp"))
            out.push_back({fs::relative(e.path(), root).generic_string(), slurp(e.path())});
    }
    std::sort(out.begin(), out.end(), [](const Source& a, const Source& b) { return a.path < b.path; });
    return out;
}

std::set<std::string> folders_of(const std::vector<Source>& sources) {
    std::set<std::string> out;
    for (const auto& s : sources) out.insert(folder_of(s.path));
    return out;
}

std::string lines_of(const std::vector<std::string>& problems) {
    std::string out;
    for (const auto& p : problems) out += p + "\n";
    return out;
}

bool any_contains(const std::vector<std::string>& problems, const std::string& part) {
    return std::any_of(problems.begin(), problems.end(),
                       [&](const std::string& p) { return p.find(part) != std::string::npos; });
}

// ---------------------------------------------------------------- fixtures

// Four folders, each on the one before: util < clients < process < servers; and other/ on util/.
const std::string k_fixture_table = R"(# Internals

## The layers

| folder | builds on | library | pure | what it holds |
| --- | --- | --- | --- | --- |
| `util/` | – | `relab_util` | yes | helpers |
| `clients/` | `util/` | `relab_clients` | no (cold) | clients |
| `process/` | `clients/` | `relab_process` | no (cold) | processes |
| `servers/` | `process/` | `relab_servers` | no (cold) | servers |
| `other/` | `util/` | `relab_other` | yes | other things |

## The next section
)";

const std::string k_fixture_cmake = R"(
relab_layer(relab_util PURE DIRS util DEPS fmt::fmt)
relab_layer(relab_clients COLD DIRS clients DEPS relab_util)
relab_layer(relab_process COLD DIRS process DEPS relab_clients)
relab_layer(relab_servers COLD DIRS servers
            DEPS relab_process)
relab_layer(relab_other PURE DIRS other DEPS relab_util)
)";

std::vector<Layer> fixture_table() {
    std::vector<std::string> problems;
    std::vector<Layer> table = parse_layer_table(k_fixture_table, problems);
    EXPECT_TRUE(problems.empty()) << lines_of(problems);
    return table;
}

// Each folder's file includes the one below it, as the table lets it.
std::vector<Source> fixture_sources() {
    return {{"util/text.h", "#pragma once\n"},
            {"clients/endpoint.h", "#pragma once\n#include \"util/text.h\"\n"},
            {"process/reaper.cpp", "#include <vector>\n#include \"clients/endpoint.h\"\n#include \"util/text.h\"\n"},
            {"process/reaper.h", "#pragma once\n"},
            {"servers/servers.cpp", "#include \"process/reaper.h\"\n#include \"clients/endpoint.h\"\n"},
            {"other/other.h", "#pragma once\n#include \"util/text.h\"\n"}};
}

TEST(Layers, the_table_is_read_from_its_section_with_each_rows_folders_library_and_purity) {
    const std::vector<Layer> table = fixture_table();
    ASSERT_EQ(table.size(), 5u);
    EXPECT_EQ(table[0].folder, "util");
    EXPECT_TRUE(table[0].builds_on.empty());
    EXPECT_TRUE(table[0].pure);
    EXPECT_EQ(table[2].folder, "process");
    EXPECT_EQ(table[2].builds_on, std::vector<std::string>{"clients"});
    EXPECT_EQ(table[2].library, "relab_process");
    EXPECT_FALSE(table[2].pure);
    EXPECT_TRUE(table[2].cold);
    std::vector<std::string> problems;
    EXPECT_TRUE(parse_layer_table("## The layers\n\nno table\n", problems).empty());
    EXPECT_TRUE(any_contains(problems, "no table")) << lines_of(problems);
}

TEST(Layers, a_tree_that_keeps_to_the_table_passes) {
    const std::vector<Source> sources = fixture_sources();
    EXPECT_TRUE(table_problems(fixture_table(), folders_of(sources)).empty());
    EXPECT_TRUE(include_problems(fixture_table(), sources, {}).empty()) << lines_of(include_problems(fixture_table(), sources, {}));
    EXPECT_TRUE(cmake_problems(fixture_table(), k_fixture_cmake).empty()) << lines_of(cmake_problems(fixture_table(), k_fixture_cmake));
}

TEST(Layers, an_include_that_runs_up_is_named_with_its_file_line_and_rule) {
    std::vector<Source> sources = fixture_sources();
    sources.push_back({"clients/scratch.cpp", "// a scratch file\n\n#include \"other/other.h\"\n"});
    const std::vector<std::string> problems = include_problems(fixture_table(), sources, {});
    ASSERT_EQ(problems.size(), 1u) << lines_of(problems);  // other/ includes nothing of clients/: no circle
    EXPECT_NE(problems[0].find("harness/src/clients/scratch.cpp:3 includes other/other.h: it runs up: clients/ builds "
                               "on util/ (and what those build on) only"),
              std::string::npos)
        << problems[0];
    EXPECT_NE(problems[0].find("docs/internals.md"), std::string::npos) << problems[0];
}

TEST(Layers, two_folders_that_include_each_other_are_a_circle) {
    std::vector<Source> sources = fixture_sources();
    sources.push_back({"clients/client.cpp", "#include \"clients/endpoint.h\"\n#include \"process/reaper.h\"\n"});
    const std::vector<std::string> problems = include_problems(fixture_table(), sources, {});
    EXPECT_TRUE(any_contains(problems, "harness/src/clients/client.cpp:2 includes process/reaper.h: it runs up"))
        << lines_of(problems);
    EXPECT_TRUE(any_contains(problems, "a circle: clients/, process/ include each other")) << lines_of(problems);
    EXPECT_TRUE(any_contains(problems, "harness/src/process/reaper.cpp:2 includes clients/endpoint.h"))
        << lines_of(problems);
}

TEST(Layers, a_longer_circle_is_found_as_well) {
    std::vector<Source> sources = fixture_sources();
    sources.push_back({"clients/client.cpp", "#include \"servers/servers.cpp\"\n"});
    const std::vector<std::string> problems = include_problems(fixture_table(), sources, {});
    EXPECT_TRUE(any_contains(problems, "a circle: clients/, process/, servers/ include each other")) << lines_of(problems);
}

TEST(Layers, a_known_include_passes_while_it_exists_and_fails_once_it_is_gone) {
    const std::vector<KnownInclude> known = {{"report/old.cpp", "report/text/new.h"}};
    std::vector<std::string> problems;
    std::vector<Layer> table = parse_layer_table(
        "## The layers\n\n| folder | builds on | library | pure | what |\n| --- | --- | --- | --- | --- |\n"
        "| `report/` | – | `relab_report` | yes | r |\n| `report/text/` | `report/` | `relab_report` | yes | t |\n",
        problems);
    ASSERT_TRUE(problems.empty()) << lines_of(problems);
    const std::vector<Source> with = {{"report/old.cpp", "#include \"report/text/new.h\"\n"},
                                      {"report/text/new.h", "#include \"report/old.h\"\n"},
                                      {"report/old.h", ""}};
    EXPECT_TRUE(include_problems(table, with, known).empty()) << lines_of(include_problems(table, with, known));
    const std::vector<Source> without = {{"report/old.cpp", ""}, {"report/text/new.h", ""}};
    problems = include_problems(table, without, known);
    ASSERT_EQ(problems.size(), 1u) << lines_of(problems);
    EXPECT_NE(problems[0].find("report/old.cpp -> report/text/new.h no longer runs against the table"), std::string::npos)
        << problems[0];
    problems = include_problems(fixture_table(), fixture_sources(), {{"clients/a.cpp", "util/text.h"}});
    EXPECT_TRUE(any_contains(problems, "only scenario/ and report/ may have known includes")) << lines_of(problems);
}

TEST(Layers, the_table_needs_a_row_per_folder_and_no_circle_of_its_own) {
    std::vector<Source> sources = fixture_sources();
    sources.push_back({"fresh/new.h", ""});
    std::vector<std::string> problems = table_problems(fixture_table(), folders_of(sources));
    EXPECT_TRUE(any_contains(problems, "harness/src/fresh/ has no row")) << lines_of(problems);
    std::vector<Layer> circular = fixture_table();
    circular[1].builds_on.push_back("servers");
    problems = table_problems(circular, folders_of(fixture_sources()));
    EXPECT_TRUE(any_contains(problems, "clients/ builds, through its rows, on itself")) << lines_of(problems);
    circular[0].builds_on.push_back("nowhere");
    problems = table_problems(circular, folders_of(fixture_sources()));
    EXPECT_TRUE(any_contains(problems, "util/ builds on nowhere/, which has no row")) << lines_of(problems);
}

TEST(Layers, cmake_must_compile_each_folder_into_its_library_and_link_what_it_builds_on) {
    std::string cmake = k_fixture_cmake;
    cmake.replace(cmake.find("DIRS process DEPS relab_clients"), 31, "DIRS process DEPS relab_util");
    std::vector<std::string> problems = cmake_problems(fixture_table(), cmake);
    EXPECT_TRUE(any_contains(problems, "relab_process does not link relab_clients (clients/), which process/ builds on"))
        << lines_of(problems);
    cmake = k_fixture_cmake;
    cmake.replace(cmake.find("relab_util PURE"), 15, "relab_util");
    problems = cmake_problems(fixture_table(), cmake);
    EXPECT_TRUE(any_contains(problems, "util/ is pure and not cold there, but relab_util is not PURE")) << lines_of(problems);
    cmake = k_fixture_cmake + "relab_layer(relab_more COLD DIRS process DEPS relab_servers)\n";
    problems = cmake_problems(fixture_table(), cmake);
    EXPECT_TRUE(any_contains(problems, "puts process/ in relab_process; CMakeLists.txt compiles it into relab_process, "
                                       "relab_more"))
        << lines_of(problems);
    cmake.replace(cmake.find("DIRS process DEPS relab_clients"), 12, "DIRS process EXCLUDE_DIRS process");
    problems = cmake_problems(fixture_table(), cmake);
    EXPECT_TRUE(any_contains(problems, "puts process/ in relab_process; CMakeLists.txt compiles it into relab_more"))
        << lines_of(problems);
}

TEST(Layers, a_tree_on_disk_is_read_with_its_paths_below_the_root) {
    const fs::path root = fs::temp_directory_path() / fmt::format("relab-layer-lint-{}", ::getpid());
    fs::remove_all(root);
    for (const Source& s : fixture_sources()) {
        fs::create_directories((root / s.path).parent_path());
        std::ofstream(root / s.path) << s.text;
    }
    fs::create_directories(root / "clients");
    std::ofstream(root / "clients" / "scratch.cpp") << "#include \"clients/endpoint.h\"\n#include \"servers/servers.cpp\"\n";
    std::ofstream(root / "clients" / "notes.txt") << "#include \"servers/servers.cpp\"\n";
    const std::vector<Source> sources = read_sources(root);
    fs::remove_all(root);
    EXPECT_EQ(sources.size(), fixture_sources().size() + 1);
    const std::vector<std::string> problems = include_problems(fixture_table(), sources, {});
    EXPECT_TRUE(any_contains(problems, "harness/src/clients/scratch.cpp:2 includes servers/servers.cpp: it runs up"))
        << lines_of(problems);
}

// ---------------------------------------------------------------- the repository

std::vector<Layer> repo_table() {
    std::vector<std::string> problems;
    std::vector<Layer> table = parse_layer_table(slurp(fs::path(RELAB_SOURCE_DIR) / "docs" / "internals.md"), problems);
    EXPECT_TRUE(problems.empty()) << lines_of(problems);
    return table;
}

std::vector<Source> repo_sources() {
    const std::vector<Source> sources = read_sources(fs::path(RELAB_SOURCE_DIR) / "harness" / "src");
    EXPECT_GT(sources.size(), 100u);  // the walk found the sources
    return sources;
}

TEST(RepoLayers, the_layer_table_has_a_row_for_each_folder_of_harness_src_and_no_circle) {
    const std::vector<std::string> problems = table_problems(repo_table(), folders_of(repo_sources()));
    EXPECT_TRUE(problems.empty()) << lines_of(problems);
}

TEST(RepoLayers, every_include_of_harness_src_keeps_to_the_layer_table) {
    const std::vector<std::string> problems = include_problems(repo_table(), repo_sources(), k_known_includes);
    EXPECT_TRUE(problems.empty()) << lines_of(problems);
}

TEST(RepoLayers, cmake_compiles_and_links_the_layers_as_the_table_says) {
    const std::vector<std::string> problems = cmake_problems(repo_table(), slurp(fs::path(RELAB_SOURCE_DIR) / "CMakeLists.txt"));
    EXPECT_TRUE(problems.empty()) << lines_of(problems);
}

}  // namespace layer_lint_test
}  // namespace relab
