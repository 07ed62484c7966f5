#include "cli/docs_check.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "report/markdown_text.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"

namespace relab {

namespace fs = std::filesystem;

namespace docs_lint {


std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        lines.push_back(line);
    }
    return lines;
}

struct CodeSpan {
    size_t begin, end;  // the span with its backticks, [begin, end)
    std::string text;
};

// The line's inline code spans (a run of N backticks up to the next run of exactly N).
std::vector<CodeSpan> code_spans(const std::string& line) {
    std::vector<CodeSpan> out;
    size_t i = 0;
    while ((i = line.find('`', i)) != std::string::npos) {
        size_t n = 0;
        while (i + n < line.size() && line[i + n] == '`') ++n;
        size_t j = i + n;
        size_t close = std::string::npos;
        while ((j = line.find('`', j)) != std::string::npos) {
            size_t m = 0;
            while (j + m < line.size() && line[j + m] == '`') ++m;
            if (m == n) {
                close = j;
                break;
            }
            j += m;
        }
        if (close == std::string::npos) break;
        std::string text = line.substr(i + n, close - i - n);
        if (text.size() >= 2 && text.front() == ' ' && text.back() == ' ') text = text.substr(1, text.size() - 2);
        out.push_back({i, close + n, text});
        i = close + n;
    }
    return out;
}

// The line with its code spans blanked, so a link or a heading mark inside code is not read.
std::string without_code(const std::string& line) {
    std::string out = line;
    for (const auto& s : code_spans(line)) std::fill(out.begin() + s.begin, out.begin() + s.end, ' ');
    return out;
}

// One Markdown file as the checks read it: prose lines (code spans kept), fenced code lines with
// their line numbers, and the anchors its headings make.
struct Doc {
    std::vector<std::pair<int, std::string>> prose;
    std::vector<std::pair<int, std::string>> code;  // fenced lines, a trailing "\" joining the next
    std::set<std::string> anchors;
};

bool fence_line(const std::string& line, std::string& fence) {
    static const std::regex re(R"(^ {0,3}(`{3,}|~{3,}).*$)");
    std::smatch m;
    if (!std::regex_match(line, m, re)) return false;
    fence = m[1].str();
    return true;
}

