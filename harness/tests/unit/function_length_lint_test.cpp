// The function length lint (ctest function_length_lint, label lint): no function body in
// harness/src is over 100 lines (the project's limit; it aims at 70). FunctionLength.* show the
// scanner (source_scan.h, shared with the size lint) finding a long body, and not a short one, in
// code that tries to mislead it; RepoFunctions.* scan harness/src.
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "source_scan.h"

namespace relab {
namespace function_length_lint_test {

namespace fs = std::filesystem;
using source_scan::Body;
using source_scan::long_bodies;
using source_scan::slurp;

constexpr int k_max_body_lines = 100;

// A function named `name` whose body has `lines` lines, each a statement.
std::string function_of(const std::string& name, int lines) {
    std::string out = "int " + name + "(int a) {\n";
    for (int i = 0; i < lines; ++i) out += "    a += " + std::to_string(i) + ";\n";
    return out + "}\n";
}

TEST(FunctionLength, a_body_of_101_lines_is_found_and_one_of_100_is_not) {
    const std::string code = "namespace x {\n" + function_of("short_enough", 100) + function_of("too_long", 101) + "}\n";
    const std::vector<Body> found = long_bodies(code, k_max_body_lines);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].name, "too_long");
    EXPECT_EQ(found[0].lines, 101);
    EXPECT_EQ(found[0].line, 2 + 102);  // after the namespace line and short_enough's 102
}

TEST(FunctionLength, braces_in_comments_strings_and_lambdas_do_not_end_a_body_early) {
    std::string body = "    // a } in a comment\n    const char* s = \"}}}\";\n    char c = '}';\n"
                       "    auto f = [](int v) { return v; };\n    /* } */\n    const char* r = R\"x(})x\";\n";
    for (int i = 0; i < 100; ++i) body += "    a += 1'000;\n";
    const std::string code = "#define BRACE }\nstruct S {\n  public:\n    int m(int a) const {\n" + body + "    return a;\n    }\n};\n";
    const std::vector<Body> found = long_bodies(code, k_max_body_lines);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].name, "m");
    EXPECT_EQ(found[0].line, 4);
}

TEST(FunctionLength, a_long_table_is_data_and_a_constructor_after_a_brace_init_is_a_function) {
    std::string table = "const int k_table[] = {\n";
    for (int i = 0; i < 150; ++i) table += "    {" + std::to_string(i) + "},\n";
    table += "};\n";
    std::string ctor = "S::S() : m_a(1), m_b{2} {\n";
    for (int i = 0; i < 101; ++i) ctor += "    m_a += 1;\n";
    ctor += "}\n";
    const std::vector<Body> found = long_bodies(table + ctor, k_max_body_lines);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].line, 153);
    EXPECT_EQ(found[0].lines, 101);
}

TEST(RepoFunctions, no_function_in_harness_src_is_over_100_lines) {
    const fs::path src = fs::path(RELAB_SOURCE_DIR) / "harness" / "src";
    ASSERT_TRUE(fs::is_directory(src)) << src;
    std::vector<std::string> problems;
    int files = 0;
    for (const auto& e : fs::recursive_directory_iterator(src)) {
        const std::string ext = e.path().extension().string();
        if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
        ++files;
        for (const Body& b : long_bodies(slurp(e.path()), k_max_body_lines))
            problems.push_back(fmt::format("{}:{}: {} has {} lines (at most {}; split it into named steps)",
                                           fs::relative(e.path(), RELAB_SOURCE_DIR).string(), b.line, b.name, b.lines,
                                           k_max_body_lines));
    }
    EXPECT_GT(files, 100);  // the walk found the sources
    std::string all;
    for (const auto& p : problems) all += p + "\n";
    EXPECT_TRUE(problems.empty()) << all;
}

}  // namespace function_length_lint_test
}  // namespace relab
