#include "check/accounting.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "check/record_fields.h"
#include "util/numbers.h"

namespace relab {

namespace {

using nlohmann::json;

using record_fields::bool_field;
using record_fields::int_field;
using record_fields::text_field;

// (order, type, v) of the record's "event".
using EventKey = std::tuple<int64_t, std::string, int64_t>;

EventKey event_key(const json& data) {
    if (!data.is_object()) return {0, "", 0};
    auto it = data.find(std::string_view("event"));
    if (it == data.end() || !it->is_object()) return {0, "", 0};
    return {int_field(*it, "order"), text_field(*it, "type"), int_field(*it, "v")};
}

// The entry a record names: its ID, with its stream before it when the record names one (S2's
// shards: two streams can hand out the same ID, "orders:{1} 1792591449272-0").
std::string entry_key(const json& data) {
    const std::string id = text_field(data, "entry");
    const std::string stream = text_field(data, "stream");
    return id.empty() || stream.empty() ? id : stream + " " + id;
}

bool is_applied_write(const HistoryRecord& r) { return r.op == Op::write && int_field(r.data, "affected") > 0; }

std::vector<const HistoryRecord*> in_time_order(const std::vector<HistoryRecord>& history) {
    std::vector<const HistoryRecord*> out;
    out.reserve(history.size());
    for (const auto& r : history) out.push_back(&r);
    auto earlier = [](const HistoryRecord* a, const HistoryRecord* b) { return a->t_ns < b->t_ns; };
    // The checker hands over a history it has sorted already (classify_trial): no sort, no buffer.
    if (!std::is_sorted(out.begin(), out.end(), earlier)) std::stable_sort(out.begin(), out.end(), earlier);
    return out;
}

// What the accounting reads of one record, read once: its entry and its event (a few JSON lookups
// and string copies each, read again by every pass while account() was a sixth of a simulated
// trial's instructions), in time order (stable: records at the same instant keep their order).
struct RecordFacts {
    const HistoryRecord* r;
    std::string entry;  // entry_key(data), for the records that name one
    EventKey ev;        // event_key(data)
    bool reached = false;  // reached_stream(*r)
};

std::vector<RecordFacts> facts_in_time_order(const std::vector<HistoryRecord>& history) {
    std::vector<RecordFacts> out;
    out.reserve(history.size());
    for (const HistoryRecord* r : in_time_order(history)) {
        RecordFacts f{r, {}, {0, "", 0}, false};
        switch (r->op) {
            case Op::publish:
                f.reached = reached_stream(*r);
                [[fallthrough]];
            case Op::receive:
            case Op::ack:
            case Op::write:
                f.entry = entry_key(r->data);
                f.ev = event_key(r->data);
                break;
            case Op::side_effect:
                f.ev = event_key(r->data);
                break;
            default:
                break;
        }
        out.push_back(std::move(f));
    }
    return out;
}

void add_example(std::vector<std::string>& examples, const std::string& what) {
    if (examples.size() < k_accounting_examples) examples.push_back(what);
}

std::string plural(int n, const char* one, const char* many) { return fmt::format("{} {}", n, n == 1 ? one : many); }

}  // namespace

Accounting& Accounting::operator+=(const Accounting& o) {
    for (auto field : {&Accounting::published, &Accounting::processed_once, &Accounting::duplicated, &Accounting::lost,
                       &Accounting::redelivered, &Accounting::unexpected, &Accounting::stale_overwrites,
                       &Accounting::unapplied, &Accounting::side_effects, &Accounting::side_effects_out_of_order,
                       &Accounting::republished, &Accounting::reapplied, &Accounting::skipped})
        this->*field = add_clamped(this->*field, o.*field);
    return *this;
}

namespace {

std::vector<StaleOverwrite> stale_overwrites_of(const std::vector<RecordFacts>& facts) {
    std::vector<StaleOverwrite> out;
    std::map<int64_t, std::pair<int64_t, std::string>> newest;  // order -> (version, type) applied
    for (const RecordFacts& f : facts) {
        const HistoryRecord* r = f.r;
        if (!is_applied_write(*r)) continue;
        const auto& [order, type, v] = f.ev;
        auto [it, first] = newest.emplace(order, std::make_pair(v, type));
        if (first) continue;
        if (v < it->second.first) {
            // A CAS on the event's own version applies only over an older one: recorded after the
            // newer write, it still committed before it (two consumers record their writes a few
            // µs after COMMIT, in either order). Not an overwrite. (A CAS on the entry ID can be.)
            const bool cas_on_event_version = text_field(r->data, "mode") == "cas" && int_field(r->data, "version", -1) == v;
            if (!cas_on_event_version) out.push_back({order, type, it->second.second});
        } else {
            it->second = {v, type};
        }
    }
    return out;
}

std::vector<std::string> side_effects_out_of_order_of(const std::vector<RecordFacts>& facts) {
    // order -> (seq, time, type, version) of each side effect it sent
    std::map<int64_t, std::vector<std::tuple<int64_t, int64_t, std::string, int64_t>>> sent;
    for (const RecordFacts& f : facts) {
        const HistoryRecord* r = f.r;
        if (r->op != Op::side_effect) continue;
        const auto& [order, type, v] = f.ev;
        sent[int_field(r->data, "order", order)].emplace_back(int_field(r->data, "seq"), r->t_ns, type,
                                                              int_field(r->data, "version", v));
    }
    std::vector<std::string> out;
    for (auto& [order, list] : sent) {
        // The table's order (seq); the time it was recorded only breaks ties.
        std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
            return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
        });
        for (size_t i = 1; i < list.size(); ++i) {
            // The newest version sent so far against this one.
            const auto newest = std::max_element(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(i),
                                                 [](const auto& a, const auto& b) { return std::get<3>(a) < std::get<3>(b); });
            if (std::get<3>(list[i]) < std::get<3>(*newest)) {
                out.push_back(fmt::format("#{}: {} (v{}) sent before {} (v{})", order, std::get<2>(*newest),
                                          std::get<3>(*newest), std::get<2>(list[i]), std::get<3>(list[i])));
                break;
            }
        }
    }
    return out;
}

}  // namespace

