// The size lint (ctest size_lint, label lint), a sibling of the function length lint: in
// harness/src no file is over 800 lines, no class or struct over 300 (its definition's body plus
// the bodies of its member functions defined out of line, in any file), and no folder holds over
// 3,500 lines of its own files (those directly in it, not in its subfolders). A file, class or
// folder that size is more than one concept. SizeLint.* show each check on fixtures, including
// code that tries to mislead the scanner (source_scan.h, shared with the function length lint);
// RepoSizes.* scan harness/src.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "source_scan.h"

namespace relab {
namespace size_lint_test {

namespace fs = std::filesystem;
using source_scan::Body;

constexpr int k_max_file_lines = 800;
constexpr int k_max_class_lines = 300;
constexpr int k_max_folder_lines = 3500;

// A source file: its path from the repository's root ("harness/src/roles/consumer.cpp") and text.
struct SourceFile {
    std::string path;
    std::string text;
};

// Something over its limit: "file", "class" or "folder"; the file or folder's path, or for a
// class "<the file defining it>: <its name>"; its lines and its limit.
struct Oversized {
    std::string kind;
    std::string what;
    int lines = 0;
    int limit = 0;
};

int line_count(const std::string& text) {
    const int newlines = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
    return newlines + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

std::string folder_of(const std::string& path) { return fs::path(path).parent_path().string(); }
std::string stem_of(const std::string& path) { return (fs::path(path).parent_path() / fs::path(path).stem()).string(); }

// A class's definition, and the lines it has so far.
struct ClassDef {
    std::string file;
    int line = 0;
    std::string name;
    int lines = 0;
};

// Of the classes an out-of-line member `qualifier::f` in `file` may belong to (those whose name
// the qualifier ends with: `sim::SimWorld` is SimWorld's), the one defined in the same file, else
// in the header of the same name, else in the same folder, else the only one; none when that
// leaves several.
ClassDef* owner_of(std::vector<ClassDef>& classes, const std::string& qualifier, const std::string& file) {
    std::vector<ClassDef*> named;
    for (ClassDef& c : classes)
        if (qualifier == c.name || (qualifier.size() > c.name.size() && qualifier.ends_with("::" + c.name)))
            named.push_back(&c);
    const std::vector<std::function<bool(const ClassDef&)>> preferences = {
        [&](const ClassDef& c) { return c.file == file; },
        [&](const ClassDef& c) { return stem_of(c.file) == stem_of(file); },
        [&](const ClassDef& c) { return folder_of(c.file) == folder_of(file); },
        [](const ClassDef&) { return true; },
    };
    for (const auto& prefer : preferences) {
        std::vector<ClassDef*> found;
        for (ClassDef* c : named)
            if (prefer(*c)) found.push_back(c);
        if (found.size() == 1) return found.front();
        if (found.size() > 1) return nullptr;
    }
    return nullptr;
}

std::vector<Oversized> oversized_classes(const std::vector<SourceFile>& files) {
    std::vector<ClassDef> classes;
    std::map<std::string, source_scan::Scan> scans;
    for (const SourceFile& f : files) {
        scans[f.path] = source_scan::scan(f.text);
        for (const Body& b : scans[f.path].classes) classes.push_back({f.path, b.line, b.name, b.lines});
    }
    // In the order they are defined (a nested class ends, and is scanned, before its outer one).
    std::sort(classes.begin(), classes.end(), [](const ClassDef& a, const ClassDef& b) {
        return a.file != b.file ? a.file < b.file : a.line < b.line;
    });
    for (const SourceFile& f : files) {
        for (const Body& b : scans[f.path].functions) {
            const size_t last = b.name.rfind("::");
            if (last == std::string::npos || last == 0) continue;
            if (ClassDef* c = owner_of(classes, b.name.substr(0, last), f.path)) c->lines += b.lines;
        }
    }
    std::vector<Oversized> out;
    for (const ClassDef& c : classes)
        if (c.lines > k_max_class_lines) out.push_back({"class", c.file + ": " + c.name, c.lines, k_max_class_lines});
    return out;
}

// Every file, class and folder of `files` over its limit.
std::vector<Oversized> oversized(const std::vector<SourceFile>& files) {
    std::vector<Oversized> out;
    std::map<std::string, int> folder_lines;
    for (const SourceFile& f : files) {
        const int lines = line_count(f.text);
        folder_lines[folder_of(f.path)] += lines;
        if (lines > k_max_file_lines) out.push_back({"file", f.path, lines, k_max_file_lines});
    }
    for (const Oversized& c : oversized_classes(files)) out.push_back(c);
    for (const auto& [folder, lines] : folder_lines)
        if (lines > k_max_folder_lines) out.push_back({"folder", folder, lines, k_max_folder_lines});
    return out;
}

std::vector<std::string> whats(const std::vector<Oversized>& found) {
    std::vector<std::string> out;
    for (const Oversized& o : found) out.push_back(o.kind + " " + o.what);
    return out;
}

// `n` lines of statements, indented.
std::string statements(int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += "        a += " + std::to_string(i) + ";\n";
    return out;
}

// A class `name` whose definition's body has exactly `lines` lines (a member function filling them).
std::string class_of(const std::string& name, int lines) {
    return "class " + name + " {\npublic:\n    int f(int a) {\n" + statements(lines - 4) +
           "        return a;\n    }\n};\n";
}

TEST(SizeLint, a_file_of_801_lines_is_found_and_one_of_800_is_not) {
    const std::vector<SourceFile> files = {{"src/a/long.cpp", std::string(801, '\n')},
                                           {"src/a/fits.cpp", std::string(799, '\n') + "int x;"}};
    EXPECT_EQ(line_count(files[1].text), 800);
    const auto found = oversized(files);
    EXPECT_EQ(whats(found), (std::vector<std::string>{"file src/a/long.cpp"}));
    EXPECT_EQ(found.at(0).lines, 801);
}

TEST(SizeLint, a_class_body_of_301_lines_is_found_and_one_of_300_is_not) {
    const std::vector<SourceFile> files = {
        {"src/a/a.h", "namespace x {\n" + class_of("Big", 301) + class_of("Fits", 300) + "}\n"}};
    const auto found = oversized(files);
    EXPECT_EQ(whats(found), (std::vector<std::string>{"class src/a/a.h: Big"}));
    EXPECT_EQ(found.at(0).lines, 301);
}

// A 200-line class with 101 lines of members defined out of line, in another file and one of them
// qualified by its namespace, is over; its twin with 100 is not. A free function and another
// class's members are no one else's.
TEST(SizeLint, a_classes_out_of_line_members_count_wherever_they_are_defined) {
    const std::string members = "int Big::g(int a) {\n" + statements(60) + "}\n";
    const std::string more = "int ns::Big::h(int a) {\n" + statements(41) + "}\nint free_function(int a) {\n" +
                             statements(200) + "}\nint Fits::g(int a) {\n" + statements(100) + "}\n";
    const std::vector<SourceFile> files = {
        {"src/a/big.h", "namespace ns {\n" + class_of("Big", 200) + class_of("Fits", 200) + "}\n"},
        {"src/a/big.cpp", "namespace ns {\n" + members + "}\n"},
        {"src/b/other.cpp", more}};
    const auto found = oversized(files);
    EXPECT_EQ(whats(found), (std::vector<std::string>{"class src/a/big.h: Big"}));
    EXPECT_EQ(found.at(0).lines, 200 + 60 + 41);
}

// Braces in comments, strings, characters and raw strings do not end a class early; a nested
// class is a class of its own (and part of its outer class's body), its out-of-line members its
// own; an enum class, a namespace and a brace-initialised table are no classes.
TEST(SizeLint, braces_in_literals_and_nested_classes_do_not_mislead_it) {
    std::string tricky = "template <class T>\nstruct Outer final : public Base<T> {\n"
                         "    // } a brace in a comment\n    const char* s = \"}}\";\n    char c = '}';\n"
                         "    const char* r = R\"x(})x\";\n    /* } */\n"
                         "    enum class Kind { a, b };\n    struct Inner {\n" +
                         statements(150) + "    };\n" + statements(146) + "};\n";
    const std::string inner_members = "void Outer::Inner::go() {\n" + statements(151) + "}\n";
    std::string table = "const int k_table[] = {\n";
    for (int i = 0; i < 100; ++i) table += "    {" + std::to_string(i) + "},\n";
    table += "};\nnamespace big {\n" + statements(100) + "}\n";
    const std::vector<SourceFile> files = {{"src/a/outer.h", tricky}, {"src/a/outer.cpp", inner_members + table}};
    const auto found = oversized(files);
    EXPECT_EQ(whats(found),
              (std::vector<std::string>{"class src/a/outer.h: Outer", "class src/a/outer.h: Outer::Inner"}));
    EXPECT_EQ(found.at(0).lines, 5 + 1 + 152 + 146);  // the comment and literals, the enum, Inner, the rest
    EXPECT_EQ(found.at(1).lines, 150 + 151);
}

// A folder's own files count, not its subfolders': 3,501 lines directly in a/ is over; 3,500 in
// b/ is not, however much b/c/ holds.
TEST(SizeLint, a_folder_of_3501_lines_of_its_own_files_is_found_and_one_of_3500_is_not) {
    auto file = [](const std::string& path, int lines) {
        return SourceFile{path, std::string(static_cast<size_t>(lines), '\n')};
    };
    const std::vector<SourceFile> files = {
        file("src/a/x.cpp", 700), file("src/a/y.cpp", 700), file("src/a/z.cpp", 700),   file("src/a/w.cpp", 700),
        file("src/a/v.h", 701),   file("src/b/x.cpp", 700), file("src/b/y.cpp", 700),   file("src/b/z.cpp", 700),
        file("src/b/w.cpp", 700), file("src/b/v.h", 700),   file("src/b/c/x.cpp", 700), file("src/b/c/y.cpp", 700)};
    const auto found = oversized(files);
    EXPECT_EQ(whats(found), (std::vector<std::string>{"folder src/a"}));
    EXPECT_EQ(found.at(0).lines, 3501);
}

// What is known to be over its limit, each to be split into parts of one concept (nothing now):
// the check fails on anything else over, and on an entry no longer over, so the list only shrinks.
const std::set<std::string> k_known_oversized = {};

TEST(RepoSizes, no_file_class_or_folder_of_harness_src_is_over_its_limit) {
    const fs::path root = RELAB_SOURCE_DIR;
    const fs::path src = root / "harness" / "src";
    ASSERT_TRUE(fs::is_directory(src)) << src;
    std::vector<SourceFile> files;
    for (const auto& e : fs::recursive_directory_iterator(src)) {
        const std::string ext = e.path().extension().string();
        if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
        files.push_back({fs::relative(e.path(), root).generic_string(), source_scan::slurp(e.path())});
    }
    std::sort(files.begin(), files.end(), [](const SourceFile& a, const SourceFile& b) { return a.path < b.path; });
    EXPECT_GT(files.size(), 100u);  // the walk found the sources
    std::string problems;
    std::set<std::string> still_over;
    for (const Oversized& o : oversized(files)) {
        const std::string what = o.kind + " " + o.what;
        if (k_known_oversized.count(what)) {
            still_over.insert(what);
            continue;
        }
        problems += fmt::format("{} has {} lines (at most {}; split it into parts of one concept each)\n", what,
                                o.lines, o.limit);
    }
    for (const std::string& known : k_known_oversized)
        if (!still_over.count(known))
            problems += known + " is no longer over its limit: take it off k_known_oversized\n";
    EXPECT_TRUE(problems.empty()) << problems;
}

}  // namespace size_lint_test
}  // namespace relab
