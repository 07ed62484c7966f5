// An outbox lab's trial as the article prints it (article 000, section 6.2): the outbox rows, the
// dispatcher's query and each of its rounds, the stream as the consumer will see it, the final
// states, and how late each order reached the stream.
#include <fmt/format.h>

#include "report/lab_summary.h"
#include "report/text/record_text.h"
#include "report/text/stream_text.h"
#include "report/text/timeline.h"

namespace relab {

namespace {

// The outbox rows the app's transactions inserted.
void write_outbox_text(const TextContext& tc, const TrialOutcome& t, std::ostream& out) {
    int inserts = 0;
    for (const auto& r : t.history) inserts += r.op == Op::outbox_insert;
    out << fmt::format(fmt::runtime(pick(tc.opts.lang, "outbox after {} transactions of the app:",
                                         "outbox sau {} transaction của app:")),
                       inserts)
        << '\n';
    for (const auto& r : t.history) {
        if (r.op != Op::outbox_insert) continue;
        const auto ev = event_of(r.data);
        out << fmt::format("  outbox.id={}  order={}  {:<7} v={}\n", field_text(r.data, "outbox_id"),
                           field_text(ev, "order"), field_text(ev, "type"), field_text(ev, "v"));
    }
}

// The dispatcher's query, as its settings make it.
void write_dispatcher_query_text(const Scenario& s, std::ostream& out) {
    const StreamLab& flow = s.flow();
    const bool naive = flow.dispatcher.ordering == DispatchOrder::naive;
    const bool one_transaction = flow.dispatcher.mark == DispatchMark::round;
    const std::string dispatchers = flow.dispatcher.count > 1 ? fmt::format("{} dispatchers", flow.dispatcher.count) : "dispatcher";
    if (flow.dispatcher.claim == DispatchClaim::skip_locked)
        out << fmt::format("{} {}: per row BEGIN; SELECT id, aggregate_id, type, version FROM tmp_outbox WHERE "
                           "published_at IS NULL{} ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED; XADD; UPDATE; COMMIT\n",
                           dispatchers, naive ? "naive" : "perkey",
                           naive ? "" : " AND no earlier unpublished row of its aggregate");
    else
        out << fmt::format("{} {}: {}SELECT id, aggregate_id, type, version FROM tmp_outbox WHERE published_at IS "
                           "NULL ORDER BY {}{}\n",
                           dispatchers, naive ? "naive" : "perkey", one_transaction ? "each round BEGIN; " : "",
                           naive ? "id" : "aggregate_id, id",
                           one_transaction ? " FOR UPDATE; XADD + UPDATE per row; COMMIT" : "");
}

// What became of one publish of a round: its entry, a failure, or a wait for an earlier entry.
std::string publish_verdict(const TextContext& tc, const HistoryRecord& r, const nlohmann::json& ev) {
    const std::string result = field_text(r.data, "result");
    if (result == "ok") return "XADD " + field_text(r.data, "entry");
    if (result == "fail") return pick(tc.opts.lang, "publish FAILED, kept in outbox", "publish LỖI, giữ nguyên trong outbox");
    return fmt::format(fmt::runtime(pick(tc.opts.lang, "WAIT (an earlier entry of #{} is not published)",
                                         "CHỜ (entry trước của #{} chưa publish được)")),
                       field_text(ev, "order"));
}

// Each round's publishes, with the nemesis's faults and the dispatcher's errors between them.
void write_dispatch_rounds_text(const TextContext& tc, const Scenario& s, const TrialOutcome& t, std::ostream& out) {
    const StreamLab& flow = s.flow();
    const Lang lang = tc.opts.lang;
    const bool one_transaction = flow.dispatcher.mark == DispatchMark::round;
    // Several dispatchers: each line names its dispatcher.
    auto by = [&](const HistoryRecord& r) { return flow.dispatcher.count > 1 ? r.actor + " " : std::string{}; };
    for (const auto& r : t.history) {
        if (r.op == Op::fault && r.actor == "nemesis") {
            const std::string phase = field_text(r.data, "phase");
            out << fmt::format("  nemesis {}  fault {} {}{}\n", time_text(r.t_ns), field_text(r.data, "fault"),
                               fault_words(r.data),
                               phase == "invoke" ? " …"
                               : phase == "ok"   ? " → ok: " + field_text(r.data, "text")
                                                 : " → FAILED: " + field_text(r.data, "error"));
            continue;
        }
        if (r.op == Op::error && r.actor.rfind("dispatcher", 0) == 0) {
            out << fmt::format("  {}{} {} {}  ERROR {} → {}\n", by(r), pick(lang, "round", "vòng"), field_text(r.data, "round"),
                               time_text(r.t_ns), field_text(r.data, "error"),
                               one_transaction ? pick(lang, "the round's uncommitted marks are gone; a new round",
                                                      "các đánh dấu chưa commit của vòng mất; chạy vòng mới")
                                               : pick(lang, "a new round reads what is still unpublished",
                                                      "vòng mới đọc lại những gì chưa publish"));
            continue;
        }
        if (r.op != Op::publish || !r.data.contains("round")) continue;
        const auto ev = event_of(r.data);
        out << fmt::format("  {}{} {} {}  outbox.id={} #{} {:<7} → {}\n", by(r), pick(lang, "round", "vòng"),
                           field_text(r.data, "round"), time_text(r.t_ns), field_text(r.data, "outbox_id"),
                           field_text(ev, "order"), field_text(ev, "type"), publish_verdict(tc, r, ev));
    }
}

// The stream as the consumer will see it, the final states it left, and the late publishes.
void write_consumer_view_text(const TextContext& tc, const Scenario& s, const TrialOutcome& t, std::ostream& out) {
    const StreamLab& flow = s.flow();
    const Lang lang = tc.opts.lang;
    out << "XRANGE " << flow.stream.key << " - + " << pick(lang, "(the order the consumer will see):", "(thứ tự consumer sẽ thấy):")
        << '\n';
    for (const auto& e : t.stream)
        out << fmt::format("  {}  #{} {:<7} v={}\n", e.id, e.field("order"), e.field("type"), e.field("v"));
    const std::string mode = is_guarded_update(flow.write.mode) ? "CAS" : pick(lang, "plain UPDATE", "UPDATE thường");
    const std::string who = flow.consumers == 1 ? "consumer S1" : fmt::format("{} consumers", flow.consumers);
    out << fmt::format(fmt::runtime(pick(lang, "{} ({}) applies in log order →", "{} ({}) áp theo thứ tự log →")), who, mode);
    for (const auto& order : flow.orders) {
        const OrderRow* row = final_row(t, order.id);
        const std::string status = row ? row_state_text(*row, carries_amounts(flow)) : tc.w.no_row;
        out << fmt::format("{}#{}={}{}", &order == &flow.orders.front() ? " " : "  ", order.id, status,
                           row && order.expected_final.matches(*row) ? "" : "✕");
    }
    out << '\n';
    for (const auto& [order, delay_us] : t.publish_delay_us) {
        if (delay_us < 1000) continue;
        out << fmt::format(fmt::runtime(pick(lang, "#{} reached the stream {} ms after its first attempt\n",
                                             "#{} trễ {} ms so với lần thử đầu\n")),
                           order, delay_us / 1000);
    }
}

}  // namespace

void write_dispatcher_trial_text(const TextContext& tc, const LabResult& lab, const TrialOutcome& t, std::ostream& out) {
    write_outbox_text(tc, t, out);
    write_dispatcher_query_text(lab.scenario, out);
    write_dispatch_rounds_text(tc, lab.scenario, t, out);
    write_consumer_view_text(tc, lab.scenario, t, out);
}

}  // namespace relab
