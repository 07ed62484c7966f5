#include "report/shard_facts.h"

#include <algorithm>
#include <set>

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

}  // namespace

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
    for (const auto& o : s.orders) expected[o.id] = o.expected_final;
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
    const ShardTrialFacts f = shard_facts(s, t);
    std::set<int64_t> keep;
    for (size_t i = 0; i < f.wrong_orders.size() && i < orders_shown; ++i) keep.insert(f.wrong_orders[i]);
    if (keep.empty() && !s.orders.empty()) keep.insert(s.orders.front().id);
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
