// The checker: what a trial's history and final rows say about it, and whether a lab's
// expectation held. Pure functions of recorded data; nothing here talks to a server.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "check/record_fields.h"

#include "check/outcome.h"
#include "check/wrong_rate.h"

namespace relab {

namespace {

using nlohmann::json;

using record_fields::int_field;
using record_fields::text_field;
using record_fields::text_view;

std::string count_text(const Expectation& e) {
    Expectation count_only = e;
    count_only.every_trial = {};
    count_only.every_wrong_trial = {};
    count_only.until_wrong_max_runs = 0;
    count_only.may_appear = {};
    return count_only.describe();
}

// The lab's median pace over the arrangement's beside it, against the expectation's floor.
void check_throughput_ratio(LabResult& lab, double floor) {
    const ThroughputStats& own = lab.throughput;
    if (!lab.beside_throughput || lab.beside_throughput->per_s <= 0 || own.per_s <= 0) {
        lab.failures.push_back(fmt::format("throughput >= {} x the arrangement's beside: no throughput of {} measured",
                                           floor, own.per_s <= 0 ? "the lab" : "the arrangement beside it"));
        return;
    }
    const double ratio = own.per_s / lab.beside_throughput->per_s;
    if (ratio < floor)
        lab.failures.push_back(fmt::format("throughput >= {} x {}'s (measured {:.2f} jobs/s over {:.2f} = {:.2f})",
                                           floor, lab.beside_name, own.per_s, lab.beside_throughput->per_s, ratio));
}

void summarize_workload(LabResult& lab) {
    lab.total = static_cast<int>(lab.trials.size());
    lab.wrong = static_cast<int>(std::count_if(lab.trials.begin(), lab.trials.end(),
                                               [](const TrialOutcome& t) { return t.wrong; }));
    const Expectation& e = lab.scenario.expect;
    // A replayed seed is one trial picked for its timeline: the count is the whole run's to judge,
    // the trial's own terms are still checked.
    if (!lab.replay_seed && !e.holds(lab.wrong, lab.total))
        lab.failures.push_back(fmt::format("expected {}, measured {}/{}", count_text(e), lab.wrong, lab.total));
    for (const auto& t : lab.trials)
        for (const auto& missing : t.unmet) lab.failures.push_back(fmt::format("trial {}: {}", t.trial, missing));
    if (e.throughput_ratio_at_least && !lab.replay_seed) check_throughput_ratio(lab, *e.throughput_ratio_at_least);
}

void summarize_sessions(LabResult& lab) {
    lab.total = static_cast<int>(lab.cases.size());
    lab.wrong = static_cast<int>(std::count_if(lab.cases.begin(), lab.cases.end(),
                                               [](const CaseOutcome& c) { return c.wrong; }));
    const Expectation& e = lab.scenario.expect;
    if (!e.holds(lab.wrong, lab.total))
        lab.failures.push_back(fmt::format("expected {}, measured {}/{}", count_text(e), lab.wrong, lab.total));
    for (size_t i = 0; i < lab.cases.size(); ++i)
        for (const auto& step : lab.cases[i].steps)
            if (!step.ok)
                lab.failures.push_back(
                    fmt::format("case {}, session {}, step '{}': {}", i + 1, step.session, step.sql, step.failure));
}

// A trial is wrong when some order's final status (and amount, where stated) is not the one it should end in.
void judge_final_rows(const StreamLab& flow, TrialOutcome& t) {
    t.wrong_orders.clear();
    for (const auto& order : flow.orders) {
        const auto row = std::find_if(t.final_rows.begin(), t.final_rows.end(),
                                      [&](const OrderRow& r) { return r.id == order.id; });
        const FinalState want = order.expected_final;
        if (row == t.final_rows.end())
            t.wrong_orders.push_back(fmt::format("#{}=(no row) (expected {})", order.id, want.describe()));
        else if (!want.matches(*row))
            t.wrong_orders.push_back(
                fmt::format("#{}={} (expected {})", order.id, row_state_text(*row, want.amount.has_value()), want.describe()));
    }
    t.wrong = !t.wrong_orders.empty();
}

}  // namespace

void recheck_trial(const Scenario& s, TrialOutcome& t) {
    // A session lab's cases are not trials: they keep their verdict, as does a report's lab whose
    // orders are unknown.
    const StreamLab* flow = s.flow_if();
    if (flow && !flow->orders.empty()) judge_final_rows(*flow, t);
    if (is_idem(s.kind)) t.wrong = t.idem.counts.wrong();
    // A trial whose timeline was dropped (a long simulated run) keeps the accounting and the terms
    // checked when it ran; one that kept its history is accounted again from it.
    if (t.history.empty()) return;
    t.accounting = account(t.history, &t.stale_overwrites);
    if (wants_load_stats(s)) t.load = load_stats(s, t.history, static_cast<int64_t>(t.wrong_orders.size()));
    if (flow && flow->soak.enabled) t.soak = soak_stats(t.history);
    evaluate_trial(s, t);
}

void sort_by_time(std::vector<HistoryRecord>& history) {
    auto earlier = [](const HistoryRecord& a, const HistoryRecord& b) { return a.t_ns < b.t_ns; };
    auto first_out = std::is_sorted_until(history.begin(), history.end(), earlier);
    if (first_out == history.end()) return;
    // A simulated history is in time order but for a few records written after the instant they
    // name (a publish is recorded when the XADD returns, at the time it was sent): each of those
    // moves back into place, rather than every record through std::stable_sort's buffer.
    if (history.size() > 64) {
        std::stable_sort(first_out, history.end(), earlier);
        std::inplace_merge(history.begin(), first_out, history.end(), earlier);
        return;
    }
    for (auto it = first_out; it != history.end(); ++it) {
        // After every record not later than it: the records of one instant keep their order.
        auto to = std::upper_bound(history.begin(), it, *it, earlier);
        std::rotate(to, it, std::next(it));
    }
}

void rebase_on_start(std::vector<HistoryRecord>& history) {
    int64_t origin = 0;
    for (const auto& r : history)
        if (r.op == Op::start) origin = r.t_ns;
    for (auto& r : history) r.t_ns -= origin;
}

TrialOutcome classify_trial(const Scenario& s, int trial, uint64_t seed, std::vector<HistoryRecord> history,
                            std::vector<OrderRow> final_rows, std::vector<StreamEntry> stream) {
    TrialOutcome out;
    out.trial = trial;
    out.seed = seed;
    // Stable: records of one instant keep the order they were recorded (merged) in.
    sort_by_time(history);
    out.history = std::move(history);
    out.final_rows = std::move(final_rows);
    out.stream = std::move(stream);

    // Only a stream lab's orders have final states; an idempotency lab counts its requests instead.
    const StreamLab* flow = s.flow_if();
    if (flow) judge_final_rows(*flow, out);

    // Per order, the event whose publication was tried first: how long until it got through.
    std::map<int64_t, std::pair<EventView, int64_t>> first_try;  // order -> (its event, a view into out.history; t_ns)
    for (const auto& r : out.history) {
        if (r.op != Op::publish) continue;
        const std::optional<EventView> ev = record_event(r);
        if (!ev) continue;
        const std::string_view result = text_view(r.data, "result");
        if (result != "ok" && result != "fail") continue;
        const int64_t order = ev->order;
        const auto& [first_ev, t0] = first_try.try_emplace(order, *ev, r.t_ns).first->second;
        const bool same_event = ev->type == first_ev.type && ev->v == first_ev.v;
        if (result == "ok" && same_event && !out.publish_delay_us.count(order))
            out.publish_delay_us[order] = (r.t_ns - t0) / 1000;
    }
    out.accounting = account(out.history, &out.stale_overwrites);
    if (wants_load_stats(s)) out.load = load_stats(s, out.history, static_cast<int64_t>(out.wrong_orders.size()));
    if (flow && flow->soak.enabled) out.soak = soak_stats(out.history);
    return out;
}

TrialOutcome check_trial(const Scenario& s, int trial, uint64_t seed, std::vector<HistoryRecord> history,
                         std::vector<OrderRow> final_rows, std::vector<StreamEntry> stream) {
    TrialOutcome out = classify_trial(s, trial, seed, std::move(history), std::move(final_rows), std::move(stream));
    evaluate_trial(s, out);
    return out;
}

LatencyStats delivery_latency(const std::vector<TrialOutcome>& trials) {
    std::vector<int64_t> samples_us;
    for (const auto& t : trials) {
        // Entry ids are only unique within a trial's stream.
        std::map<std::string, int64_t> published_ns;
        std::set<std::string> counted;
        std::vector<const HistoryRecord*> sorted;
        for (const auto& r : t.history) sorted.push_back(&r);
        std::stable_sort(sorted.begin(), sorted.end(),
                         [](const HistoryRecord* a, const HistoryRecord* b) { return a->t_ns < b->t_ns; });
        for (const auto* r : sorted)
            // The first XADD that put the entry in the stream: a lost reply's, before its resend's.
            if (reached_stream(*r) && !record_entry(*r).empty())
                published_ns.emplace(text_field(r->data, "stream") + " " + std::string(record_entry(*r)), r->t_ns);
        // Each actor's records in time order: a receipt looks only at its own consumer's records
        // around it (by binary search: a scan of the whole history per receipt is quadratic, far too
        // slow for a soak's 600,000 records).
        std::map<std::string, std::vector<const HistoryRecord*>> by_actor;
        for (const auto* r : sorted) by_actor[r->actor].push_back(r);
        // Whether `actor` sat blocked in XREADGROUP from the publish at pub_ns until it received
        // the entry at recv_ns: its last record before pub_ns is none or an ack, and it recorded
        // nothing in between. A consumer busy with a job picks an entry up late; that is
        // queueing, not delivery latency.
        auto waited_blocked = [&](const std::string& actor, int64_t pub_ns, int64_t recv_ns, const HistoryRecord* self) {
            const std::vector<const HistoryRecord*>& own = by_actor.at(actor);
            const auto from = std::lower_bound(own.begin(), own.end(), pub_ns,
                                               [](const HistoryRecord* r, int64_t t) { return r->t_ns < t; });
            const auto to = std::upper_bound(own.begin(), own.end(), recv_ns,
                                             [](int64_t t, const HistoryRecord* r) { return t < r->t_ns; });
            for (auto it = from; it < to; ++it)
                if (*it != self) return false;
            const HistoryRecord* last = nullptr;
            for (auto it = from; it != own.begin();) {
                --it;
                if (*it != self) {
                    last = *it;
                    break;
                }
            }
            return last == nullptr || last->op == Op::ack;
        };
        for (const auto* r : sorted) {
            if (r->op != Op::receive) continue;
            const std::string entry = text_field(r->data, "stream") + " " + std::string(record_entry(*r));
            auto pub = published_ns.find(entry);
            // Only the first receipt is delivery; later ones are redeliveries.
            if (pub == published_ns.end() || !counted.insert(entry).second) continue;
            if (!waited_blocked(r->actor, pub->second, r->t_ns, r)) continue;
            samples_us.push_back((r->t_ns - pub->second) / 1000);
        }
    }
    LatencyStats stats;
    if (samples_us.empty()) return stats;
    std::sort(samples_us.begin(), samples_us.end());
    stats.samples = static_cast<int>(samples_us.size());
    stats.p50_us = samples_us[(samples_us.size() - 1) / 2];
    stats.max_us = samples_us.back();
    return stats;
}

std::optional<std::pair<int64_t, int64_t>> trial_jobs_and_last_write_ns(const TrialOutcome& t) {
    // A load trial too large to keep its history (KeepRule::max_records) keeps its load figures:
    // the entries written, and the span from the first publish (the trial's start) to the last write.
    if (t.history.empty() && t.load.events > 0 && t.load.span_us > 0)
        return std::make_pair(t.load.events, t.load.span_us * 1000);
    int64_t jobs = 0, last = 0;
    for (const auto& r : t.history) {
        if (r.op != Op::write) continue;
        ++jobs;
        last = std::max(last, r.t_ns);
    }
    if (jobs == 0 || last <= 0) return std::nullopt;
    return std::make_pair(jobs, last);
}

ThroughputStats throughput(const std::vector<TrialOutcome>& trials) {
    std::vector<int64_t> jobs, last_ns;
    std::vector<double> rates;
    for (const auto& t : trials) {
        const auto pace = trial_jobs_and_last_write_ns(t);
        if (!pace) continue;
        jobs.push_back(pace->first);
        last_ns.push_back(pace->second);
        rates.push_back(static_cast<double>(pace->first) * 1e9 / static_cast<double>(pace->second));
    }
    ThroughputStats out;
    if (rates.empty()) return out;
    auto median = [](auto v) {
        std::sort(v.begin(), v.end());
        return v[(v.size() - 1) / 2];
    };
    out.trials = static_cast<int>(rates.size());
    out.jobs = median(jobs);
    out.span_ms = static_cast<double>(median(last_ns)) / 1e6;
    out.per_s = median(rates);
    out.per_s_min = *std::min_element(rates.begin(), rates.end());
    out.per_s_max = *std::max_element(rates.begin(), rates.end());
    return out;
}

void summarize(LabResult& lab) {
    lab.failures.clear();
    lab.delivery = delivery_latency(lab.trials);
    if (has_stream(lab.scenario.kind)) lab.throughput = throughput(lab.trials);
    if (lab.skipped) {
        // Neither held nor broken: the lab did not run. The reporters show the skip reason.
        lab.wrong = 0;
        lab.total = 0;
        lab.held = false;
        return;
    }
    const bool cases = counts_cases(lab.scenario.kind);  // every other kind runs trials
    if (cases)
        summarize_sessions(lab);
    else
        summarize_workload(lab);
    fill_wrong_rate(lab);
    if (lab.total == 0) lab.failures.push_back(cases ? "no case ran" : "no trial ran");
    lab.held = lab.failures.empty();
}

bool RunReport::all_held() const {
    return std::all_of(labs.begin(), labs.end(), [](const LabResult& lab) { return lab.skipped || lab.held; });
}

}  // namespace relab
