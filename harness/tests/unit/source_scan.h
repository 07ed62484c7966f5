// The brace scanner the lints on harness/src share (function_length_lint_test.cpp,
// size_lint_test.cpp): the source with comments, literals and preprocessor lines blanked, then
// each '{' told apart by the text before it (a scope, a class, data, or a function body) and
// matched with its '}'.
#pragma once

#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace relab::source_scan {

// The text with comments, string and character literals (raw ones too) and preprocessor lines
// blanked, newlines kept, so braces in them do not count and line numbers stay.
inline std::string code_only(const std::string& s) {
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

inline std::string without_access_labels(std::string head) {
    static const std::regex label(R"(\b(public|private|protected)\s*:)");
    return std::regex_replace(head, label, " ");
}

inline Opens classify(std::string head) {
    head = without_access_labels(head);
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

// The head with its template argument lists taken out ("template <class T> void X<T>::f(" reads
// "template  void X::f("), so that a qualified name reads as its parts.
inline std::string without_template_args(std::string head) {
    static const std::regex args(R"(<[^<>(){};]*>)");
    for (std::string next; (next = std::regex_replace(head, args, "")) != head;) head = next;
    return head;
}

// The name in a function's head: what stands before its parameter list, as qualified as the head
// has it ("Consumer::run"; "lambda" for a lambda).
inline std::string name_of(const std::string& head) {
    static const std::regex named(R"(([~\w:]+|\]|operator\s*\S+?)\s*(<[^()]*>)?\s*\()");
    std::smatch m;
    const std::string h = without_template_args(head);
    if (!std::regex_search(h, m, named)) return "?";
    return m[1].str() == "]" ? "lambda" : m[1].str();
}

// The name a scope's head gives a class, struct or union ("Impl", or "SimBackend::Impl" for one
// defined out of its enclosing class); empty for a namespace, an enum or an unnamed one.
inline std::string class_name_of(const std::string& head) {
    static const std::regex keyed(R"(^\s*(template\s*)?(class|struct|union)\s+(\[\[[^\]]*\]\]\s*)?([A-Za-z_][\w:]*))");
    std::smatch m;
    const std::string h = without_template_args(without_access_labels(head));
    if (!std::regex_search(h, m, keyed)) return "";
    return m[4].str();
}

// A function body (outermost only: a lambda inside a function counts as its lines) or a class's
// definition: where its '{' is (1-based line), how many lines lie between its braces, and its name.
struct Body {
    int line = 0;
    int lines = 0;
    std::string name;  // a function's as its head has it; a class's with its enclosing classes ("Outer::Inner")
};

struct Scan {
    std::vector<Body> functions;
    std::vector<Body> classes;
};

// Every outermost function body and every class defined outside a function, in order of their '}'.
inline Scan scan(const std::string& source) {
    const std::string s = code_only(source);
    struct Open {
        Opens what;
        int line;
        std::string name;  // a function's, or a class's full name; empty for other scopes and data
    };
    std::vector<Open> stack;
    std::vector<std::string> classes;  // the enclosing classes' full names, innermost last
    Scan out;
    std::string head;
    bool after_function_block = false;  // a constructor's `m_x{1} {`: the body follows a brace init
    std::string last_name;  // of the outermost function head seen last
    int line = 1;
    int in_function = 0;
    for (const char c : s) {
        if (c == '\n') ++line;
        if (c == '{') {
            Opens what = Opens::function;
            std::string name;
            if (in_function == 0) {
                const bool empty = head.find_first_not_of(" \t\n") == std::string::npos;
                what = empty && after_function_block ? Opens::function : classify(head);
                if (what == Opens::function && !empty) last_name = name_of(head);
                if (what == Opens::function) name = last_name;
                if (what == Opens::scope && !(name = class_name_of(head)).empty()) {
                    if (!classes.empty()) name = classes.back() + "::" + name;
                    classes.push_back(name);
                }
            }
            stack.push_back({what, line, name});
            if (what == Opens::function) ++in_function;
            head.clear();
            after_function_block = false;
        } else if (c == '}') {
            if (stack.empty()) continue;
            const Open o = stack.back();
            stack.pop_back();
            const int lines = line - o.line - 1;
            if (o.what == Opens::function) {
                --in_function;
                if (in_function == 0) out.functions.push_back({o.line, lines, o.name});
            } else if (o.what == Opens::scope && !o.name.empty()) {
                out.classes.push_back({o.line, lines, o.name});
                classes.pop_back();
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

// The function bodies of `source` whose lines between the braces exceed max_lines.
inline std::vector<Body> long_bodies(const std::string& source, int max_lines) {
    std::vector<Body> out;
    for (const Body& b : scan(source).functions)
        if (b.lines > max_lines) out.push_back(b);
    return out;
}

inline std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace relab::source_scan
