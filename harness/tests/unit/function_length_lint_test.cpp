// The function length lint (ctest function_length_lint, label lint): no function body in
// harness/src is over 100 lines (the project's limit; it aims at 70). FunctionLength.* show the
// scanner finding a long body, and not a short one, in code that tries to mislead it;
// RepoFunctions.* scan harness/src.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace relab {
namespace function_length_lint_test {

namespace fs = std::filesystem;

constexpr int k_max_body_lines = 100;

// A function body: where its '{' is (1-based line) and how many lines lie between its braces.
struct Body {
    int line = 0;
    int lines = 0;
    std::string name;
};

// The text with comments, string and character literals (raw ones too) and preprocessor lines
// blanked, newlines kept, so braces in them do not count and line numbers stay.
std::string code_only(const std::string& s) {
    std::string out = s;
    auto blank = [&](size_t from, size_t to) {
        for (size_t k = from; k < to && k < out.size(); ++k)
            if (out[k] != '\n') out[k] = ' ';
    };
    bool line_start = true;
    for (size_t i = 0; i < s.size();) {
        const char c = s[i];
        if (line_start && c == '#') {  // a preprocessor line, with its continuations
            size_t j = i;
            while (j < s.size() && !(s[j] == '\n' && s[j - 1] != '\\')) ++j;
            blank(i, j);
            i = j;
            continue;
        }
        if (c == '\n') line_start = true;
        else if (c != ' ' && c != '\t') line_start = false;
        if (s.compare(i, 2, "//") == 0) {
            const size_t j = std::min(s.find('\n', i), s.size());
            blank(i, j);
            i = j;
        } else if (s.compare(i, 2, "/*") == 0) {
            const size_t end = s.find("*/", i + 2);
            const size_t j = end == std::string::npos ? s.size() : end + 2;
            blank(i, j);
            i = j;
        } else if (s.compare(i, 2, "R\"") == 0 && (i == 0 || !(std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_'))) {
            const size_t open = s.find('(', i);
            const std::string close = ")" + s.substr(i + 2, open - i - 2) + "\"";
            const size_t end = s.find(close, open);
            const size_t j = end == std::string::npos ? s.size() : end + close.size();
            blank(i, j);
            i = j;
        } else if (c == '"' || (c == '\'' && !(i > 0 && std::isxdigit(static_cast<unsigned char>(s[i - 1]))))) {
            size_t j = i + 1;  // a ' after a digit is a digit separator (1'000)
            while (j < s.size() && s[j] != c && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
            blank(i, j + 1);
            i = j + 1;
        } else {
            ++i;
        }
    }
    return out;
}

// What a '{' opens, told by the text before it since the last ';', '{' or '}' (its head).
enum class Opens { scope, data, function };

Opens classify(std::string head) {
    static const std::regex label(R"(\b(public|private|protected)\s*:)");
    head = std::regex_replace(head, label, " ");
    static const std::regex scope(R"(^\s*(template\s*<[^{]*>\s*)?(namespace|class|struct|union|enum|extern)\b)");
    if (std::regex_search(head, scope)) return Opens::scope;
    // A function's head has a parameter list; a brace initializer's (= {...}, x{...}) has none
    // before its brace; `= make({...})` is a call's argument, `= [](...) {` a lambda.
    static const std::regex assigned(R"(^[^(]*[^=!<>]=\s*(\S))");
    std::smatch m;
    if (std::regex_search(head, m, assigned) && head.find("operator") == std::string::npos)
        return m[1].str() == "[" ? Opens::function : Opens::data;
    return head.find('(') != std::string::npos ? Opens::function : Opens::data;
}

// The name in a function's head: what stands before its parameter list ("lambda" for a lambda).
std::string name_of(const std::string& head) {
    static const std::regex named(R"(([~\w:]+|\]|operator\s*\S+?)\s*(<[^()]*>)?\s*\()");
    std::smatch m;
    if (!std::regex_search(head, m, named)) return "?";
    return m[1].str() == "]" ? "lambda" : m[1].str();
}

// Each function body, outermost only (a lambda inside a function counts as its lines), whose
// lines between the braces exceed max_lines.
std::vector<Body> long_bodies(const std::string& source, int max_lines) {
    const std::string s = code_only(source);
    struct Open {
        Opens what;
        int line;
        std::string name;
    };
    std::vector<Open> stack;
    std::vector<Body> out;
    std::string head;
    bool after_function_block = false;  // a constructor's `m_x{1} {`: the body follows a brace init
    std::string last_name;  // of the outermost function head seen last
    int line = 1;
    int in_function = 0;
    for (const char c : s) {
        if (c == '\n') ++line;
        if (c == '{') {
            Opens what = Opens::function;
            if (in_function == 0) {
                const bool empty = head.find_first_not_of(" \t\n") == std::string::npos;
                what = empty && after_function_block ? Opens::function : classify(head);
                if (what == Opens::function && !empty) last_name = name_of(head);
            }
            stack.push_back({what, line, last_name});
            if (what == Opens::function) ++in_function;
            head.clear();
            after_function_block = false;
        } else if (c == '}') {
            if (stack.empty()) continue;
            const Open o = stack.back();
            stack.pop_back();
            if (o.what == Opens::function) {
                --in_function;
                if (in_function == 0 && line - o.line - 1 > max_lines) out.push_back({o.line, line - o.line - 1, o.name});
            }
            after_function_block = o.what == Opens::function && in_function == 0;
            head.clear();
        } else if (c == ';') {
            head.clear();
            after_function_block = false;
        } else if (in_function == 0) {
            head += c;
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
