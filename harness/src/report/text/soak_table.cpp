#include "report/text/soak_table.h"

#include <algorithm>

#include <fmt/format.h>

#include "report/lab_summary.h"
#include "util/numbers.h"

namespace relab {

namespace {

std::string soak_seconds(int64_t ms) { return fmt::format("{:.1f} s", static_cast<double>(ms) / 1000.0); }

// pending / undelivered as read from the group, or why there is no figure.
std::string soak_group_figure(int64_t n) { return n >= 0 ? with_thousands(n) : std::string("? (group not read)"); }

}  // namespace

std::vector<SoakRow> soak_rows(const std::vector<LabResult>& labs) {
    std::vector<SoakRow> rows;
    for (const auto& lab : labs) {
        const StreamLab* flow = lab.scenario.flow_if();
        if (!flow || !flow->soak.enabled || lab.skipped || lab.trials.empty()) continue;
        const TrialOutcome& t = lab.trials.front();
        SoakRow r;
        r.id = lab.scenario.id;
        if (!lab.scenario.mutant.empty()) r.id += "/" + lab.scenario.mutant;
        r.title = lab.scenario.title;
        r.verdict = verdict_text(verdict_of(lab));
        for (size_t i = 0; i < lab.failures.size() && i < 3; ++i) r.failures.push_back(lab.failures[i]);
        r.orders = static_cast<int64_t>(flow->orders.size());
        r.wrong_orders = static_cast<int64_t>(t.wrong_orders.size());
        r.accounting = t.accounting;
        r.soak = t.soak;
        r.load = t.load;
        r.elapsed_s = lab.elapsed_s;
        for (const auto& [actor, kb] : t.role_peak_rss_kb) r.role_peak_rss_kb = std::max(r.role_peak_rss_kb, kb);
        rows.push_back(std::move(r));
    }
    return rows;
}

std::string soak_accounting_text(const Accounting& a, const SoakStats& k, int64_t wrong_orders, int64_t orders) {
    const int64_t processed = a.processed_once + a.duplicated;
    return fmt::format("{} events sent · {} processed ({} once, {} twice or more; {} with every write refused) · "
                       "{} pending in the group · {} never delivered · {} lost · {} redelivered after ack · {} "
                       "unexpected · {} wrong orders of {}",
                       with_thousands(a.published), with_thousands(processed), with_thousands(a.processed_once),
                       with_thousands(a.duplicated), with_thousands(a.unapplied), soak_group_figure(k.pending),
                       soak_group_figure(k.undelivered), with_thousands(a.lost), with_thousands(a.redelivered),
                       with_thousands(a.unexpected), with_thousands(wrong_orders), with_thousands(orders));
}

std::string soak_faults_text(const SoakStats& k) {
    std::string end = !k.measured         ? std::string("the group was not read at the end")
                      : k.deadline_passed ? fmt::format("the deadline ({}) passed before the group drained; read at {}",
                                                        soak_seconds(k.deadline_ms), soak_seconds(k.end_ms))
                                          : fmt::format("ended at {} (deadline {})", soak_seconds(k.end_ms),
                                                        soak_seconds(k.deadline_ms));
    return fmt::format("{} kills ({} restarts, {} faults failed) · {} entries delivered again after a kill · {}",
                       with_thousands(k.kills), with_thousands(k.restarts), with_thousands(k.fault_failures),
                       with_thousands(k.recovered), end);
}

void write_soak_table(const std::vector<SoakRow>& rows, std::ostream& out) {
    out << "Soak, per lab (trial 1; every published entry processed, pending in the group, never delivered or "
           "lost):\n";
    for (const auto& r : rows) {
        out << fmt::format("  {}: {} ({:.1f} s", r.id, r.verdict, r.elapsed_s);
        if (r.role_peak_rss_kb > 0) out << fmt::format(", largest role {:.1f} MB", r.role_peak_rss_kb / 1024.0);
        out << ")\n";
        out << "    " << soak_accounting_text(r.accounting, r.soak, r.wrong_orders, r.orders) << '\n';
        out << "    " << soak_faults_text(r.soak) << '\n';
        if (r.load.events > 0)
            out << fmt::format("    {:.0f} events/s applied; XADD → applied p50 {:.1f} ms, p99 {:.1f} ms, max {:.1f} ms\n",
                               r.load.events_per_s, r.load.latency_p50_us / 1000.0, r.load.latency_p99_us / 1000.0,
                               r.load.latency_max_us / 1000.0);
        for (const auto& f : r.failures) out << "    broken: " << f << '\n';
    }
}

nlohmann::json soak_table_json(const std::vector<SoakRow>& rows) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows) {
        const Accounting& a = r.accounting;
        // The soak figures described as the table's columns (tabled()), as the JSON report writes
        // them, beside the row's own columns.
        nlohmann::json row = desc::write_table_row(r.soak);
        row.update({{"id", r.id},
                    {"verdict", r.verdict},
                    {"failures", r.failures},
                    {"orders", r.orders},
                    {"events_sent", a.published},
                    {"processed", a.processed_once + a.duplicated},
                    {"processed_once", a.processed_once},
                    {"duplicated", a.duplicated},
                    {"unapplied", a.unapplied},
                    {"lost", a.lost},
                    {"redelivered_after_ack", a.redelivered},
                    {"unexpected", a.unexpected},
                    {"wrong_orders", r.wrong_orders},
                    {"events_per_s", r.load.events_per_s},
                    {"latency_p99_us", r.load.latency_p99_us},
                    {"elapsed_s", r.elapsed_s},
                    {"role_peak_rss_kb", r.role_peak_rss_kb}});
        out.push_back(std::move(row));
    }
    return out;
}

}  // namespace relab
