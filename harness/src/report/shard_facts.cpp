#include "report/shard_facts.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "check/record_fields.h"
#include "util/json_number.h"

namespace relab {

namespace {

using record_fields::bool_field;
using record_fields::int_field;
using record_fields::text_field;

int64_t order_of(const HistoryRecord& r) {
    const nlohmann::json ev = record_field(r, "event");
    if (!ev.is_object() || !ev.contains("order")) return -1;
    return json_number_as<int64_t>(ev.at("order")).value_or(-1);
}

// The outage a shard_failover left in the history: its shard, the kill's and the promotion's times.
struct ShardOutage {
    int shard = -1;
    int64_t killed_ns = 0;
    int64_t promoted_ns = 0;
};

std::optional<ShardOutage> shard_outage(const std::vector<HistoryRecord>& history) {
    std::map<int64_t, int64_t> invoked;  // fault index -> its invoke's time
    for (const auto& r : history) {
        if (r.op != Op::fault || text_field(r.data, "action") != "shard_failover") continue;
        const int64_t fault = int_field(r.data, "fault");
        if (text_field(r.data, "phase") == "invoke") invoked[fault] = r.t_ns;
        if (text_field(r.data, "phase") != "ok" || !invoked.count(fault)) continue;
        const int64_t killed = invoked.at(fault);
        return ShardOutage{static_cast<int>(int_field(r.data, "shard", -1)), killed,
                           killed + int_field(r.data, "switch_ms") * 1'000'000};
    }
    return std::nullopt;
}

// One shard's figures across the outage, as shard_outage_records describes them.
struct ShardFigures {
    std::map<std::tuple<int64_t, std::string, int64_t>, int64_t> first_try, first_write;  // by event
    std::set<std::tuple<int64_t, std::string, int64_t>> published;
    std::map<std::string, int64_t> receives;  // by entry
    std::vector<int64_t> writes_in_outage;    // their times, in order
    int64_t ok = 0, failed = 0, applied_in_outage = 0;
};

void add_record(ShardFigures& f, const HistoryRecord& r, const ShardOutage& o) {
    const std::optional<EventView> ev = record_event(r);
    if (!ev) return;
    const auto key = std::make_tuple(ev->order, std::string(ev->type), ev->v);
    if (r.op == Op::publish) {
        f.first_try.emplace(key, r.t_ns);  // records are in time order: the first stays
        const std::string result = text_field(r.data, "result");
        if (result == "ok") ++f.ok, f.published.insert(key);
        if (result == "fail") ++f.failed;
    } else if (r.op == Op::write) {
        f.first_write.emplace(key, r.t_ns);
        if (r.t_ns >= o.killed_ns && r.t_ns <= o.promoted_ns) ++f.applied_in_outage, f.writes_in_outage.push_back(r.t_ns);
    } else if (r.op == Op::receive) {
        ++f.receives[std::string(record_entry(r))];
    }
}

}  // namespace

std::vector<HistoryRecord> shard_outage_records(const Scenario& s, const std::vector<HistoryRecord>& history) {
    const std::optional<ShardOutage> o = shard_outage(history);
    const StreamLab* flow = s.flow_if();
    if (!o || !flow || !flow->shard.enabled) return {};
    std::vector<const HistoryRecord*> sorted;
    for (const auto& r : history) sorted.push_back(&r);
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->t_ns < b->t_ns; });
    std::map<std::string, ShardFigures> by_stream;
    for (const HistoryRecord* r : sorted)
        if (r->op == Op::publish || r->op == Op::write || r->op == Op::receive)
            if (const std::string stream = text_field(r->data, "stream"); !stream.empty())
                add_record(by_stream[stream], *r, *o);
    std::vector<HistoryRecord> out;
    for (int i = 0; i < flow->shard.streams; ++i) {
        const std::string stream = shard_stream_key(flow->shard, i);
        ShardFigures& f = by_stream[stream];
        int64_t max_wait_ns = 0, lost = 0, redelivered = 0;
        for (const auto& [key, t] : f.first_write)
            if (f.first_try.count(key)) max_wait_ns = std::max(max_wait_ns, t - f.first_try.at(key));
        for (const auto& key : f.published) lost += f.first_write.count(key) ? 0 : 1;
        for (const auto& [entry, n] : f.receives) redelivered += n - 1;
        // The longest stretch of the outage in which the shard wrote nothing (its edges included).
        int64_t gap_ns = 0, last = o->killed_ns;
        for (const int64_t t : f.writes_in_outage) gap_ns = std::max(gap_ns, t - last), last = t;
        gap_ns = std::max(gap_ns, o->promoted_ns - last);
        const bool killed = i == o->shard;
        const int64_t max_wait_ms = max_wait_ns / 1'000'000;
        out.push_back(HistoryRecord{
            history.empty() ? 0 : history.front().trial, o->promoted_ns, "relab", Op::observe,
            {{"text", fmt::format("shard {} ({}){}: across the {} ms outage {} of its events applied; longest wait "
                                  "{} ms, longest stretch without a write {} ms; {} published ok, {} publishes failed; {} lost, {} "
                                  "redelivered",
                                  i, stream, killed ? ", its master killed" : "", (o->promoted_ns - o->killed_ns) / 1'000'000,
                                  f.applied_in_outage, max_wait_ms, gap_ns / 1'000'000, f.ok, f.failed, lost, redelivered)},
             {"shard", i},
             {"killed", killed},
             {"outage_ms", (o->promoted_ns - o->killed_ns) / 1'000'000},
             {"published", f.ok},
             {"failed_publishes", f.failed},
             {"applied_in_outage", f.applied_in_outage},
             {"max_wait_ms", max_wait_ms},
             {"max_gap_ms", gap_ns / 1'000'000},
             {"lost", lost},
             {"redelivered", redelivered}}});
    }
    return out;
}