std::vector<StaleOverwrite> stale_overwrites(const std::vector<HistoryRecord>& history) {
    return stale_overwrites_of(facts_in_time_order(history));
}

std::vector<std::string> side_effects_out_of_order(const std::vector<HistoryRecord>& history) {
    return side_effects_out_of_order_of(facts_in_time_order(history));
}

void check_side_effects_recorded(const std::vector<HistoryRecord>& history, const std::vector<SideEffectRow>& rows) {
    std::vector<SideEffectRow> recorded;
    for (const HistoryRecord& r : history) {
        if (r.op != Op::side_effect) continue;
        const auto [order, type, v] = event_key(r.data);
        recorded.push_back(SideEffectRow{int_field(r.data, "seq"), int_field(r.data, "order", order), type,
                                         int_field(r.data, "version", v)});
    }
    std::sort(recorded.begin(), recorded.end(), [](const auto& a, const auto& b) { return a.seq < b.seq; });
    auto text = [](const SideEffectRow& x) {
        return fmt::format("seq {} #{} {} v{}", x.seq, x.order, x.event_type, x.version);
    };
    for (size_t i = 0; i < std::max(recorded.size(), rows.size()); ++i) {
        if (i < recorded.size() && i < rows.size() && recorded[i] == rows[i]) continue;
        throw HarnessError(fmt::format(
            "tmp_side_effects and the history disagree: the table has {}, the history {} ({} rows, {} records)",
            i < rows.size() ? text(rows[i]) : std::string("nothing more"),
            i < recorded.size() ? text(recorded[i]) : std::string("nothing more"), rows.size(), recorded.size()));
    }
}

bool reached_stream(const HistoryRecord& r) {
    if (r.op != Op::publish) return false;
    return text_field(r.data, "result") == "ok" || (bool_field(r.data, "reply_lost") && r.data.contains("entry"));
}

