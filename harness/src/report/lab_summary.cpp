#include "report/lab_summary.h"
#include "report/shard_facts.h"

#include <sstream>

#include <fmt/format.h>

#include "ports/seed_text.h"
#include "report/idem_facts.h"
#include "scenario/lab_kind.h"
#include "report/reporter.h"

namespace relab {

Verdict verdict_of(const LabResult& lab) {
    if (lab.skipped) return Verdict::skipped;
    return lab.held ? Verdict::held : Verdict::broken;
}

const char* verdict_text(Verdict v) {
    switch (v) {
        case Verdict::held: return "held";
        case Verdict::broken: return "broken";
        case Verdict::skipped: return "skipped";
    }
    return "?";
}

bool is_stream_lab(const LabResult& lab) { return has_stream(lab.scenario.kind); }

Accounting accounting_total(const LabResult& lab) {
    Accounting total;
    for (const auto& t : lab.trials) total += t.accounting;
    return total;
}

LabCounts count_labs(const RunReport& run) {
    LabCounts c;
    for (const auto& lab : run.labs) {
        ++c.labs;
        switch (verdict_of(lab)) {
            case Verdict::held: ++c.held; break;
            case Verdict::broken: ++c.broken; break;
            case Verdict::skipped: ++c.skipped; break;
        }
    }
    return c;
}

std::string documented_count(const Documented& d) {
    if (!d.wrong) return {};
    return d.of ? fmt::format("{}/{}", *d.wrong, *d.of) : std::to_string(*d.wrong);
}

std::string documented_text(const Documented& d) {
    const std::string count = documented_count(d);
    std::string text = count.empty() ? d.text : d.text.empty() ? count : count + " — " + d.text;
    if (!d.relab_choice.empty()) text += " [relab's choice, not the article's: " + d.relab_choice + "]";
    return text;
}

std::string measured_text(const LabResult& lab) {
    if (lab.skipped) return {};
    if (counts_cases(lab.scenario.kind)) return fmt::format("{}/{} cases", lab.wrong, lab.total);
    return fmt::format("{}/{}", lab.wrong, lab.total);
}

std::string backend_of(const LabResult& lab) { return lab.backend.empty() ? "real" : lab.backend; }

bool is_sim(const LabResult& lab) { return lab.backend == "sim"; }

std::string lab_key(const LabResult& lab) {
    const std::string backend = backend_of(lab);
    return backend == "real" ? lab.scenario.id : lab.scenario.id + "-" + backend;
}

std::string wrong_rate_text(const LabResult& lab) {
    if (!is_sim(lab) || lab.skipped) return {};
    if (lab.replay_seed) return "replay of trial seed " + seed_text(*lab.replay_seed);
    return fmt::format("{:.1f}% (95% CI {:.1f}–{:.1f}%) over {} trials", 100 * lab.wrong_rate, 100 * lab.wrong_rate_low,
                       100 * lab.wrong_rate_high, lab.total);
}

std::string replay_command(const LabResult& lab, uint64_t seed) {
    return fmt::format("relab run {} --backend sim --replay {}", lab.scenario.id, seed_text(seed));
}

const TrialOutcome* trial_of_seed(const LabResult& lab, uint64_t seed) {
    for (const auto& t : lab.trials)
        if (t.seed == seed) return &t;
    return nullptr;
}

const OrderRow* final_row(const TrialOutcome& t, int64_t order_id) {
    for (const auto& row : t.final_rows)
        if (row.id == order_id) return &row;
    return nullptr;
}

std::string measured_cell_text(const LabResult& lab) {
    std::string text = measured_text(lab);
    if (text.empty()) return text;
    if (is_idem_workload(lab)) text += ": " + idem_counts_brief(idem_total(lab));
    if (const StreamLab* flow = lab.scenario.flow_if(); flow && flow->shard.enabled) text += "; " + shard_brief(lab);
    if (is_sim(lab) && !lab.replay_seed)
        text += fmt::format(" ({:.1f}%, 95% CI {:.1f}–{:.1f}%)", 100 * lab.wrong_rate, 100 * lab.wrong_rate_low,
                            100 * lab.wrong_rate_high);
    return text;
}

std::string shard_brief(const LabResult& lab) {
    // Orders that ended wrong, per trial (min–max), and the throughput.
    int lo = -1, hi = 0;
    for (const auto& t : lab.trials) {
        const int n = static_cast<int>(t.wrong_orders.size());
        lo = lo < 0 ? n : std::min(lo, n);
        hi = std::max(hi, n);
    }
    const size_t orders = lab.scenario.flow().orders.size();
    std::string text = lo == hi ? fmt::format("{} of {} orders wrong per trial", std::max(lo, 0), orders)
                                : fmt::format("{}–{} of {} orders wrong per trial", lo, hi, orders);
    if (lab.throughput.trials > 0) text += fmt::format(", {:.0f} jobs/s", lab.throughput.per_s);
    return text;
}

std::string expected_final(const Scenario& s) {
    if (counts_cases(s.kind)) return {};
    const StreamLab* flow = s.flow_if();
    return !flow || flow->orders.empty() ? OrderSpec{}.expected_final.describe() : flow->orders.front().expected_final.describe();
}

std::string lab_text_report(const LabResult& lab) {
    std::ostringstream out;  // the lab itself, not a copy: a simulated lab may hold thousands of trials
    write_text_lab(lab, TextOptions{}, out);
    return out.str();
}

std::string markup_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default:
                // XML 1.0 has no way to carry C0 controls other than tab, newline and return.
                if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') break;
                out += c;
        }
    }
    return out;
}

}  // namespace relab