ShardTrialFacts shard_facts(const Scenario& s, const TrialOutcome& t) {
    ShardTrialFacts f;
    for (const auto& r : t.history) {
        // Record fields are read as the checker reads them (record_fields.h): a value of another type
        // is absent, so a hand-edited report cannot throw out of a text report.
        if (r.op == Op::publish && text_field(r.data, "result") == "ok" && r.data.contains("stream") &&
            r.data.at("stream").is_string())
            ++f.entries_per_stream[r.data.at("stream").get<std::string>()];
        if (r.op == Op::reshard && !f.reshard) f.reshard = r.data;
        if (r.op == Op::observe && r.actor == "relab" && r.data.contains("streams") && r.data.at("streams").is_array())
            for (const auto& m : r.data.at("streams"))
                f.shard_map.push_back(fmt::format("{} → slot {} on {}", text_field(m, "stream", "?"),
                                                  int_field(m, "slot", -1), text_field(m, "node", "?")));
    }
    std::map<int64_t, std::string> expected;
    for (const auto& o : s.flow().orders) expected[o.id] = o.expected_final.status;
    for (const auto& row : t.final_rows) {
        const auto it = expected.find(row.id);
        if (it != expected.end() && row.status != it->second) f.wrong_orders.push_back(row.id);
    }
    f.pace = trial_jobs_and_last_write_ns(t);
    return f;
}

std::string shard_facts_text(const ShardTrialFacts& f, size_t orders) {
    std::string text = "routed";
    bool first = true;
    for (const auto& [stream, n] : f.entries_per_stream) {
        text += fmt::format("{} {} {}", first ? "" : " ·", stream, n);
        first = false;
    }
    if (f.reshard) {
        const auto& r = *f.reshard;
        text += fmt::format("; reshard {} → {} before event {}", int_field(r, "from"), int_field(r, "to"),
                            int_field(r, "at_event"));
        if (bool_field(r, "drain")) text += fmt::format(" (drained first: waited {} ms)", int_field(r, "waited_ms"));
        text += fmt::format(", {} of {} orders moved", int_field(r, "moved_orders"), orders);
    }
    text += fmt::format("; {} order{} wrong", f.wrong_orders.size(), f.wrong_orders.size() == 1 ? "" : "s");
    if (!f.wrong_orders.empty()) {
        std::vector<std::string> ids;
        for (size_t i = 0; i < f.wrong_orders.size() && i < 5; ++i) ids.push_back("#" + std::to_string(f.wrong_orders[i]));
        text += fmt::format(" ({}{})", fmt::join(ids, ", "), f.wrong_orders.size() > 5 ? ", …" : "");
    }
    if (f.pace && f.pace->second > 0)
        text += fmt::format("; {} jobs written by {} ms = {:.0f} jobs/s", f.pace->first, f.pace->second / 1'000'000,
                            static_cast<double>(f.pace->first) * 1e9 / static_cast<double>(f.pace->second));
    return text;
}

TrialOutcome shard_focus(const Scenario& s, const TrialOutcome& t, size_t orders_shown) {
    const StreamLab& flow = s.flow();
    const ShardTrialFacts f = shard_facts(s, t);
    std::set<int64_t> keep;
    for (size_t i = 0; i < f.wrong_orders.size() && i < orders_shown; ++i) keep.insert(f.wrong_orders[i]);
    if (keep.empty() && !flow.orders.empty()) keep.insert(flow.orders.front().id);
    TrialOutcome out = t;
    out.history.clear();
    for (const auto& r : t.history) {
        const int64_t o = order_of(r);
        if (o >= 0 ? keep.count(o) > 0 : (r.op == Op::start || r.op == Op::reshard || r.op == Op::observe))
            out.history.push_back(r);
    }
    out.stream.clear();
    for (const auto& e : t.stream)
        if (keep.count(std::atoll(e.field("order").c_str()))) out.stream.push_back(e);
    return out;
}

}  // namespace relab