Accounting account(const std::vector<HistoryRecord>& history, std::vector<StaleOverwrite>* stale_out) {
    Accounting a;
    const std::vector<RecordFacts> facts = facts_in_time_order(history);

    std::vector<std::string> published;             // entry ids in publish order
    std::map<std::string, int> writes;              // entry -> writes of it
    std::map<std::string, int> applied;             // entry -> writes of it that changed a row
    std::map<EventKey, std::string> first_entry_of;  // event -> the first ok publish's entry
    for (const RecordFacts& f : facts) {
        if (!f.reached) continue;
        const std::string& entry = f.entry;
        if (entry.empty() || writes.count(entry)) continue;
        writes[entry] = 0;
        published.push_back(entry);
        first_entry_of.try_emplace(f.ev, entry);
    }

    std::set<std::string> acked, redelivered, unexpected;
    std::map<std::string, std::pair<std::string, EventKey>> last_received;  // actor -> (entry, event)
    auto flag_unexpected = [&](const std::string& what) {
        if (unexpected.insert(what).second) add_example(a.unexpected_examples, what);
    };
    for (const RecordFacts& f : facts) {
        const HistoryRecord* r = f.r;
        if (r->op == Op::receive) {
            const std::string& entry = f.entry;
            last_received[r->actor] = {entry, f.ev};
            if (!writes.count(entry)) flag_unexpected(entry.empty() ? "(receive without an entry id)" : entry);
            if (acked.count(entry) && redelivered.insert(entry).second) add_example(a.redelivered_examples, entry);
        } else if (r->op == Op::ack) {
            if (!f.entry.empty()) acked.insert(f.entry);
        } else if (r->op == Op::write) {
            std::string entry = f.entry;
            if (entry.empty()) {
                // An older history: the write names its event only. It is the job of the entry its
                // actor received last, when that was this event; else the event's first publish.
                const EventKey& ev = f.ev;
                const auto last = last_received.find(r->actor);
                if (last != last_received.end() && last->second.second == ev && !last->second.first.empty())
                    entry = last->second.first;
                else if (const auto it = first_entry_of.find(ev); it != first_entry_of.end())
                    entry = it->second;
            }
            const auto it = writes.find(entry);
            if (it != writes.end()) {
                ++it->second;
                if (is_applied_write(*r)) ++applied[entry];
            }
            else if (!entry.empty())
                flag_unexpected(entry);
            else {
                const auto& [order, type, v] = f.ev;
                flag_unexpected(fmt::format("(no entry) #{} {} v={}", order, type, v));
            }
        }
    }

    a.published = static_cast<int>(published.size());
    for (const auto& entry : published) {
        const int n = writes.at(entry);
        if (n == 0) {
            ++a.lost;
            add_example(a.lost_examples, entry);
        } else if (n == 1) {
            ++a.processed_once;
        } else {
            ++a.duplicated;
            add_example(a.duplicated_examples, entry);
        }
        if (n > 0 && !applied.count(entry)) {
            ++a.unapplied;
            add_example(a.unapplied_examples, entry);
        }
    }
    // Per event: how many entries carried it (ok publishes), how many jobs wrote it.
    auto event_text = [](const EventKey& k, int n) {
        return fmt::format("#{} {} v{} ×{}", std::get<0>(k), std::get<1>(k), std::get<2>(k), n);
    };
    std::map<EventKey, std::set<std::string>> entries_of;
    std::map<EventKey, int> writes_of;
    for (const RecordFacts& f : facts) {
        if (f.reached && !f.entry.empty()) entries_of[f.ev].insert(f.entry);
        if (f.r->op != Op::write) continue;
        if (text_field(f.r->data, "dedupe") == "skipped")
            ++a.skipped;
        else
            ++writes_of[f.ev];
    }
    for (const auto& [ev, entries] : entries_of)
        if (entries.size() > 1) {
            ++a.republished;
            add_example(a.republished_examples, event_text(ev, static_cast<int>(entries.size())));
        }
    for (const auto& [ev, n] : writes_of)
        if (n > 1) {
            ++a.reapplied;
            add_example(a.reapplied_examples, event_text(ev, n));
        }

    a.redelivered = static_cast<int>(redelivered.size());
    a.unexpected = static_cast<int>(unexpected.size());
    std::vector<StaleOverwrite> stale = stale_overwrites_of(facts);
    a.stale_overwrites = static_cast<int>(stale.size());
    for (const auto& so : stale) add_example(a.stale_examples, so.describe());
    if (stale_out) *stale_out = std::move(stale);
    a.side_effects = static_cast<int>(
        std::count_if(history.begin(), history.end(), [](const HistoryRecord& r) { return r.op == Op::side_effect; }));
    const std::vector<std::string> inverted = side_effects_out_of_order_of(facts);
    a.side_effects_out_of_order = static_cast<int>(inverted.size());
    for (const auto& what : inverted) add_example(a.side_effect_examples, what);
    return a;
}

