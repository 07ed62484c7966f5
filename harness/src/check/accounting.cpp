#include "check/accounting.h"
#include "util/check.h"

#include <algorithm>
#include <optional>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "check/record_fields.h"
#include "util/numbers.h"

namespace relab {

namespace {

using nlohmann::json;

using record_fields::bool_field;
using record_fields::int_field;
using record_fields::text_field;
using record_fields::text_view;

// (order, type, v) of a record's "event", its type a view into the record: compared as the tuple
// (order, type, v) is.
struct EventKey {
    int64_t order = 0;
    std::string_view type;
    int64_t v = 0;
    auto operator<=>(const EventKey&) const = default;
    bool operator==(const EventKey&) const = default;
};

EventKey event_key(const HistoryRecord& r) {
    const std::optional<EventView> ev = record_event(r);
    if (!ev) return {};
    return {ev->order, ev->type, ev->v};
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

// Numbers for the keys of one history (entries, events), so that the accounting's sets and counts
// are vectors indexed by them rather than trees of strings: string copies, compares and tree nodes
// had made account() a large share of a simulated trial (docs/performance.md). A few keys are looked
// up in a vector; past that, in a hash index beside it. Keys are views: into the records, or into
// `owned` for the ones built from two fields.
template <class Key, class Hash>
class Interner {
public:
    explicit Interner(size_t expected) { m_keys.reserve(expected); }
    int id(const Key& k) {
        if (m_index.empty()) {
            for (size_t i = 0; i < m_keys.size(); ++i)
                if (m_keys[i] == k) return static_cast<int>(i);
            if (m_keys.size() < kLinear) {
                m_keys.push_back(k);
                return static_cast<int>(m_keys.size() - 1);
            }
            m_index.reserve(m_keys.capacity() * 2);
            for (size_t i = 0; i < m_keys.size(); ++i) m_index.emplace(m_keys[i], static_cast<int>(i));
        }
        const auto [it, added] = m_index.emplace(k, static_cast<int>(m_keys.size()));
        if (added) m_keys.push_back(k);
        return it->second;
    }
    const Key& key(int id) const { return m_keys[static_cast<size_t>(id)]; }
    size_t size() const { return m_keys.size(); }
    // Ids in key order: the order the accounting's per-event examples come in.
    std::vector<int> sorted_ids() const {
        std::vector<int> ids(m_keys.size());
        for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i);
        std::sort(ids.begin(), ids.end(), [&](int a, int b) { return key(a) < key(b); });
        return ids;
    }

private:
    static constexpr size_t kLinear = 16;
    std::vector<Key> m_keys;
    std::unordered_map<Key, int, Hash> m_index;
};

struct EventKeyHash {
    size_t operator()(const EventKey& k) const noexcept {
        size_t h = std::hash<std::string_view>{}(k.type);
        h ^= std::hash<int64_t>{}(k.order) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
        h ^= std::hash<int64_t>{}(k.v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
        return h;
    }
};

// What the accounting reads of one record, read once, in time order (stable: records at the same
// instant keep their order).
struct RecordFacts {
    const HistoryRecord* r;
    int entry = -1;        // the entry it names (its stream before its ID when it names one); -1: none
    int ev = -1;           // its event's key (0, "", 0 when it has none); -1 for the other ops
    bool reached = false;  // reached_stream(*r)
};

struct Facts {
    std::vector<RecordFacts> records;
    std::vector<std::string> owned;  // "stream id" keys; reserved, so views into them stay valid
    Interner<std::string_view, std::hash<std::string_view>> entries;
    Interner<EventKey, EventKeyHash> events;
    explicit Facts(size_t n) : entries(n), events(n) { owned.reserve(n); }
    Facts(const Facts&) = delete;  // a copy's views would point into the original
    Facts(Facts&&) = default;
    std::string entry_text(int id) const { return id < 0 ? std::string() : std::string(entries.key(id)); }
};

// The entry a record names: its ID, with its stream before it when the record names one (S2's
// shards: two streams can hand out the same ID, "orders:{1} 1792591449272-0"). -1 for none.
int entry_of(Facts& f, const HistoryRecord& r) {
    const std::string_view id = record_entry(r);
    if (id.empty()) return -1;
    const std::string_view stream = text_view(r.data, "stream");
    if (stream.empty()) return f.entries.id(id);
    std::string key;
    key.reserve(stream.size() + 1 + id.size());
    key.append(stream).append(" ").append(id);
    // One copy per such record at most: within the reserve, so no view into `owned` moves.
    f.owned.push_back(std::move(key));
    return f.entries.id(f.owned.back());
}

Facts facts_in_time_order(const std::vector<HistoryRecord>& history) {
    Facts f(history.size());
    f.records.reserve(history.size());
    for (const HistoryRecord* r : in_time_order(history)) {
        RecordFacts x{r, -1, -1, false};
        switch (r->op) {
            case Op::publish:
                x.reached = reached_stream(*r);
                [[fallthrough]];
            case Op::receive:
            case Op::ack:
            case Op::write:
            case Op::dead_letter:
                x.entry = entry_of(f, *r);
                x.ev = f.events.id(event_key(*r));
                break;
            case Op::side_effect:
                x.ev = f.events.id(event_key(*r));
                break;
            default:
                break;
        }
        f.records.push_back(x);
    }
    return f;
}

void add_example(std::vector<std::string>& examples, const std::string& what) {
    if (examples.size() < k_accounting_examples) examples.push_back(what);
}

// The published entries a trial that ended quiet left: pending and never delivered (no receive).
// Pending is the server's PEL when the observe carries it (a SIGKILLed consumer's last receive may
// be missing from the history, its entry still in the group), else an entry whose last delivery no
// ack followed. Only such a trial leaves any: in one that drained the server acknowledged every
// entry, whatever records a role wrote late.
void count_left_over(const std::vector<HistoryRecord>& history, const Facts& facts, const std::vector<int>& published,
                     Accounting& a) {
    const auto quiet = std::find_if(history.begin(), history.end(), [](const HistoryRecord& r) {
        return r.op == Op::observe && (r.data.contains("quiet_ms") || r.data.contains("stream_deadline_ms"));
    });
    if (quiet == history.end()) return;
    std::optional<std::set<std::string>> pel;
    if (const auto it = quiet->data.find("pel"); it != quiet->data.end() && it->is_array()) {
        pel.emplace();
        for (const auto& id : *it)
            if (id.is_string()) pel->insert(id.get<std::string>());
    }
    enum : char { never, delivered, acked };  // each entry's state after its last receive or ack
    std::vector<char> state(facts.entries.size(), never);
    for (const RecordFacts& f : facts.records) {
        if (f.entry < 0) continue;
        if (f.r->op == Op::receive) state[f.entry] = delivered;
        if (f.r->op == Op::ack && state[f.entry] == delivered) state[f.entry] = acked;
    }
    for (const int entry : published) {
        const bool pending = pel ? pel->count(facts.entry_text(entry)) > 0 : state[entry] == delivered;
        if (pending) {
            ++a.pending;
            add_example(a.pending_examples, facts.entry_text(entry));
        } else if (state[entry] == never) {
            ++a.never_delivered;
            add_example(a.never_delivered_examples, facts.entry_text(entry));
        }
    }
}


// The entries a trim (a fault record of action trim, with the IDs it removed) took from the stream,
// by what the group had done with each then: never received, or received and not acknowledged.
void count_trimmed(const Facts& facts, Accounting& a) {
    enum : char { never, delivered, acked };
    std::vector<char> state(facts.entries.size(), never);
    for (const RecordFacts& f : facts.records) {
        const HistoryRecord& r = *f.r;
        if (f.entry >= 0 && r.op == Op::receive) state[f.entry] = delivered;
        if (f.entry >= 0 && r.op == Op::ack && state[f.entry] == delivered) state[f.entry] = acked;
        if (r.op != Op::fault || text_view(r.data, "action") != "trim" || text_view(r.data, "phase") != "ok") continue;
        const auto ids = r.data.find("trimmed_entries");
        if (ids == r.data.end() || !ids->is_array()) continue;
        for (const json& id : *ids) {
            if (!id.is_string()) continue;
            const std::string& text = id.get_ref<const std::string&>();
            char now = never;
            for (size_t e = 0; e < facts.entries.size(); ++e)
                if (facts.entries.key(static_cast<int>(e)) == text) now = state[e];
            if (now == never) {
                ++a.trimmed_undelivered;
                add_example(a.trimmed_undelivered_examples, text);
            } else if (now == delivered) {
                ++a.trimmed_pending;
                add_example(a.trimmed_pending_examples, text);
            }
        }
    }
}

}  // namespace

namespace {

using AP = AccountingPart;
using AF = AccountingFlag;
using A = Accounting;

// clang-format off
constexpr AccountingFigure k_figures[] = {
    {"published", &A::published, nullptr, "published", "published", "", AP::entries, AF::none},
    {"processed_once", &A::processed_once, nullptr, "processed once", "processed once", "", AP::entries, AF::none},
    {"duplicated", &A::duplicated, &A::duplicated_examples, "duplicated", "duplicated", "duplicated", AP::entries, AF::anomaly},
    {"lost", &A::lost, &A::lost_examples, "lost", "lost", "lost", AP::entries, AF::anomaly},
    {"dead_lettered", &A::dead_lettered, &A::dead_lettered_examples, "dead-lettered", "dead-lettered",
     "dead-lettered (XADDed to the dead-letter stream, acknowledged)", AP::beside, AF::flagged},
    {"trimmed_undelivered", &A::trimmed_undelivered, &A::trimmed_undelivered_examples, "trimmed before delivery",
     "trimmed before delivery", "trimmed before delivery (no trace in the PEL)", AP::beside, AF::anomaly},
    {"trimmed_pending", &A::trimmed_pending, &A::trimmed_pending_examples, "trimmed while pending",
     "trimmed while pending", "trimmed while pending (a PEL entry with no body)", AP::beside, AF::anomaly},
    {"redelivered", &A::redelivered, &A::redelivered_examples, "redelivered after ack", "redelivered after ack",
     "redelivered after ack", AP::entries, AF::anomaly},
    {"unexpected", &A::unexpected, &A::unexpected_examples, "unexpected", "unexpected", "unexpected", AP::entries, AF::anomaly},
    {"stale_overwrites", &A::stale_overwrites, &A::stale_examples, "stale overwrite", "stale overwrites", "stale overwrite",
     AP::entries, AF::flagged},
    {"pending", &A::pending, &A::pending_examples, "pending", "pending", "pending (received, never acknowledged)",
     AP::beside, AF::anomaly},
    {"never_delivered", &A::never_delivered, &A::never_delivered_examples, "never delivered", "never delivered",
     "never delivered", AP::beside, AF::anomaly},
    {"serialization_failures", &A::serialization_failures, &A::serialization_failure_examples,
     "serialization failure", "serialization failures", "serialization failures (40001, rolled back)", AP::beside,
     AF::none},
    {"unapplied", &A::unapplied, &A::unapplied_examples, "unapplied", "unapplied", "unapplied (every write refused)",
     AP::beside, AF::none},
    {"side_effects", &A::side_effects, nullptr, "side effect sent", "side effects sent", "", AP::side_effects, AF::none},
    {"side_effects_out_of_order", &A::side_effects_out_of_order, &A::side_effect_examples, "order out of version order",
     "orders out of version order", "side effects out of version order", AP::side_effects, AF::flagged},
    {"republished", &A::republished, &A::republished_examples, "event published again", "events published again", "",
     AP::per_event, AF::none},
    {"reapplied", &A::reapplied, &A::reapplied_examples, "event written again", "events written again", "",
     AP::per_event, AF::none},
    {"skipped", &A::skipped, nullptr, "entry skipped as a duplicate", "entries skipped as duplicates", "", AP::per_event,
     AF::none},
};
// clang-format on

}  // namespace

std::span<const AccountingFigure> accounting_figures() { return k_figures; }

const AccountingFigure* accounting_figure(std::string_view name) {
    for (const AccountingFigure& f : k_figures)
        if (f.name == name) return &f;
    return nullptr;
}

std::optional<std::string> published_split_violation(const Accounting& a) {
    int64_t sum = 0;
    bool within = true;
    for (int Accounting::*c : k_published_classes) {
        sum += a.*c;
        within = within && a.*c >= 0 && a.*c <= a.published;
    }
    if (within && sum == a.published && a.pending >= 0 && a.never_delivered >= 0 &&
        a.pending + a.never_delivered <= a.published)
        return std::nullopt;
    // Named as the figures' table names them, only once the check has failed.
    std::string terms;
    for (int Accounting::*c : k_published_classes)
        for (const AccountingFigure& f : k_figures)
            if (f.count == c) terms += fmt::format("{}{} {}", terms.empty() ? "" : " + ", f.name, a.*c);
    if (!within || sum != a.published) return fmt::format("published {} is not split into {}", a.published, terms);
    return fmt::format("pending {} and never delivered {} are not shares of published {}", a.pending,
                       a.never_delivered, a.published);
}

bool reported(const AccountingFigure& f, const Accounting& a) { return f.part != AP::side_effects || a.side_effects > 0; }

Accounting& Accounting::operator+=(const Accounting& o) {
    for (const AccountingFigure& f : k_figures) this->*f.count = add_clamped(this->*f.count, o.*f.count);
    return *this;
}

bool Accounting::clean() const {
    return std::none_of(std::begin(k_figures), std::end(k_figures),
                        [&](const AccountingFigure& f) { return f.flag != AF::none && this->*f.count > 0; });
}

namespace {

std::vector<StaleOverwrite> stale_overwrites_of(const Facts& facts) {
    std::vector<StaleOverwrite> out;
    std::map<int64_t, std::pair<int64_t, int>> newest;  // order -> (version, event id) applied
    for (const RecordFacts& f : facts.records) {
        const HistoryRecord* r = f.r;
        if (!is_applied_write(*r)) continue;
        const EventKey& ev = facts.events.key(f.ev);
        auto [it, first] = newest.emplace(ev.order, std::make_pair(ev.v, f.ev));
        if (first) continue;
        if (ev.v < it->second.first) {
            // A guarded UPDATE (CAS) on the event's own version applies only over an older one:
            // recorded after the newer write, it still committed before it (two consumers record
            // their writes a few µs after COMMIT, in either order). Not an overwrite. (A CAS on the
            // entry ID can be.)
            const std::optional<WriteMode> mode = write_mode_named(text_view(r->data, "mode"));
            const bool cas_on_event_version =
                mode && is_guarded_update(*mode) && int_field(r->data, "version", -1) == ev.v;
            if (!cas_on_event_version)
                out.push_back({ev.order, std::string(ev.type), std::string(facts.events.key(it->second.second).type)});
        } else {
            it->second = {ev.v, f.ev};
        }
    }
    return out;
}

std::vector<std::string> side_effects_out_of_order_of(const Facts& facts) {
    // order -> (seq, time, type, version) of each side effect it sent
    std::map<int64_t, std::vector<std::tuple<int64_t, int64_t, std::string_view, int64_t>>> sent;
    for (const RecordFacts& f : facts.records) {
        const HistoryRecord* r = f.r;
        if (r->op != Op::side_effect) continue;
        const EventKey& ev = facts.events.key(f.ev);
        sent[int_field(r->data, "order", ev.order)].emplace_back(int_field(r->data, "seq"), r->t_ns, ev.type,
                                                                 int_field(r->data, "version", ev.v));
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
        const auto [order, type, v] = event_key(r);
        recorded.push_back(SideEffectRow{int_field(r.data, "seq"), int_field(r.data, "order", order), std::string(type),
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
    return text_view(r.data, "result") == "ok" || (bool_field(r.data, "reply_lost") && has_entry(r));
}

namespace {

constexpr int kNotPublished = -1;
// An entry the XADD put on the primary but the producer's WAIT found on no replica: the producer
// took it as not published and sent its event again, so it is neither published (lost when
// missing) nor unexpected when a consumer read it from the primary.
constexpr int kUnconfirmed = -2;

bool unconfirmed_publish(const HistoryRecord& r) {
    return r.op == Op::publish && bool_field(r.data, "not_replicated") && has_entry(r);
}

// Which entries reached the stream, and what the jobs did with each.
struct EntryLedger {
    std::vector<int> published;       // entries in publish order
    std::vector<int> writes;          // entry -> writes of it, once published (else kNotPublished)
    std::vector<int> applied;         // entry -> writes of it that changed a row
    std::vector<char> dead;           // entry -> a consumer dead-lettered it
    std::vector<int> first_entry_of;  // event -> the first ok publish's entry
};

EntryLedger publish_ledger(const Facts& facts) {
    EntryLedger l;
    l.writes.assign(facts.entries.size(), kNotPublished);
    l.applied.assign(facts.entries.size(), 0);
    l.dead.assign(facts.entries.size(), 0);
    l.first_entry_of.assign(facts.events.size(), -1);
    for (const RecordFacts& f : facts.records) {
        if (f.entry >= 0 && l.writes[f.entry] == kNotPublished && unconfirmed_publish(*f.r))
            l.writes[f.entry] = kUnconfirmed;
        if (!f.reached || f.entry < 0 || l.writes[f.entry] != kNotPublished) continue;
        l.writes[f.entry] = 0;
        l.published.push_back(f.entry);
        if (l.first_entry_of[f.ev] < 0) l.first_entry_of[f.ev] = f.entry;
    }
    return l;
}

// Walks the receives, acks and writes in time order: counts each published entry's writes in the
// ledger, and the redeliveries and unexpected entries in the accounting.
class DeliveryWalk {
public:
    DeliveryWalk(const Facts& facts, EntryLedger& ledger, Accounting& a)
        : m_facts(facts), m_l(ledger), m_a(a), m_acked(facts.entries.size(), 0), m_redelivered(facts.entries.size(), 0) {}

    void run() {
        for (const RecordFacts& f : m_facts.records) {
            if (f.r->op == Op::receive)
                receive(f);
            else if (f.r->op == Op::ack && f.entry >= 0)
                m_acked[f.entry] = 1;
            else if (f.r->op == Op::write)
                write(f);
            else if (f.r->op == Op::dead_letter && f.entry >= 0)
                m_l.dead[f.entry] = 1;
        }
        m_a.unexpected = static_cast<int>(m_unexpected.size());
    }

private:
    struct LastReceived {
        std::string_view actor;
        int entry, ev;
    };

    std::string name(int entry) const { return m_facts.entry_text(entry); }

    // The actor's entry in m_last_received, nullptr before its first receive.
    LastReceived* last_of(const std::string& actor) {
        for (auto& l : m_last_received)
            if (l.actor == actor) return &l;
        return nullptr;
    }

    void flag_unexpected(const std::string& what) {
        if (m_unexpected.insert(what).second) add_example(m_a.unexpected_examples, what);
    }

    void receive(const RecordFacts& f) {
        LastReceived* last = last_of(f.r->actor);
        if (!last) last = &m_last_received.emplace_back(LastReceived{f.r->actor, -1, -1});
        last->entry = f.entry;
        last->ev = f.ev;
        if (f.entry < 0 || m_l.writes[f.entry] == kNotPublished)
            flag_unexpected(f.entry < 0 ? "(receive without an entry id)" : name(f.entry));
        if (f.entry >= 0 && m_acked[f.entry] && !m_redelivered[f.entry]) {
            m_redelivered[f.entry] = 1;
            ++m_a.redelivered;
            add_example(m_a.redelivered_examples, name(f.entry));
        }
    }

    void write(const RecordFacts& f) {
        int entry = f.entry;
        if (entry < 0) {
            // An older history: the write names its event only. It is the job of the entry its
            // actor received last, when that was this event; else the event's first publish.
            const LastReceived* last = last_of(f.r->actor);
            entry = last && last->ev == f.ev && last->entry >= 0 ? last->entry : m_l.first_entry_of[f.ev];
        }
        if (entry >= 0 && m_l.writes[entry] == kUnconfirmed) return;  // a job of an entry never taken as published
        if (entry >= 0 && m_l.writes[entry] != kNotPublished) {
            ++m_l.writes[entry];
            if (is_applied_write(*f.r)) ++m_l.applied[entry];
        } else if (entry >= 0) {
            flag_unexpected(name(entry));
        } else {
            const EventKey& ev = m_facts.events.key(f.ev);
            flag_unexpected(fmt::format("(no entry) #{} {} v={}", ev.order, ev.type, ev.v));
        }
    }

    const Facts& m_facts;
    EntryLedger& m_l;
    Accounting& m_a;
    std::vector<char> m_acked, m_redelivered;  // by entry
    std::set<std::string> m_unexpected;
    std::vector<LastReceived> m_last_received;  // per actor: the entry and event it received last
};

// Each published entry: lost (no write), processed once, or duplicated; and unapplied when none of
// its writes changed a row.
void count_entry_outcomes(const Facts& facts, const EntryLedger& l, Accounting& a) {
    a.published = static_cast<int>(l.published.size());
    for (const int entry : l.published) {
        const int n = l.writes[entry];
        if (n == 0 && l.dead[entry]) {
            ++a.dead_lettered;
            add_example(a.dead_lettered_examples, facts.entry_text(entry));
        } else if (n == 0) {
            ++a.lost;
            add_example(a.lost_examples, facts.entry_text(entry));
        } else if (n == 1) {
            ++a.processed_once;
        } else {
            ++a.duplicated;
            add_example(a.duplicated_examples, facts.entry_text(entry));
        }
        if (n > 0 && l.applied[entry] == 0) {
            ++a.unapplied;
            add_example(a.unapplied_examples, facts.entry_text(entry));
        }
    }
}

// Per event: how many entries carried it (ok publishes), how many jobs wrote it, and how many
// writes the inbox skipped.
void count_event_repeats(const Facts& facts, Accounting& a) {
    const size_t n_events = facts.events.size();
    auto event_text = [&](int ev, int n) {
        const EventKey& k = facts.events.key(ev);
        return fmt::format("#{} {} v{} ×{}", k.order, k.type, k.v, n);
    };
    std::vector<std::vector<int>> entries_of(n_events);  // event -> the entries that carried it
    std::vector<int> writes_of(n_events, 0);
    for (const RecordFacts& f : facts.records) {
        if (f.reached && f.entry >= 0) {
            std::vector<int>& list = entries_of[f.ev];
            if (std::find(list.begin(), list.end(), f.entry) == list.end()) list.push_back(f.entry);
        }
        if (f.r->op != Op::write) continue;
        if (text_view(f.r->data, "dedupe") == "skipped")
            ++a.skipped;
        else
            ++writes_of[f.ev];
    }
    const std::vector<int> events_in_order = facts.events.sorted_ids();  // as the examples list them
    for (const int ev : events_in_order)
        if (entries_of[ev].size() > 1) {
            ++a.republished;
            add_example(a.republished_examples, event_text(ev, static_cast<int>(entries_of[ev].size())));
        }
    for (const int ev : events_in_order)
        if (writes_of[ev] > 1) {
            ++a.reapplied;
            add_example(a.reapplied_examples, event_text(ev, writes_of[ev]));
        }
}

// The stale overwrites (handed to stale_out too) and the side effects, sent and out of order.
void count_stale_and_side_effects(const std::vector<HistoryRecord>& history, const Facts& facts, Accounting& a,
                                  std::vector<StaleOverwrite>* stale_out) {
    std::vector<StaleOverwrite> stale = stale_overwrites_of(facts);
    a.stale_overwrites = static_cast<int>(stale.size());
    for (const auto& so : stale) add_example(a.stale_examples, so.describe());
    if (stale_out) *stale_out = std::move(stale);
    a.side_effects = static_cast<int>(
        std::count_if(history.begin(), history.end(), [](const HistoryRecord& r) { return r.op == Op::side_effect; }));
    const std::vector<std::string> inverted = side_effects_out_of_order_of(facts);
    a.side_effects_out_of_order = static_cast<int>(inverted.size());
    for (const auto& what : inverted) add_example(a.side_effect_examples, what);
}

}  // namespace

Accounting account(const std::vector<HistoryRecord>& history, std::vector<StaleOverwrite>* stale_out) {
    Accounting a;
    const Facts facts = facts_in_time_order(history);
    EntryLedger ledger = publish_ledger(facts);
    DeliveryWalk(facts, ledger, a).run();
    count_entry_outcomes(facts, ledger, a);
    count_left_over(history, facts, ledger.published, a);
    count_trimmed(facts, a);
    count_event_repeats(facts, a);
    count_stale_and_side_effects(history, facts, a, stale_out);
    for (const HistoryRecord& r : history)
        if (r.op == Op::serialization_failure) {
            ++a.serialization_failures;
            add_example(a.serialization_failure_examples, std::string(record_entry(r)));
        }
    const std::optional<std::string> split = published_split_violation(a);
    RELAB_CHECK(!split, "every published entry in exactly one class (accounting.h): " + split.value_or(""));
    return a;
}

namespace {

// "1 stale overwrite", "2 stale overwrites".
std::string figure_count_text(const AccountingFigure& f, const Accounting& a) {
    const int n = a.*f.count;
    return fmt::format("{} {}", n, n == 1 ? f.one : f.many);
}

// The figures of `part`, in the table's order, as count_text, joined by `separator`.
std::string part_text(const Accounting& a, AccountingPart part, const char* separator) {
    std::vector<std::string> texts;
    for (const AccountingFigure& f : k_figures)
        if (f.part == part) texts.push_back(figure_count_text(f, a));
    return fmt::format("{}", fmt::join(texts, separator));
}

}  // namespace

std::string accounting_text(const Accounting& a) {
    std::string text = part_text(a, AP::entries, " · ");
    if (a.side_effects > 0) text += " · " + part_text(a, AP::side_effects, " · ");
    return text;
}

std::string republish_text(const Accounting& a) {
    if (std::none_of(std::begin(k_figures), std::end(k_figures),
                     [&](const AccountingFigure& f) { return f.part == AP::per_event && a.*f.count > 0; }))
        return {};
    std::vector<std::string> texts;
    for (const AccountingFigure& f : k_figures) {
        if (f.part != AP::per_event) continue;
        std::string text = figure_count_text(f, a);
        if (f.examples && !(a.*f.examples).empty()) text += fmt::format(" ({})", fmt::join(a.*f.examples, ", "));
        texts.push_back(std::move(text));
    }
    return fmt::format("{}", fmt::join(texts, " · "));
}

std::string accounting_more_text(const Accounting& a) {
    std::vector<std::string> parts;
    for (const AccountingFigure& f : k_figures)
        if ((f.part == AP::beside || f.part == AP::per_event) && a.*f.count > 0) parts.push_back(figure_count_text(f, a));
    if (a.side_effects > 0) parts.push_back(part_text(a, AP::side_effects, ", "));
    return fmt::format("{}", fmt::join(parts, " · "));
}

std::vector<std::string> accounting_details(const Accounting& a) {
    std::vector<std::string> out;
    for (const AccountingFigure& f : k_figures) {
        const int n = a.*f.count;
        if (f.detail.empty() || n == 0) continue;
        std::string text = fmt::format("{} {}", f.detail, n);
        const std::vector<std::string> none;
        const std::vector<std::string>& examples = f.examples ? a.*f.examples : none;
        if (!examples.empty()) {
            text += fmt::format(": {}", fmt::join(examples, ", "));
            if (static_cast<size_t>(n) > examples.size()) text += ", …";
        }
        out.push_back(std::move(text));
    }
    return out;
}

}  // namespace relab
