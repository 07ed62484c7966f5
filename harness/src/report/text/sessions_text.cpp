// The scripted sessions labs' text section: each case as psql prints its sessions (or redis-cli, a
// Redis case), the cases with a wrong final row, and the verdict.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "report/text/redis_transcript.h"
#include "report/text/text_sections.h"

namespace relab {

namespace {

// Code points, so Vietnamese text lines up like ASCII (combining marks aside).
size_t display_width(const std::string& s) {
    return static_cast<size_t>(
        std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

bool looks_numeric(const std::string& s) {
    if (s.empty()) return false;
    size_t i = s[0] == '-' ? 1 : 0;
    if (i == s.size()) return false;
    bool dot = false;
    for (; i < s.size(); ++i) {
        if (s[i] == '.' && !dot)
            dot = true;
        else if (s[i] < '0' || s[i] > '9')
            return false;
    }
    return true;
}

void rstrip(std::string& s) {
    while (!s.empty() && s.back() == ' ') s.pop_back();
}

// Rows as psql prints them: header centred, numbers right-aligned, text left-aligned, no trailing
// blanks. Without column names only the rows are printed.
void print_psql_table(std::ostream& out, const std::vector<std::string>& columns,
                      const std::vector<std::vector<std::string>>& rows) {
    size_t ncols = columns.size();
    for (const auto& row : rows) ncols = std::max(ncols, row.size());
    if (ncols == 0) return;
    std::vector<size_t> width(ncols, 0);
    std::vector<bool> numeric(ncols, !rows.empty());
    for (size_t c = 0; c < columns.size(); ++c) width[c] = display_width(columns[c]);
    for (const auto& row : rows)
        for (size_t c = 0; c < ncols; ++c) {
            const std::string cell = c < row.size() ? row[c] : std::string{};
            width[c] = std::max(width[c], display_width(cell));
            if (!looks_numeric(cell)) numeric[c] = false;
        }

    auto print_line = [&](auto&& cell_text) {
        std::string line = " ";
        for (size_t c = 0; c < ncols; ++c) {
            if (c > 0) line += " | ";
            line += cell_text(c);
        }
        rstrip(line);
        out << line << '\n';
    };
    if (!columns.empty()) {
        print_line([&](size_t c) {
            const std::string name = c < columns.size() ? columns[c] : std::string{};
            const size_t pad = width[c] - display_width(name);
            return std::string(pad / 2, ' ') + name + std::string(pad - pad / 2, ' ');
        });
        std::string rule;
        for (size_t c = 0; c < ncols; ++c) {
            if (c > 0) rule += '+';
            rule += std::string(width[c] + 2, '-');
        }
        out << rule << '\n';
    }
    for (const auto& row : rows)
        print_line([&](size_t c) {
            const std::string cell = c < row.size() ? row[c] : std::string{};
            const std::string pad(width[c] - display_width(cell), ' ');
            return numeric[c] ? pad + cell : cell + pad;
        });
}

void print_step(const StepOutcome& step, const SessionStep* spec, std::ostream& out) {
    // As psql echoes a statement typed at its prompt.
    out << step.sql << (!step.sql.empty() && step.sql.back() == ';' ? "" : ";") << '\n';
    if (!step.error.empty() || !step.sqlstate.empty())
        out << "ERROR:  " << step.error << '\n';
    else if (!step.columns.empty())
        print_psql_table(out, step.columns, step.rows);
    else if (!step.tag.empty())
        out << step.tag << '\n';
    if (spec && (spec->expect_wait_min_ms || spec->expect_wait_max_ms))
        out << fmt::format("Time: {:.3f} ms", step.duration_us / 1000.0) << '\n';
    if (!step.ok) out << "  ✕ " << step.failure << '\n';
}

void write_case_text(const TextContext& tc, const CaseOutcome& c, const SessionCase* spec, std::ostream& out) {
    if (spec && is_redis_case(*spec)) {  // redis-cli transcripts, in time order
        print_redis_case(c, *spec, tc.opts.lang, out);
        return;
    }
    out << "--- " << pick(tc.opts.lang, c.title, c.title_vi) << '\n';

    // Sessions in the scenario's order (only the transcript ones if it names any); without a
    // spec, in the order they first ran.
    std::vector<std::string> names;
    if (spec) {
        for (const auto& session : spec->sessions)
            if (spec->transcript_sessions.empty() ||
                std::find(spec->transcript_sessions.begin(), spec->transcript_sessions.end(), session.name) !=
                    spec->transcript_sessions.end())
                names.push_back(session.name);
    } else {
        for (const auto& step : c.steps)
            if (std::find(names.begin(), names.end(), step.session) == names.end()) names.push_back(step.session);
    }

    // A case with one session is a plain psql transcript, as in the article's "CAS by hand".
    const bool headers = (spec ? spec->sessions.size() : names.size()) > 1;
    std::set<std::string> shown_failures;
    for (const auto& name : names) {
        if (headers) out << "----- " << name << " -----\n";
        const SessionSpec* session_spec = nullptr;
        if (spec)
            for (const auto& ss : spec->sessions)
                if (ss.name == name) session_spec = &ss;
        size_t index = 0;
        for (const auto& step : c.steps) {
            if (step.session != name) continue;
            const SessionStep* step_spec =
                session_spec && index < session_spec->steps.size() ? &session_spec->steps[index] : nullptr;
            ++index;
            print_step(step, step_spec, out);
            if (!step.ok) shown_failures.insert(step.failure);
        }
    }

    print_psql_table(out, c.columns, c.final_rows);
    for (const auto& failure : c.failures)
        if (!shown_failures.count(failure)) out << "  ✕ " << failure << '\n';
}

}  // namespace

void write_sessions_text(const TextContext& tc, const LabResult& lab, std::ostream& out) {
    const Scenario& s = lab.scenario;
    for (size_t i = 0; i < lab.cases.size(); ++i) {
        const SessionCase* spec = i < s.sessions().cases.size() ? &s.sessions().cases[i] : nullptr;
        write_case_text(tc, lab.cases[i], spec, out);
    }
    // Redis transcripts have no final rows; their steps' expectations make the verdict.
    const bool redis_only = !s.sessions().cases.empty() && std::all_of(s.sessions().cases.begin(), s.sessions().cases.end(), [](const SessionCase& c) {
        return is_redis_case(c) && c.final_sql.empty();
    });
    if (!redis_only) out << "  " << fmt::format(fmt::runtime(tc.w.wrong_cases), lab.wrong, lab.total) << '\n';
    write_verdict_text(tc, lab, out);
}

}  // namespace relab
