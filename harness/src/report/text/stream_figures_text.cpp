// The figures a stream lab prints after its verdict: the lock's release, the delivery latency, a
// generated workload's load and a soak's figures per trial, the throughput beside the article's.
#include <fmt/format.h>

#include "report/text/soak_table.h"
#include "report/text/stream_text.h"

namespace relab {

namespace {

// A generated workload's figures per trial (check/load_stats.h), the first few trials.
void write_load_text(const TextContext& tc, const LabResult& lab, std::ostream& out) {
    const Scenario& s = lab.scenario;
    const StreamLab& flow = s.flow();
    out << "  " << pick(tc.opts.lang, "load:", "tải:") << ' ' << flow.orders.size() << pick(tc.opts.lang, " orders, ", " đơn, ")
        << flow.load.arrival << (flow.load.job_cost.empty() ? "" : ", " + flow.load.job_cost);
    for (const auto& j : flow.load.slow_jobs) out << fmt::format(", #{} {} {} ms", j.order, j.type, j.ms);
    out << '\n';
    for (size_t i = 0; i < lab.trials.size() && i < 3; ++i) {
        const LoadStats& l = lab.trials[i].load;
        out << "    " << tc.w.trial << ' ' << lab.trials[i].trial << ": "
            << fmt::format(fmt::runtime(pick(tc.opts.lang,
                                             "{} events at {:.0f} events/s; XADD → applied p50 {:.1f} ms, p99 {:.1f} ms, "
                                             "max {:.1f} ms; {} consumer slot(s) {:.0f}% busy; wrong orders {}",
                                             "{} sự kiện, {:.0f} sự kiện/giây; XADD → ghi xong p50 {:.1f} ms, p99 {:.1f} ms, "
                                             "max {:.1f} ms; {} consumer/worker bận {:.0f}%; đơn sai {}")),
                           l.events, l.events_per_s, l.latency_p50_us / 1000.0, l.latency_p99_us / 1000.0,
                           l.latency_max_us / 1000.0, l.slots, l.utilisation_pct, l.wrong_orders);
        if (!lab.trials[i].role_peak_rss_kb.empty()) {
            int64_t top = 0;
            std::string who;
            for (const auto& [actor, kb] : lab.trials[i].role_peak_rss_kb)
                if (kb > top) top = kb, who = actor;
            out << fmt::format(fmt::runtime(pick(tc.opts.lang, "; peak RSS of the largest role ({}) {:.1f} MB",
                                                 "; RSS đỉnh của role lớn nhất ({}) {:.1f} MB")),
                               who, top / 1024.0);
        }
        if (l.hol_ms >= 0)
            out << fmt::format(fmt::runtime(pick(tc.opts.lang,
                                                 "; behind the slow job: {} events of other orders waited up to {} ms, {} ({}%) until it ended",
                                                 "; sau job chậm: {} sự kiện của đơn khác chờ tới {} ms, {} ({}%) chờ tới khi nó xong")),
                               l.hol_events, l.hol_ms, l.hol_blocked, hol_blocked_pct(l));
        out << '\n';
    }
}

// A soak's figures per trial (check/soak_stats.h), the first few trials: every published entry
// processed, pending in the group, never delivered or lost; the kills and what came back.
void write_soak_text(const TextContext& tc, const LabResult& lab, std::ostream& out) {
    const Scenario& s = lab.scenario;
    const StreamLab& flow = s.flow();
    out << "  " << pick(tc.opts.lang, "soak:", "soak:") << ' '
        << fmt::format(fmt::runtime(pick(tc.opts.lang,
                                         "the trial ends drained, or {:.1f} s after its last event is due",
                                         "lần chạy kết thúc khi group đã rút hết, hoặc {:.1f} giây sau sự kiện cuối")),
                       flow.soak.drain_ms / 1000.0)
        << '\n';
    for (size_t i = 0; i < lab.trials.size() && i < 3; ++i) {
        const TrialOutcome& t = lab.trials[i];
        out << "    " << tc.w.trial << ' ' << t.trial << ": "
            << soak_accounting_text(t.accounting, t.soak, static_cast<int64_t>(t.wrong_orders.size()),
                                    static_cast<int64_t>(flow.orders.size()))
            << '\n';
        out << "    " << tc.w.trial << ' ' << t.trial << ": " << soak_faults_text(t.soak) << '\n';
    }
}

}  // namespace

void write_stream_figures_text(const TextContext& tc, const LabResult& lab, std::ostream& out) {
    const Scenario& s = lab.scenario;
    const StreamLab& flow = s.flow();
    if (!lab.lock_release_method.empty()) {
        out << "  " << tc.w.lock_release << ' ' << lab.lock_release_method;
        if (lab.lock_release_method.rfind("DELEX", 0) != 0) out << ' ' << tc.w.delex_needs;
        out << '\n';
    }
    if (lab.delivery.samples > 0)
        out << "  "
            << fmt::format(fmt::runtime(tc.w.delivery), fmt::format("{:.2f}", lab.delivery.p50_us / 1000.0),
                           fmt::format("{:.2f}", lab.delivery.max_us / 1000.0), lab.delivery.samples)
            << '\n';
    if (flow.load.enabled) write_load_text(tc, lab, out);
    if (flow.soak.enabled) write_soak_text(tc, lab, out);
    if (flow.show_throughput && lab.throughput.trials > 0) {
        const ThroughputStats& tp = lab.throughput;
        out << "  "
            << fmt::format(fmt::runtime(tc.w.throughput), tp.jobs, fmt::format("{:.1f}", tp.span_ms),
                           fmt::format("{:.2f}", tp.per_s), tp.trials, fmt::format("{:.2f}", tp.per_s_min),
                           fmt::format("{:.2f}", tp.per_s_max))
            << '\n';
        if (lab.beside_throughput && lab.beside_throughput->per_s > 0)
            out << "  "
                << fmt::format(fmt::runtime(tc.w.beside), lab.beside_name,
                               fmt::format("{:.2f}", lab.beside_throughput->per_s), lab.beside_throughput->trials,
                               fmt::format("{:.2f}", tp.per_s / lab.beside_throughput->per_s))
                << '\n';
        if (s.documented.throughput) write_throughput_figure_text(tc, s.documented, out);
    }
}

}  // namespace relab