std::string accounting_text(const Accounting& a) {
    std::string text =
        fmt::format("{} published · {} processed once · {} duplicated · {} lost · {} redelivered after ack · {} "
                    "unexpected · {}",
                    a.published, a.processed_once, a.duplicated, a.lost, a.redelivered, a.unexpected,
                    plural(a.stale_overwrites, "stale overwrite", "stale overwrites"));
    if (a.side_effects > 0)
        text += fmt::format(" · {} · {} out of version order", plural(a.side_effects, "side effect sent", "side effects sent"),
                            plural(a.side_effects_out_of_order, "order", "orders"));
    return text;
}

std::string republish_text(const Accounting& a) {
    if (a.republished == 0 && a.reapplied == 0 && a.skipped == 0) return {};
    auto with = [](std::string text, const std::vector<std::string>& examples) {
        if (!examples.empty()) text += fmt::format(" ({})", fmt::join(examples, ", "));
        return text;
    };
    return fmt::format("{} · {} · {}",
                       with(plural(a.republished, "event published again", "events published again"), a.republished_examples),
                       with(plural(a.reapplied, "event written again", "events written again"), a.reapplied_examples),
                       plural(a.skipped, "entry skipped as a duplicate", "entries skipped as duplicates"));
}

std::string accounting_more_text(const Accounting& a) {
    std::vector<std::string> parts;
    if (a.unapplied > 0) parts.push_back(fmt::format("{} unapplied", a.unapplied));
    if (a.republished > 0) parts.push_back(plural(a.republished, "event published again", "events published again"));
    if (a.reapplied > 0) parts.push_back(plural(a.reapplied, "event written again", "events written again"));
    if (a.skipped > 0) parts.push_back(fmt::format("{} skipped as {}", a.skipped, a.skipped == 1 ? "a duplicate" : "duplicates"));
    if (a.side_effects > 0)
        parts.push_back(fmt::format("{}, {} out of version order",
                                    plural(a.side_effects, "side effect sent", "side effects sent"),
                                    plural(a.side_effects_out_of_order, "order", "orders")));
    return fmt::format("{}", fmt::join(parts, " · "));
}

std::vector<std::string> accounting_details(const Accounting& a) {
    std::vector<std::string> out;
    auto item = [&](const char* what, int n, const std::vector<std::string>& examples) {
        if (n == 0) return;
        std::string text = fmt::format("{} {}", what, n);
        if (!examples.empty()) {
            text += fmt::format(": {}", fmt::join(examples, ", "));
            if (static_cast<size_t>(n) > examples.size()) text += ", …";
        }
        out.push_back(std::move(text));
    };
    item("duplicated", a.duplicated, a.duplicated_examples);
    item("lost", a.lost, a.lost_examples);
    item("redelivered after ack", a.redelivered, a.redelivered_examples);
    item("unexpected", a.unexpected, a.unexpected_examples);
    item("stale overwrite", a.stale_overwrites, a.stale_examples);
    item("unapplied (every write refused)", a.unapplied, a.unapplied_examples);
    item("side effects out of version order", a.side_effects_out_of_order, a.side_effect_examples);
    return out;
}

}  // namespace relab
