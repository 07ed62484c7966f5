#include "report/idem_facts.h"
#include "scenario/lab_kind.h"

#include <map>
#include <regex>

#include <fmt/format.h>

namespace relab {

bool is_idem_workload(const LabResult& lab) { return !lab.skipped && sends_requests(lab.scenario.kind); }

IdemCounts idem_total(const LabResult& lab) {
    IdemCounts total;
    for (const auto& t : lab.trials) total.add(t.idem.counts);
    return total;
}

std::vector<IdemCountCell> idem_count_cells(const IdemCounts& c) {
    std::vector<IdemCountCell> cells = {{"orders", c.orders, false},      {"duplicates", c.duplicates, c.duplicates > 0},
                                        {"201", c.created, false},        {"replays", c.replays, false},
                                        {"409", c.conflicts, false},      {"422", c.mismatches, false},
                                        {"layer 4", c.layer4, false},     {"5xx", c.errors, false},
                                        {"leaks", c.leaks, c.leaks > 0},  {"sends", c.sends, false}};
    if (c.unanswered > 0) cells.push_back({"unanswered", c.unanswered, false});
    if (c.vanished > 0) cells.push_back({"vanished", c.vanished, true});
    return cells;
}

std::string idem_counts_brief(const IdemCounts& c) {
    std::string text = fmt::format("{} order{}, {} duplicate{}", c.orders, c.orders == 1 ? "" : "s", c.duplicates,
                                   c.duplicates == 1 ? "" : "s");
    if (c.leaks > 0) text += fmt::format(", {} leak{}", c.leaks, c.leaks == 1 ? "" : "s");
    return text;
}

std::vector<const SessionStep*> step_specs(const CaseOutcome& c, const SessionCase& spec) {
    std::vector<const SessionStep*> out;
    std::map<std::string, size_t> next_index;
    for (const auto& step : c.steps) {
        const SessionStep* found = nullptr;
        for (const auto& ss : spec.sessions)
            if (ss.name == step.session) {
                const size_t i = next_index[ss.name]++;
                if (i < ss.steps.size()) found = &ss.steps[i];
                break;
            }
        out.push_back(found);
    }
    return out;
}

std::string reply_text(const StepOutcome& step) {
    if (step.error.empty()) return step.tag;
    return step.redis ? "(error) " + step.error : "ERROR: " + step.error;
}

std::string expected_reply_text(const SessionStep& step) {
    if (step.redis) {
        const RedisStep& r = *step.redis;
        if (r.expect_error) return "(error) " + *r.expect_error + "…";
        if (r.expect_reply) return *r.expect_reply;
        if (r.expect_min && r.expect_max) return fmt::format("(integer) {}…{}", *r.expect_min, *r.expect_max);
        if (r.expect_min) return fmt::format("(integer) ≥ {}", *r.expect_min);
        if (r.expect_max) return fmt::format("(integer) ≤ {}", *r.expect_max);
        return {};
    }
    std::string text;
    if (step.expect_sqlstate)
        text = "ERROR " + *step.expect_sqlstate;
    else if (step.expect)
        text = *step.expect;
    if (step.expect_wait_min_ms || step.expect_wait_max_ms) {
        if (!text.empty()) text += ", ";
        text += fmt::format("after {}–{} ms", step.expect_wait_min_ms.value_or(0),
                            step.expect_wait_max_ms ? std::to_string(*step.expect_wait_max_ms) : std::string("…"));
    }
    return text;
}

std::string decimal_bytes(double bytes) {
    const char* units[] = {"B", "kB", "MB", "GB", "TB"};
    int u = 0;
    while (bytes >= 1000 && u < 4) {
        bytes /= 1000;
        ++u;
    }
    return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.1f} {}", bytes, units[u]);
}

std::optional<std::string> projected_total(const StepOutcome& step, const MemoryProjection& p) {
    static const std::regex k_integer{R"(^\(integer\) (-?[0-9]+)$)"};
    std::smatch m;
    if (!std::regex_match(step.tag, m, k_integer)) return std::nullopt;
    return decimal_bytes(std::stod(m[1].str()) * static_cast<double>(p.keys));
}

std::vector<Measurement> documented_figures(const LabResult& lab, bool with_undocumented) {
    std::vector<Measurement> out;
    for (const auto& m : lab.measurements)
        if (with_undocumented || !m.documented.empty()) out.push_back(m);
    if (!counts_cases(lab.scenario.kind)) return out;  // only a sessions lab's steps carry figures
    const auto& specs = lab.scenario.sessions().cases;
    for (size_t i = 0; i < lab.cases.size() && i < specs.size(); ++i) {
        const CaseOutcome& c = lab.cases[i];
        const std::vector<const SessionStep*> per_step = step_specs(c, specs[i]);
        for (size_t k = 0; k < c.steps.size(); ++k) {
            const StepOutcome& step = c.steps[k];
            if (!step.redis || !per_step[k] || !per_step[k]->redis) continue;
            const RedisStep& rs = *per_step[k]->redis;
            if (!rs.documented.empty() && !rs.note.empty())
                out.push_back(Measurement{step.sql, reply_text(step), rs.documented, rs.note});
            if (!rs.project) continue;
            const auto total = projected_total(step, *rs.project);
            if (!total) continue;
            out.push_back(Measurement{fmt::format("{} × {} ({})", step.sql, with_thousands(rs.project->keys), rs.project->label),
                                      *total, rs.project->documented, ""});
        }
    }
    return out;
}

}  // namespace relab