void add_heading_anchors(const std::string& line, const std::string& previous, Slugger& slugger, Doc& d) {
    static const std::regex atx(R"(^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$)");
    static const std::regex setext(R"(^ {0,3}(=+|-+)\s*$)");
    static const std::regex html_id(R"re((?:id|name)="([^"]+)")re");
    std::smatch m;
    if (std::regex_match(line, m, atx)) {
        d.anchors.insert(slugger.add(m[1].str()));
    } else if (std::regex_match(line, setext) && !previous.empty() &&
               std::string("|#>-*+").find(previous.front()) == std::string::npos) {
        d.anchors.insert(slugger.add(previous));
    }
    const std::string prose = without_code(line);
    for (std::sregex_iterator it(prose.begin(), prose.end(), html_id), end; it != end; ++it)
        d.anchors.insert((*it)[1].str());
}

Doc parse_doc(const std::string& text) {
    Doc d;
    Slugger slugger;
    std::string open;  // the fence of the code block we are in
    std::string previous;
    const std::vector<std::string> lines = split_lines(text);
    for (size_t i = 0; i < lines.size(); ++i) {
        const std::string& line = lines[i];
        const int n = static_cast<int>(i + 1);
        std::string fence;
        if (fence_line(line, fence) && (open.empty() || (fence[0] == open[0] && fence.size() >= open.size()))) {
            open = open.empty() ? fence : "";
            previous.clear();
            continue;
        }
        if (!open.empty()) {
            if (!d.code.empty() && !d.code.back().second.empty() && d.code.back().second.back() == '\\')
                d.code.back().second = d.code.back().second.substr(0, d.code.back().second.size() - 1) + " " + line;
            else
                d.code.emplace_back(n, line);
            continue;
        }
        d.prose.emplace_back(n, line);
        add_heading_anchors(line, previous, slugger, d);
        previous = line;
    }
    return d;
}

std::string percent_decoded(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
            std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
            out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

// The link targets of a prose line: inline links and images, reference definitions, HTML href/src.
std::vector<std::string> link_targets(const std::string& line) {
    static const std::regex inline_link(R"re(\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\))re");
    static const std::regex definition(R"(^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?)");
    static const std::regex html(R"re((?:href|src)="([^"]*)")re");
    const std::string prose = without_code(line);
    std::vector<std::string> out;
    for (const std::regex* re : {&inline_link, &html})
        for (std::sregex_iterator it(prose.begin(), prose.end(), *re), end; it != end; ++it) out.push_back((*it)[1].str());
    std::smatch m;
    if (std::regex_search(prose, m, definition)) out.push_back(m[1].str());
    return out;
}

class Checker {
public:
    Checker(const std::string& root, const DocsFacts& facts) : m_root(fs::path(root).lexically_normal()), m_facts(facts) {}
    void check(const std::string& file);
    void check_generated();
    std::vector<std::string> problems;

private:
    const Doc& doc(const fs::path& path);
    void problem(const std::string& file, int line, const std::string& what) {
        problems.push_back(fmt::format("{}:{}: {}", file, line, what));
    }
    void check_link(const std::string& file, int line, const std::string& target);
    void check_lab(const std::string& file, int line, const std::string& name, const std::string& where);
    void check_tables(const std::string& file, const Doc& d);
    void check_path(const std::string& file, int line, const std::string& span);
    void check_commands(const std::string& file, int line, const std::string& code);
    void check_relab(const std::string& file, int line, const std::vector<std::string>& args);
    void check_options(const std::string& file, int line, const CliCommandSpec& cmd,
                       const std::vector<std::string>& args, size_t from, std::vector<std::string>& positionals);
    void check_run_labs(const std::string& file, int line, const std::vector<std::string>& args);

    fs::path m_root;
    const DocsFacts& m_facts;
    std::map<std::string, Doc> m_docs;
};

const Doc& Checker::doc(const fs::path& path) {
    const std::string key = path.string();
    auto it = m_docs.find(key);
    if (it == m_docs.end()) it = m_docs.emplace(key, parse_doc(slurp(path))).first;
    return it->second;
}

void Checker::check_link(const std::string& file, int line, const std::string& raw) {
    static const std::regex scheme(R"(^[A-Za-z][A-Za-z0-9+.-]*:)");
    if (raw.empty() || std::regex_search(raw, scheme) || raw.rfind("//", 0) == 0) return;
    const std::string target = percent_decoded(raw);
    const size_t hash = target.find('#');
    const std::string path_part = target.substr(0, hash);
    const std::string anchor = hash == std::string::npos ? "" : target.substr(hash + 1);
    const fs::path here = (m_root / file).parent_path();
    const fs::path resolved = path_part.empty() ? m_root / file : (here / path_part).lexically_normal();
    const std::string rel = resolved.lexically_relative(m_root).string();
    if (rel.empty() || rel.rfind("..", 0) == 0) {
        problem(file, line, fmt::format("link {} points outside the repository; link a file in it", raw));
        return;
    }
    if (!fs::exists(resolved)) {
        problem(file, line, fmt::format("broken link {}: {} does not exist", raw, rel));
        return;
    }
    if (anchor.empty()) return;
    if (resolved.extension() != ".md" || !fs::is_regular_file(resolved)) {
        problem(file, line, fmt::format("link {}: #{} names a heading, but {} is not a Markdown file", raw, anchor, rel));
        return;
    }
    if (!doc(resolved).anchors.count(anchor))
        problem(file, line, fmt::format("broken link {}: {} has no heading with the anchor #{}", raw, rel, anchor));
}

void Checker::check_lab(const std::string& file, int line, const std::string& name, const std::string& where) {
    if (m_facts.lab_names.count(name)) return;
    problem(file, line, fmt::format("{} names `{}`, which is no lab id, part, output or group; `relab list` shows "
                                    "them (docs/labs.md)", where, name));
}

// A code span shaped like a path of the repository (`fault/faults.cpp`, `harness/tests/real/`,
// `scenarios/schema.json`) must name one that exists: a source path is relative to harness/src/ when
// its first folder is not at the root. Paths relab writes when it runs are not in the repository.
void Checker::check_path(const std::string& file, int line, const std::string& span) {
    static const std::regex shaped(R"(^[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+/?$)");
    static const std::regex source(R"(\.(?:h|cpp|cmake|mjs|sh|json)$)");
    if (!std::regex_match(span, shaped)) return;
    for (const char* generated : {"reports/out", "reports/load", "reports/soak", "reports/examples", "build", "tmp/"})
        if (span.rfind(generated, 0) == 0) return;
    const std::string first = span.substr(0, span.find('/'));
    if (std::any_of(first.begin(), first.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)); }))
        return;  // a placeholder: OUT_DIR/reference.json
    fs::path where;
    if (fs::exists(m_root / first))
        where = m_root / span;
    else if (std::regex_search(span, source))
        where = m_root / "harness" / "src" / span;
    else
        return;  // a repository elsewhere (redis/redis), a URL's path
    if (!fs::exists(where))
        problem(file, line, fmt::format("`{}` names {}, which does not exist; name the file as it is now", span,
                                        where.lexically_relative(m_root).string()));
}

bool lab_shaped(const std::string& token) {
    static const std::regex re(R"(^(?:0[0-9][a-z](?:-[a-z0-9]+)+|(?:idem|load|soak)-[a-z0-9]+(?:-[a-z0-9]+)*)$)");
    return std::regex_match(token, re);
}

std::vector<std::string> table_cells(const std::string& line) {
    const std::string& row = line;
    // A "\|" inside a cell, or a "|" inside code, is not a boundary.
    std::vector<std::string> cells;
    std::string cell;
    bool in_code = false;
    for (size_t i = 0; i < row.size(); ++i) {
        if (row[i] == '`') in_code = !in_code;
        if (row[i] == '\\' && i + 1 < row.size() && row[i + 1] == '|') {
            cell += '|';
            ++i;
        } else if (row[i] == '|' && !in_code) {
            cells.push_back(cell);
            cell.clear();
        } else {
            cell += row[i];
        }
    }
    cells.push_back(cell);
    if (!cells.empty() && cells.front().find_first_not_of(" \t") == std::string::npos) cells.erase(cells.begin());
    if (!cells.empty() && cells.back().find_first_not_of(" \t") == std::string::npos) cells.pop_back();
    return cells;
}

std::string header_word(std::string cell) {
    cell.erase(std::remove_if(cell.begin(), cell.end(), [](char c) { return c == '*' || c == '`' || c == ' '; }),
               cell.end());
    std::transform(cell.begin(), cell.end(), cell.begin(), [](unsigned char c) { return std::tolower(c); });
    return cell;
}

// A table whose column is headed id, part(s) or group(s): each code span in it is a lab name. (A
// "lab(s)" column often says what the labs do, in commands and settings: ids there are caught by
// their shape.)
void Checker::check_tables(const std::string& file, const Doc& d) {
    static const std::set<std::string> named = {"id", "part", "parts", "group", "groups"};
    static const std::regex separator(R"(^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$)");
    std::vector<bool> columns;
    for (size_t i = 0; i < d.prose.size(); ++i) {
        const std::string& line = d.prose[i].second;
        if (line.find('|') == std::string::npos) {
            columns.clear();
            continue;
        }
        if (i + 1 < d.prose.size() && std::regex_match(d.prose[i + 1].second, separator) && columns.empty()) {
            for (const auto& c : table_cells(line)) columns.push_back(named.count(header_word(c)) > 0);
            ++i;
            continue;
        }
        const std::vector<std::string> cells = table_cells(line);
        for (size_t c = 0; c < cells.size() && c < columns.size(); ++c)
            if (columns[c])
                for (const auto& span : code_spans(cells[c])) check_lab(file, d.prose[i].first, span.text, "a table");
    }
}

// Shell words of a command line, quotes removed; stops at a pipe, redirection, separator or comment.
std::vector<std::string> shell_words(const std::string& text) {
    std::vector<std::string> words;
    std::istringstream in(text);
    for (std::string w; in >> w;) {
        if (w == "|" || w == "||" || w == "&&" || w == ";" || w[0] == '>' || w[0] == '#' || w.rfind("2>", 0) == 0 ||
            w.rfind("1>", 0) == 0)
            break;
        const bool ends = w.back() == ';' || w.back() == ')';
        if (ends) w.pop_back();
        w.erase(std::remove_if(w.begin(), w.end(), [](char c) { return c == '\'' || c == '"'; }), w.end());
        if (!w.empty()) words.push_back(w);
        if (ends) break;
    }
    return words;
}

// A word that stands for a value the reader supplies: ID, <id>, [--seed N], FILE.json, …
bool placeholder(const std::string& w) {
    if (w.find_first_of("<>[]{}$*|") != std::string::npos || w.find("…") != std::string::npos ||
        w.find("...") != std::string::npos)
        return true;
    return std::none_of(w.begin(), w.end(), [](unsigned char c) { return std::islower(c); });
}

const CliCommandSpec* find_command(const std::vector<CliCommandSpec>& cli, const std::string& name) {
    for (const auto& c : cli)
        if (c.name == name) return &c;
    return nullptr;
}

void Checker::check_options(const std::string& file, int line, const CliCommandSpec& cmd,
                            const std::vector<std::string>& args, size_t from, std::vector<std::string>& positionals) {
    const std::string who = cmd.name.empty() ? "relab" : "relab " + cmd.name;
    for (size_t i = from; i < args.size(); ++i) {
        std::string a = args[i];
        while (!a.empty() && (a.front() == '[' || a.front() == '(')) a.erase(a.begin());
        while (!a.empty() && (a.back() == ']' || a.back() == ')')) a.pop_back();
        if (a.size() < 2 || a[0] != '-' || a == "--") {
            if (!a.empty()) positionals.push_back(a);
            continue;
        }
        const std::string name = a.substr(0, a.find('='));
        const CliOptionSpec* opt = cmd.option(name);
        if (!opt) {
            problem(file, line, fmt::format("{} has no option {}; `{} --help` lists them", who, name, who));
            continue;
        }
        if (opt && opt->takes_value && a.find('=') == std::string::npos) ++i;
    }
}

void Checker::check_relab(const std::string& file, int line, const std::vector<std::string>& args) {
    const CliCommandSpec* app = find_command(m_facts.cli, "");
    if (args.empty() || !app) return;
    std::vector<std::string> positionals;
    if (args[0][0] == '-') {
        check_options(file, line, *app, args, 0, positionals);
        return;
    }
    const CliCommandSpec* cmd = find_command(m_facts.cli, args[0]);
    if (!cmd) {
        if (!placeholder(args[0]))
            problem(file, line, fmt::format("relab has no subcommand {}; `relab --help` lists them", args[0]));
        return;
    }
    check_options(file, line, *cmd, args, 1, positionals);
    if (cmd->name != "run" && cmd->name != "bench") return;
    for (size_t i = 0; i < positionals.size(); ++i) {
        const std::string& p = positionals[i];
        if (cmd->name == "bench" && i == 0 && (p == "all" || p == "sim" || p == "redis" || p == "scale")) continue;
        if (placeholder(p) || p.find('/') != std::string::npos || p.find(".json") != std::string::npos) continue;
        check_lab(file, line, p, "relab " + cmd->name);
    }
}

// ./run_labs.sh [test CTEST_ARGS | load|soak RUN_OPTIONS | LABS AND RUN_OPTIONS]
void Checker::check_run_labs(const std::string& file, int line, const std::vector<std::string>& args) {
    if (args.empty() || args[0] == "test") return;
    std::vector<std::string> as_run = {"run"};
    as_run.insert(as_run.end(), args.begin(), args.end());
    check_relab(file, line, as_run);
}

// The command part of a code line: a shell comment ("# ..." after a blank, or a whole line) is prose.
std::string without_comment(const std::string& code) {
    const size_t start = code.find_first_not_of(" \t");
    if (start == std::string::npos || code[start] == '#') return "";
    const size_t hash = code.find(" #");
    return hash == std::string::npos ? code : code.substr(0, hash);
}

void Checker::check_commands(const std::string& file, int line, const std::string& line_text) {
    const std::string code = without_comment(line_text);
    static const std::regex relab(R"((?:^|[\s(;&|])(?:[\w.-]*/)*relab(?=\s|$))");
    static const std::regex run_labs(R"((?:^|[\s(;&|])(?:\./)?run_labs\.sh(?=\s|$))");
    for (const auto& [re, is_relab] : {std::pair{&relab, true}, std::pair{&run_labs, false}})
        for (std::sregex_iterator it(code.begin(), code.end(), *re), end; it != end; ++it) {
            const std::vector<std::string> args = shell_words(code.substr(it->position() + it->length()));
            if (is_relab)
                check_relab(file, line, args);
            else
                check_run_labs(file, line, args);
        }
}

void Checker::check(const std::string& file) {
    const fs::path path = m_root / file;
    const Doc& d = doc(path);
    for (const auto& [n, line] : d.prose) {
        for (const auto& target : link_targets(line)) check_link(file, n, target);
        for (const auto& span : code_spans(line)) {
            if (lab_shaped(span.text)) check_lab(file, n, span.text, "a code span");
            check_path(file, n, span.text);
            check_commands(file, n, span.text);
        }
    }
    for (const auto& [n, line] : d.code) check_commands(file, n, line);
    check_tables(file, d);
}

void Checker::check_generated() {
    for (const auto& g : m_facts.generated) {
        const fs::path path = m_root / g.file;
        if (!fs::is_regular_file(path)) {
            problem(g.file, 1, fmt::format("missing; generate it with `{}`", g.command));
            continue;
        }
        const std::vector<std::string> have = split_lines(slurp(path)), want = split_lines(g.text);
        size_t i = 0;
        while (i < have.size() && i < want.size() && have[i] == want[i]) ++i;
        if (i == have.size() && i == want.size() && slurp(path) == g.text) continue;
        problem(g.file, static_cast<int>(i + 1),
                fmt::format("stale: it differs from what its generator prints now (from this line on); "
                            "regenerate it with `{}` and commit it",
                            g.command));
    }
}

}  // namespace docs_lint


std::vector<std::string> check_docs(const std::string& root, const std::vector<std::string>& docs,
                                    const DocsFacts& facts) {
    docs_lint::Checker c(root, facts);
    for (const auto& f : docs) c.check(f);
    c.check_generated();
    return c.problems;
}

std::vector<std::string> doc_files(const std::string& root) {
    std::vector<std::string> out;
    if (fs::is_regular_file(fs::path(root) / "README.md")) out.push_back("README.md");
    std::vector<std::string> docs;
    if (fs::is_directory(fs::path(root) / "docs"))
        for (const auto& e : fs::directory_iterator(fs::path(root) / "docs"))
            if (e.is_regular_file() && e.path().extension() == ".md") docs.push_back("docs/" + e.path().filename().string());
    std::sort(docs.begin(), docs.end());
    out.insert(out.end(), docs.begin(), docs.end());
    return out;
}

DocsFacts repo_docs_facts(const std::string& root) {
    DocsFacts f;
    const std::string scenarios = (fs::path(root) / "scenarios").string();
    std::vector<std::string> dirs = {scenarios};
    for (const auto& d : named_only_scenario_dirs(scenarios)) dirs.push_back(d);
    for (const auto& dir : dirs)
        for (const auto& s : load_scenario_dir(dir))
            for (const std::string& name : {s.id, s.part, s.output, s.group})
                if (!name.empty()) f.lab_names.insert(name);
    f.lab_names.insert("all");  // relab run all: every lab a run without names runs
    f.cli = cli_spec();
    f.generated.push_back({"docs/labs.md", labs_markdown(scenarios, default_reference_dir(scenarios)),
                           "./build/relab list --format markdown > docs/labs.md"});
    f.generated.push_back({"scenarios/schema.json", scenario_schema_json(scenarios),
                           "./build/relab schema --format json --write"});
    f.generated.push_back({"docs/scenarios.md", schema_reference_markdown(scenarios),
                           "./build/relab schema --format markdown > docs/scenarios.md"});
    return f;
}

}  // namespace relab
