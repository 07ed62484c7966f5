// The plain-text report, in the article's own layout (article 000, sections 2, 3 and 6): a heading
// per lab, the timeline of the selected trials, the final status of every trial, the wrong count
// beside what the article documented, and whether the scenario's expectation held.
#include "report/reporter.h"

#include "check/record_fields.h"
#include "ports/seed_text.h"
#include "report/text/delivery_label.h"
#include "report/article_words.h"
#include "report/text/idem_text.h"
#include "report/compare/lab_summary.h"
#include "report/shard_facts.h"
#include "report/text/soak_table.h"
#include "report/text/timeline.h"
#include "util/json_number.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace relab {

namespace {

// Every phrase the report prints, once per language.
struct Words {
    const char* trial;
    const char* empty_stream;
    const char* received;
    const char* got_lock;  // key, ttl, attempts
    const char* wrote;
    const char* stale;
    const char* released;
    const char* lock_expired;
    const char* failed;
    const char* blip;
    const char* retry_in;       // ms
    const char* retry_again;    // ms
    const char* no_retry;
    const char* final_status;
    const char* no_row;
    const char* wrong_state;    // expected, wrong, total
    const char* documented;
    const char* expectation;
    const char* held;
    const char* broken;
    const char* lock_release;
    const char* delex_needs;
    const char* delivery;       // p50, max, samples
    const char* skipped;
    const char* wrong_cases;    // wrong, total
    const char* buffer_hold;    // entry, event, waiting_for
    const char* buffer_in_order;  // entry, event, held_ms
    const char* buffer_gap;     // entry, event, held_ms, skipped versions
    const char* late;           // entry, event, last applied, what it did
    const char* late_drop;
    const char* late_apply;
    const char* dispatch_key;     // entry, event, key, ahead
    const char* dispatch_shared;  // entry, event, ahead
    const char* take;             // entry, event, waited ms
    const char* throughput;       // jobs, span ms, jobs/s, min, max, trials
    const char* beside;           // name, its jobs/s, its trials, the lab's over it
    const char* batch_ack;        // entries, first entry, last entry
    const char* batch_ack_one;    // entry: a read of one entry
    const char* batch_commit;     // writes: write.commit "batch", the writes of the one transaction
    const char* serialization;    // entry, event, isolation, attempt, snapshot version
    const char* serialization_retry;
    const char* serialization_gave_up;
};

constexpr Words k_en{
    "trial",
    "(empty)",
    "received",
    "got {} (SET NX PX {}) after {} attempt(s)",
    "wrote",
    "(skipped: stale)",
    "released lock:",
    "(lock expired, no longer ours)",
    "FAILED",
    "(simulated network blip)",
    "→ retry in {} ms",
    "→ retry in another {} ms",
    "→ no retry scheduled",
    "final status per trial:",
    "(no row)",
    "→ wrong final state (not {}): {}/{}",
    "documented:",
    "expectation:",
    "held",
    "BROKEN",
    "lock release:",
    "(DELEX needs Redis 8.4)",
    "delivery XADD → receipt: p50 {} ms, max {} ms ({} samples)",
    "skipped:",
    "→ cases with a wrong final row: {}/{}",
    "holds {} {} in its reorder buffer (waiting for v={})",
    "lets {} {} through in order (held {} ms)",
    "lets {} {} through after {} ms: gave up waiting for v={}",
    "got {} {} late (v={} already applied) → {}",
    "dropped (acknowledged, never applied)",
    "applied anyway",
    "puts {} {} on #{}'s FIFO ({} before it)",
    "puts {} {} on the shared FIFO ({} waiting before it)",
    "takes {} {} (waited {} ms)",
    "throughput: {} jobs written by {} ms = {} jobs/s (median of {} trial(s); min {}, max {})",
    "beside it, {} on the same workload in the same run: {} jobs/s (median of {} trial(s)); this lab's is {}x it",
    "acknowledged {} entries with one XACK ({} … {})",
    "acknowledged {} (the read's only entry)",
    "(one transaction of {} writes)",
    "'s transaction for {} {} ({}, try {}, snapshot v={}) refused: 40001 could not serialize, rolled back",
    "→ runs it again",
    "→ gives up: acknowledges it unwritten",
};

constexpr Words k_vi{
    "lần",
    "(trống)",
    "nhận",
    "lấy được {} (SET NX PX {}) sau {} lần thử",
    "ghi",
    "(bỏ qua: bản cũ)",
    "nhả lock:",
    "(lock đã hết hạn, không còn là của mình)",
    "LỖI",
    "(giả lập network blip)",
    "→ hẹn retry sau {} ms",
    "→ hẹn retry sau {} ms nữa",
    "→ không hẹn retry nữa",
    "status cuối từng lần:",
    "(không có dòng)",
    "→ SAI trạng thái cuối (không phải {}): {}/{} lần",
    "bài viết:",
    "kỳ vọng:",
    "đạt",
    "KHÔNG ĐẠT",
    "nhả lock bằng:",
    "(DELEX cần Redis 8.4)",
    "thời gian giao XADD → nhận: p50 {} ms, max {} ms ({} mẫu)",
    "bỏ qua:",
    "→ số trường hợp có dòng cuối SAI: {}/{}",
    "giữ {} {} trong reorder buffer (chờ v={})",
    "cho {} {} đi tiếp đúng thứ tự (đã giữ {} ms)",
    "cho {} {} đi tiếp sau {} ms: thôi chờ v={}",
    "nhận {} {} muộn (đã áp v={}) → {}",
    "bỏ đi (ACK, không áp)",
    "vẫn áp",
    "đưa {} {} vào hàng FIFO của #{} ({} việc đứng trước)",
    "đưa {} {} vào hàng FIFO chung ({} việc đứng trước)",
    "lấy {} {} (đã chờ {} ms)",
    "throughput: {} job ghi xong lúc {} ms = {} job/giây (trung vị {} lần; min {}, max {})",
    "bên cạnh, {} trên cùng workload trong cùng lần chạy: {} job/giây (trung vị {} lần); lab này gấp {} lần",
    "ACK {} entry bằng một lệnh XACK ({} … {})",
    "ACK {} (entry duy nhất của lần đọc)",
    "(một transaction gồm {} lệnh ghi)",
    ": transaction cho {} {} ({}, lần {}, snapshot v={}) bị từ chối: 40001 could not serialize, đã rollback",
    "→ chạy lại",
    "→ bỏ cuộc: ACK mà không ghi",
};

// A field of a record's data as text: strings as they are, anything else as JSON, "?" if absent.
std::string field_text(const nlohmann::json& data, const char* key) {
    if (!data.is_object()) return "?";
    const auto it = data.find(key);
    if (it == data.end() || it->is_null()) return "?";
    if (it->is_string()) return it->get<std::string>();
    return it->dump();
}

int64_t field_int(const nlohmann::json& data, const char* key, int64_t fallback) {
    if (!data.is_object()) return fallback;
    const auto it = data.find(key);
    if (it == data.end()) return fallback;
    if (it->is_number()) return json_number_as<int64_t>(*it).value_or(fallback);  // 1e300: the fallback
    if (it->is_string()) {
        try {
            return std::stoll(it->get<std::string>());
        } catch (const std::exception&) {
            return fallback;
        }
    }
    return fallback;
}

// "created (v=1)", or "#42 created (v=1)" when the lab has several orders.
std::string event_text(const nlohmann::json& event, bool several_orders) {
    std::string text;
    if (several_orders) text = "#" + field_text(event, "order") + " ";
    return text + field_text(event, "type") + " (v=" + field_text(event, "v") + ")";
}

nlohmann::json event_of(const nlohmann::json& data) {
    if (data.is_object() && data.contains("event") && data.at("event").is_object()) return data.at("event");
    return nlohmann::json::object();
}

std::string entry_text(const StreamEntry& e, bool several_orders) {
    std::string v = e.field("v");
    if (v.empty()) v = e.field("version");
    std::string text = e.id + " ";
    if (several_orders) text += "#" + e.field("order") + " ";
    return text + e.field("type") + " (v=" + v + ")";
}

// Milliseconds rounded down, right-aligned in 4 characters: "t=   2 ms", "t=1005 ms".
std::string time_text(int64_t t_ns) {
    const int64_t ms = t_ns >= 0 ? t_ns / 1'000'000 : -((-t_ns + 999'999) / 1'000'000);
    return fmt::format("t={:>4} ms", ms);
}

// How much longer the producer will have waited for an event at its next attempt than at this
// one, both counted from the first attempt: the article's "backoff x2" (500 ms, then 1000 ms).
std::string backoff_text(const nlohmann::json& data, int64_t t_ns, int64_t first_attempt_ns,
                         int64_t retry_in_ms) {
    if (data.contains("backoff") && data.at("backoff").is_number())
        return fmt::format(" (backoff x{})", data.at("backoff").dump());
    const double waited_ms = static_cast<double>(t_ns - first_attempt_ns) / 1e6;
    if (waited_ms <= 0) return {};
    const double factor = std::round((waited_ms + static_cast<double>(retry_in_ms)) / waited_ms * 10) / 10;
    if (factor <= 1.0) return {};
    return fmt::format(" (backoff x{})", factor);
}

class TimelinePrinter {
public:
    TimelinePrinter(const Words& w, const LabResult& lab, const TrialOutcome& trial)
        : m_w(w), m_lab(lab), m_trial(trial), m_several_orders(lab.scenario.orders.size() > 1) {
        for (const auto& r : trial.history)
            if (r.op == Op::publish && field_text(r.data, "result") == "fail") m_show_publish = true;
    }

    void print(std::ostream& out) {
        for (size_t i = 0; i < m_trial.history.size(); ++i) {
            m_at = i;
            const std::string text = describe(m_trial.history[i]);
            if (!text.empty()) out << "  " << time_text(m_trial.history[i].t_ns) << "  " << text << '\n';
        }
    }

private:
    // An entry's XACK is not printed (its job's write says it is over), but one XACK for a whole
    // read (stream.ack "batch") is, once, at the first of its records: it is when the read's jobs
    // became safe from a crash.
    std::string describe_batch_ack(const HistoryRecord& r) {
        if (!r.data.contains("batch")) return {};
        const int64_t n = r.data.at("batch").get<int64_t>();
        int64_t& left = m_batch_ack_left[r.actor];
        if (left > 0) {
            --left;
            return {};
        }
        left = n - 1;
        if (n == 1) return r.actor + " " + fmt::format(fmt::runtime(m_w.batch_ack_one), field_text(r.data, "entry"));
        std::string last = field_text(r.data, "entry");
        for (size_t i = m_at + 1, seen = 1; i < m_trial.history.size() && seen < static_cast<size_t>(n); ++i)
            if (m_trial.history[i].op == Op::ack && m_trial.history[i].actor == r.actor) {
                last = field_text(m_trial.history[i].data, "entry");
                ++seen;
            }
        return r.actor + " " + fmt::format(fmt::runtime(m_w.batch_ack), n, field_text(r.data, "entry"), last);
    }

    // The record as one line of text without its time, or empty when it is not printed.
    std::string describe(const HistoryRecord& r) {
        const auto& d = r.data;
        if (r.op == Op::ack) return describe_batch_ack(r);
        if (r.op == Op::start) return {};
        if (r.op == Op::receive) {
            const std::string delivery = delivery_label(d);
            return fmt::format("{} {} {} {}", r.actor, m_w.received, field_text(d, "entry"),
                               event_text(event_of(d), m_several_orders)) +
                   (delivery.empty() ? "" : " (" + delivery + ")");
        }
        if (r.op == Op::claim) return describe_claim(r);
        if (r.op == Op::fault && r.actor == "nemesis") return describe_fault(r);
        if (r.op == Op::lock_acquire)
            return r.actor + " " +
                   fmt::format(fmt::runtime(m_w.got_lock), field_text(d, "key"), field_text(d, "ttl_ms"),
                               field_text(d, "attempts"));
        if (r.op == Op::write) return describe_write(r);
        if (r.op == Op::lock_release) {
            std::string method = d.contains("method") ? field_text(d, "method") : m_lab.lock_release_method;
            const int64_t result = field_int(d, "result", -1);
            std::string text = fmt::format("{} {} {} → {}", r.actor, m_w.released, method, field_text(d, "result"));
            if (result == 0) text += std::string(" ") + m_w.lock_expired;
            return text;
        }
        if (r.op == Op::side_effect) {
            const nlohmann::json ev = event_of(d);
            return fmt::format("{} sent {}'s side effect (#{} v={}) → tmp_side_effects seq {}{}", r.actor,
                               field_text(ev, "type"), field_text(d, "order"), field_text(d, "version"),
                               field_text(d, "seq"), record_fields::bool_field(d, "applied", true) ? "" : ", its write refused");
        }
        if (r.op == Op::publish) return m_show_publish ? describe_publish(r) : std::string{};
        if (r.op == Op::buffer_hold)
            return r.actor + " " + fmt::format(fmt::runtime(m_w.buffer_hold), field_text(d, "entry"),
                                               event_text(event_of(d), m_several_orders), field_text(d, "waiting_for"));
        if (r.op == Op::buffer_release) {
            if (field_text(d, "reason") == "gap_timeout") {
                std::vector<std::string> skipped;
                if (d.contains("skipped") && d.at("skipped").is_array())
                    for (const auto& v : d.at("skipped")) skipped.push_back(v.dump());
                return r.actor + " " + fmt::format(fmt::runtime(m_w.buffer_gap), field_text(d, "entry"),
                                                   event_text(event_of(d), m_several_orders), field_text(d, "held_ms"),
                                                   fmt::join(skipped, ","));
            }
            return r.actor + " " + fmt::format(fmt::runtime(m_w.buffer_in_order), field_text(d, "entry"),
                                               event_text(event_of(d), m_several_orders), field_text(d, "held_ms"));
        }
        if (r.op == Op::late)
            return r.actor + " " + fmt::format(fmt::runtime(m_w.late), field_text(d, "entry"),
                                               event_text(event_of(d), m_several_orders), field_text(d, "last_applied"),
                                               field_text(d, "action") == "drop" ? m_w.late_drop : m_w.late_apply);
        if (r.op == Op::dispatch) {
            const std::string key = field_text(d, "key");
            if (key == "0")
                return r.actor + " " + fmt::format(fmt::runtime(m_w.dispatch_shared), field_text(d, "entry"),
                                                   event_text(event_of(d), m_several_orders), field_text(d, "ahead"));
            return r.actor + " " + fmt::format(fmt::runtime(m_w.dispatch_key), field_text(d, "entry"),
                                               event_text(event_of(d), m_several_orders), key, field_text(d, "ahead"));
        }
        if (r.op == Op::take)
            return r.actor + " " + fmt::format(fmt::runtime(m_w.take), field_text(d, "entry"),
                                               event_text(event_of(d), m_several_orders), field_text(d, "waited_ms"));
        if (r.op == Op::serialization_failure) return describe_serialization_failure(r);
        // An op this reporter does not know yet: show it raw rather than hide it.
        return r.actor + " " + to_string(r.op) + (d.empty() ? std::string{} : " " + d.dump());
    }

    // A job's transaction PostgreSQL refused with 40001 (write.isolation), and what the consumer did next.
    std::string describe_serialization_failure(const HistoryRecord& r) const {
        const auto& d = r.data;
        return r.actor +
               fmt::format(fmt::runtime(m_w.serialization), field_text(d, "entry"), event_text(event_of(d), m_several_orders),
                           field_text(d, "isolation"), field_text(d, "attempt"), field_text(d, "snapshot_version")) +
               " " + (record_fields::bool_field(d, "retry", true) ? m_w.serialization_retry : m_w.serialization_gave_up);
    }

    // One XAUTOCLAIM that claimed something: what it took over and what was gone from the stream.
    static std::string describe_claim(const HistoryRecord& r) {
        const auto& d = r.data;
        auto ids = [&](const char* key) {
            std::vector<std::string> out;
            if (d.is_object() && d.contains(key) && d.at(key).is_array())
                for (const auto& id : d.at(key)) out.push_back(id.is_string() ? id.get<std::string>() : id.dump());
            return out;
        };
        const auto claimed = ids("claimed"), deleted = ids("deleted");
        std::string text = fmt::format("{} XAUTOCLAIM (min idle {} ms) claimed {}", r.actor, field_text(d, "min_idle_ms"),
                                       claimed.size());
        if (!claimed.empty()) text += fmt::format(": {}", fmt::join(claimed, ", "));
        if (!deleted.empty()) text += fmt::format("; deleted from the stream: {}", fmt::join(deleted, ", "));
        return text;
    }

    // A fault of the lab's schedule, as Jepsen's nemesis logs it: the invocation, then how it ended.
    std::string describe_fault(const HistoryRecord& r) {
        const auto& d = r.data;
        const std::string phase = field_text(d, "phase");
        const std::string what = fmt::format("nemesis: fault {} {}", field_text(d, "fault"), fault_words(d));
        const std::string index = field_text(d, "fault");
        if (phase == "invoke") {
            m_fault_invoked_ns[index] = r.t_ns;
            const std::string sentence = d.contains("text") ? " — " + field_text(d, "text") : std::string{};
            return what + sentence + " …";
        }
        std::string took;
        const auto it = m_fault_invoked_ns.find(index);
        if (it != m_fault_invoked_ns.end()) took = fmt::format(" ({:.1f} ms)", static_cast<double>(r.t_ns - it->second) / 1e6);
        if (phase == "ok") return what + " → ok" + took;
        if (phase == "fail")
            return what + " → " + m_w.failed + took + (d.contains("error") ? ": " + field_text(d, "error") : std::string{});
        return what + " → " + phase;
    }

    std::string describe_write(const HistoryRecord& r) {
        const auto& d = r.data;
        // A record without a mode (or of a mode this relab does not know) reads as a plain UPDATE.
        const WriteModeInfo& mode = write_mode_info(write_mode_named(field_text(d, "mode")).value_or(WriteMode::plain));
        std::string text = r.actor + " " + m_w.wrote + " ";
        if (m_several_orders) text += "#" + field_text(event_of(d), "order") + " ";
        text += "status=" + field_text(d, "status");
        // P4: the change added, or the amount set, before the version it is guarded by.
        if (mode.amount == AmountWrite::add) text += " amount+=" + field_text(d, "delta");
        if (mode.amount == AmountWrite::set) text += " amount=" + field_text(d, "amount");
        if (mode.sets_version) text += " version=" + field_text(d, "version");
        const std::string affected = field_text(d, "affected");
        switch (mode.statement) {
            case WriteStatement::upsert: {
                const std::string action = field_text(d, "row_action");
                return text + " → INSERT … ON CONFLICT: " +
                       (action == "none" ? "0 rows (refused: the row's version is not older)" : "row " + action);
            }
            case WriteStatement::insert_then_update:
                if (record_fields::bool_field(d, "insert_conflict"))
                    return text + " → INSERT: ERROR 23505 unique_violation → UPDATE " + affected;
                return text + " → INSERT " + affected;
            case WriteStatement::update: break;
        }
        text += " → UPDATE " + affected;
        if (mode.guard != VersionGuard::none && affected == "0") text += std::string(" ") + m_w.stale;
        if (const int64_t batch = field_int(d, "batch", 0); batch > 0)
            text += " " + fmt::format(fmt::runtime(m_w.batch_commit), batch);
        return text;
    }

    std::string describe_publish(const HistoryRecord& r) {
        const auto& d = r.data;
        const nlohmann::json event = event_of(d);
        const int64_t attempt = field_int(d, "attempt", 1);
        const bool ok = field_text(d, "result") == "ok";
        const std::string key = event.dump();
        if (attempt <= 1) m_first_attempt_ns[key] = r.t_ns;

        std::string text = "producer: ";
        if (attempt <= 1)
            text += "publish " + event_text(event, m_several_orders);
        else {
            text += fmt::format("retry #{} ", attempt - 1);
            if (m_several_orders) text += "#" + field_text(event, "order") + " ";
            text += field_text(event, "type");
        }
        if (ok)
            return text + " OK → " + field_text(d, "entry") +
                   (record_fields::bool_field(d, "idmp_known") ? " (XADD IDMP: the entry the stream already had, nothing added)" : "");

        text += std::string(" ") + m_w.failed;
        if (attempt <= 1) {
            const std::string reason = d.contains("reason") ? "(" + field_text(d, "reason") + ")" : m_w.blip;
            text += " " + reason;
        }
        if (!d.contains("retry_in_ms")) return text + " " + m_w.no_retry;
        const int64_t retry_in_ms = field_int(d, "retry_in_ms", 0);
        if (attempt <= 1) return text + " " + fmt::format(fmt::runtime(m_w.retry_in), retry_in_ms);
        text += " " + fmt::format(fmt::runtime(m_w.retry_again), retry_in_ms);
        const auto first = m_first_attempt_ns.find(key);
        if (first != m_first_attempt_ns.end()) text += backoff_text(d, r.t_ns, first->second, retry_in_ms);
        return text;
    }

    const Words& m_w;
    const LabResult& m_lab;
    const TrialOutcome& m_trial;
    bool m_several_orders;
    bool m_show_publish = false;
    size_t m_at = 0;                                  // the record print() is describing
    std::map<std::string, int64_t> m_batch_ack_left;  // per actor: records of its last batch XACK not yet passed
    std::map<std::string, int64_t> m_first_attempt_ns;  // per event, as JSON text
    std::map<std::string, int64_t> m_fault_invoked_ns;  // per fault index, as text
};

}  // namespace

// The "final status per trial" line lists at most this many trials.
constexpr size_t k_statuses_shown = 50;
// The accounting lists the details of at most this many trials.
constexpr size_t k_accounting_trials_shown = 5;

std::vector<const TrialOutcome*> selected_trials(const std::vector<TrialOutcome>& trials, TimelineSelection sel) {
    std::vector<const TrialOutcome*> out;
    if (trials.empty()) return out;
    switch (sel) {
        case TimelineSelection::none: break;
        case TimelineSelection::first: out.push_back(&trials.front()); break;
        case TimelineSelection::all:
            for (const auto& t : trials) out.push_back(&t);
            break;
        case TimelineSelection::wrong:
            for (const auto& t : trials)
                if (t.wrong) out.push_back(&t);
            break;
        case TimelineSelection::first_and_wrong: {
            out.push_back(&trials.front());
            const auto it = std::find_if(trials.begin(), trials.end(), [](const TrialOutcome& t) { return t.wrong; });
            if (it != trials.end() && it != trials.begin()) out.push_back(&*it);
            break;
        }
    }
    return out;
}

namespace {

const OrderRow* find_row(const TrialOutcome& t, int64_t id) {
    for (const auto& row : t.final_rows)
        if (row.id == id) return &row;
    return nullptr;
}

// One trial's entry on the "final status per trial" line.
std::string trial_status_text(const Words& w, const Scenario& s, const TrialOutcome& t) {
    const char* cross = "✕";
    if (s.orders.size() <= 1) {
        const OrderRow* row = nullptr;
        if (!s.orders.empty())
            row = find_row(t, s.orders.front().id);
        else if (!t.final_rows.empty())
            row = &t.final_rows.front();
        return (row ? row_state_text(*row, carries_amounts(s)) : std::string(w.no_row)) + (t.wrong ? cross : "");
    }
    std::string text;
    for (const auto& order : s.orders) {
        const OrderRow* row = find_row(t, order.id);
        const bool wrong = !row || !order.expected_final.matches(*row);
        if (!text.empty()) text += ' ';
        text += fmt::format("#{}={}{}", order.id, row ? row_state_text(*row, carries_amounts(s)) : std::string(w.no_row),
                            wrong ? cross : "");
    }
    return text;
}

// Code points, so Vietnamese text lines up like ASCII (combining marks aside).
size_t display_width(const std::string& s) {
    return static_cast<size_t>(
        std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

bool looks_numeric(const std::string& s) {
    if (s.empty()) return false;
    size_t i = s[0] == '-' ? 1 : 0;
    if (i == s.size()) return false;
    bool dot = false;
    for (; i < s.size(); ++i) {
        if (s[i] == '.' && !dot)
            dot = true;
        else if (s[i] < '0' || s[i] > '9')
            return false;
    }
    return true;
}

void rstrip(std::string& s) {
    while (!s.empty() && s.back() == ' ') s.pop_back();
}

// Rows as psql prints them: header centred, numbers right-aligned, text left-aligned, no trailing
// blanks. Without column names only the rows are printed.
void print_psql_table(std::ostream& out, const std::vector<std::string>& columns,
                      const std::vector<std::vector<std::string>>& rows) {
    size_t ncols = columns.size();
    for (const auto& row : rows) ncols = std::max(ncols, row.size());
    if (ncols == 0) return;
    std::vector<size_t> width(ncols, 0);
    std::vector<bool> numeric(ncols, !rows.empty());
    for (size_t c = 0; c < columns.size(); ++c) width[c] = display_width(columns[c]);
    for (const auto& row : rows)
        for (size_t c = 0; c < ncols; ++c) {
            const std::string cell = c < row.size() ? row[c] : std::string{};
            width[c] = std::max(width[c], display_width(cell));
            if (!looks_numeric(cell)) numeric[c] = false;
        }

    auto print_line = [&](auto&& cell_text) {
        std::string line = " ";
        for (size_t c = 0; c < ncols; ++c) {
            if (c > 0) line += " | ";
            line += cell_text(c);
        }
        rstrip(line);
        out << line << '\n';
    };
    if (!columns.empty()) {
        print_line([&](size_t c) {
            const std::string name = c < columns.size() ? columns[c] : std::string{};
            const size_t pad = width[c] - display_width(name);
            return std::string(pad / 2, ' ') + name + std::string(pad - pad / 2, ' ');
        });
        std::string rule;
        for (size_t c = 0; c < ncols; ++c) {
            if (c > 0) rule += '+';
            rule += std::string(width[c] + 2, '-');
        }
        out << rule << '\n';
    }
    for (const auto& row : rows)
        print_line([&](size_t c) {
            const std::string cell = c < row.size() ? row[c] : std::string{};
            const std::string pad(width[c] - display_width(cell), ' ');
            return numeric[c] ? pad + cell : cell + pad;
        });
}

class TextReporter : public Reporter {
public:
    explicit TextReporter(const TextOptions& opts) : m_opts(opts), m_w(opts.lang == Lang::vi ? k_vi : k_en) {}

    void report(const RunReport& run, std::ostream& out) override {
        for (const auto& lab : run.labs) report_lab(lab, out);
    }

    void report_lab(const LabResult& lab, std::ostream& out) const {
        const Scenario& s = lab.scenario;
        out << "### " << pick(m_opts.lang, s.title, s.title_vi);
        if (!s.output.empty()) out << "   (" << s.output << ".txt)";
        out << '\n';
        if (lab.skipped) {
            out << m_w.skipped << ' ' << lab.skip_reason << '\n';
            return;
        }
        switch (s.kind) {
            case LabKind::stream: report_stream(lab, out); break;
            case LabKind::sessions: report_sessions(lab, out); break;
            case LabKind::idem_clients:
            case LabKind::idem_benchmark:
            case LabKind::idem_cluster: report_idem(lab, out); break;
        }
    }

private:
    // Idempotency labs: requests, answers and orders (or the figures) instead of a stream.
    void report_idem(const LabResult& lab, std::ostream& out) const {
        print_idem_workload(lab, m_opts.lang, m_opts.timelines, out);
        if (lab.backend == "sim") report_wrong_rate(lab, out);
        report_verdict(lab, out);
    }

    void report_stream(const LabResult& lab, std::ostream& out) const {
        for (const TrialOutcome* t : selected_trials(lab.trials, m_opts.timelines)) {
            // A long simulated run keeps few timelines; the others have no history to print.
            if (t->history.empty()) continue;
            report_stream_trial(lab, *t, out);
        }
        report_final_statuses(lab, out);
        out << "  " << fmt::format(fmt::runtime(m_w.wrong_state), expected_final(lab.scenario), lab.wrong, lab.total)
            << '\n';
        report_accounting(lab, out);
        if (lab.backend == "sim") report_wrong_rate(lab, out);
        report_verdict(lab, out);
        report_stream_figures(lab, out);
    }

    // One trial with a history: its heading, the stream, then the timeline (or the dispatcher's
    // rounds).
    void report_stream_trial(const LabResult& lab, const TrialOutcome& t, std::ostream& out) const {
        const Scenario& s = lab.scenario;
        out << m_w.trial << ' ' << t.trial;
        if (lab.backend == "sim") out << " (seed " << seed_text(t.seed) << ")";
        if (s.shard.enabled) return report_shard_trial(lab, t, out);
        const bool several_orders = s.orders.size() > 1;
        if (s.stream_line == "xrange") {
            // As the article's producer-side labs print it: XRANGE orders - + : id paid(v=2)  ...
            out << " — XRANGE " << s.stream.key << " - + :";
            for (const auto& e : t.stream)
                out << (&e == &t.stream.front() ? " " : "  ") << e.id << ' '
                    << (several_orders ? "#" + e.field("order") + " " : "") << e.field("type") << "(v=" << e.field("v")
                    << ")";
            if (t.stream.empty()) out << ' ' << m_w.empty_stream;
        } else {
            out << " — stream: ";
            if (t.stream.empty()) out << m_w.empty_stream;
            for (size_t i = 0; i < t.stream.size(); ++i)
                out << (i ? ", " : "") << entry_text(t.stream[i], several_orders);
        }
        out << '\n';
        if (s.dispatcher.enabled)
            report_dispatcher_trial(lab, t, out);
        else
            TimelinePrinter(m_w, lab, t).print(out);
    }

    // S2: hundreds of entries; the shards' counts, the reshard and the wrong orders, then the
    // timeline of the orders that explain the trial.
    void report_shard_trial(const LabResult& lab, const TrialOutcome& t, std::ostream& out) const {
        const Scenario& s = lab.scenario;
        const ShardTrialFacts f = shard_facts(s, t);
        out << " — " << shard_facts_text(f, s.orders.size()) << '\n';
        if (!f.shard_map.empty()) out << "  " << fmt::format("{}", fmt::join(f.shard_map, ", ")) << '\n';
        const TrialOutcome focus = shard_focus(s, t);
        out << "  " << pick(m_opts.lang, "timeline of ", "timeline của ")
            << (f.wrong_orders.empty() ? pick(m_opts.lang, "the first order", "đơn đầu tiên")
                                       : pick(m_opts.lang, "the first orders that ended wrong", "các đơn sai đầu tiên"))
            << ":\n";
        TimelinePrinter(m_w, lab, focus).print(out);
    }

    // The first trials' final states; with hundreds of orders, how many ended right per trial.
    void report_final_statuses(const LabResult& lab, std::ostream& out) const {
        const Scenario& s = lab.scenario;
        const bool several_orders = s.orders.size() > 1;
        out << "  " << m_w.final_status;
        const size_t shown = std::min(lab.trials.size(), k_statuses_shown);
        const bool many_orders = s.shard.enabled || s.orders.size() > 20;
        if (many_orders)
            for (size_t i = 0; i < shown; ++i)
                out << (i == 0 ? " " : " | ")
                    << fmt::format("{}/{} {}", s.orders.size() - lab.trials[i].wrong_orders.size(), s.orders.size(),
                                   expected_final(s));
        for (size_t i = 0; i < shown && !many_orders; ++i)
            out << (i == 0 ? " " : several_orders ? " | " : " ") << trial_status_text(m_w, s, lab.trials[i]);
        if (shown < lab.trials.size())
            out << fmt::format(fmt::runtime(pick(m_opts.lang, " … ({} more)", " … (thêm {} lần)")),
                               lab.trials.size() - shown);
        out << '\n';
    }

    // The figures after the verdict: the lock's release, delivery latency, load, soak, throughput.
    void report_stream_figures(const LabResult& lab, std::ostream& out) const {
        const Scenario& s = lab.scenario;
        if (!lab.lock_release_method.empty()) {
            out << "  " << m_w.lock_release << ' ' << lab.lock_release_method;
            if (lab.lock_release_method.rfind("DELEX", 0) != 0) out << ' ' << m_w.delex_needs;
            out << '\n';
        }
        if (lab.delivery.samples > 0)
            out << "  "
                << fmt::format(fmt::runtime(m_w.delivery), fmt::format("{:.2f}", lab.delivery.p50_us / 1000.0),
                               fmt::format("{:.2f}", lab.delivery.max_us / 1000.0), lab.delivery.samples)
                << '\n';
        if (s.load.enabled) report_load(lab, out);
        if (s.soak.enabled) report_soak(lab, out);
        if (s.show_throughput && lab.throughput.trials > 0) {
            const ThroughputStats& tp = lab.throughput;
            out << "  "
                << fmt::format(fmt::runtime(m_w.throughput), tp.jobs, fmt::format("{:.1f}", tp.span_ms),
                               fmt::format("{:.2f}", tp.per_s), tp.trials, fmt::format("{:.2f}", tp.per_s_min),
                               fmt::format("{:.2f}", tp.per_s_max))
                << '\n';
            if (lab.beside_throughput && lab.beside_throughput->per_s > 0)
                out << "  "
                    << fmt::format(fmt::runtime(m_w.beside), lab.beside_name,
                                   fmt::format("{:.2f}", lab.beside_throughput->per_s), lab.beside_throughput->trials,
                                   fmt::format("{:.2f}", tp.per_s / lab.beside_throughput->per_s))
                    << '\n';
            if (s.documented.throughput) report_throughput_figure(s.documented, out);
        }
    }

    // A generated workload's figures per trial (check/load_stats.h), the first few trials.
    void report_load(const LabResult& lab, std::ostream& out) const {
        const Scenario& s = lab.scenario;
        out << "  " << pick(m_opts.lang, "load:", "tải:") << ' ' << s.orders.size() << pick(m_opts.lang, " orders, ", " đơn, ")
            << s.load.arrival << (s.load.job_cost.empty() ? "" : ", " + s.load.job_cost);
        for (const auto& j : s.load.slow_jobs) out << fmt::format(", #{} {} {} ms", j.order, j.type, j.ms);
        out << '\n';
        for (size_t i = 0; i < lab.trials.size() && i < 3; ++i) {
            const LoadStats& l = lab.trials[i].load;
            out << "    " << m_w.trial << ' ' << lab.trials[i].trial << ": "
                << fmt::format(fmt::runtime(pick(m_opts.lang,
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
                out << fmt::format(fmt::runtime(pick(m_opts.lang, "; peak RSS of the largest role ({}) {:.1f} MB",
                                                     "; RSS đỉnh của role lớn nhất ({}) {:.1f} MB")),
                                   who, top / 1024.0);
            }
            if (l.hol_ms >= 0)
                out << fmt::format(fmt::runtime(pick(m_opts.lang,
                                                     "; behind the slow job: {} events of other orders waited up to {} ms, {} ({}%) until it ended",
                                                     "; sau job chậm: {} sự kiện của đơn khác chờ tới {} ms, {} ({}%) chờ tới khi nó xong")),
                                   l.hol_events, l.hol_ms, l.hol_blocked, hol_blocked_pct(l));
            out << '\n';
        }
    }

    // A soak's figures per trial (check/soak_stats.h), the first few trials: every published entry
    // processed, pending in the group, never delivered or lost; the kills and what came back.
    void report_soak(const LabResult& lab, std::ostream& out) const {
        const Scenario& s = lab.scenario;
        out << "  " << pick(m_opts.lang, "soak:", "soak:") << ' '
            << fmt::format(fmt::runtime(pick(m_opts.lang,
                                             "the trial ends drained, or {:.1f} s after its last event is due",
                                             "lần chạy kết thúc khi group đã rút hết, hoặc {:.1f} giây sau sự kiện cuối")),
                           s.soak.drain_ms / 1000.0)
            << '\n';
        for (size_t i = 0; i < lab.trials.size() && i < 3; ++i) {
            const TrialOutcome& t = lab.trials[i];
            out << "    " << m_w.trial << ' ' << t.trial << ": "
                << soak_accounting_text(t.accounting, t.soak, static_cast<int64_t>(t.wrong_orders.size()),
                                        static_cast<int64_t>(s.orders.size()))
                << '\n';
            out << "    " << m_w.trial << ' ' << t.trial << ": " << soak_faults_text(t.soak) << '\n';
        }
    }

    // Every published entry followed to its jobs, summed over the trials; then the trials with
    // something to flag, each with its first examples.
    void report_accounting(const LabResult& lab, std::ostream& out) const {
        if (lab.trials.empty()) return;
        out << "  " << pick(m_opts.lang, "accounting:", "đối soát:") << ' ' << accounting_text(accounting_total(lab))
            << '\n';
        // Per event: the same event in several entries (republished), written by several jobs,
        // copies the consumer's dedupe skipped; trial 1's examples.
        Accounting per_event = accounting_total(lab);
        per_event.republished_examples = lab.trials.front().accounting.republished_examples;
        per_event.reapplied_examples = lab.trials.front().accounting.reapplied_examples;
        if (const std::string text = republish_text(per_event); !text.empty())
            out << "  " << pick(m_opts.lang, "per event:", "theo sự kiện:") << ' ' << text
                << pick(m_opts.lang, " (examples from trial 1)", " (ví dụ từ lần 1)") << '\n';
        size_t flagged = 0;
        for (const auto& t : lab.trials) {
            const auto details = accounting_details(t.accounting);
            if (details.empty()) continue;
            if (++flagged > k_accounting_trials_shown) continue;
            out << "    " << m_w.trial << ' ' << t.trial << ": " << fmt::format("{}", fmt::join(details, "; ")) << '\n';
        }
        if (flagged > k_accounting_trials_shown)
            out << "    " << fmt::format(fmt::runtime(pick(m_opts.lang, "… {} more trials like these", "… thêm {} lần như vậy")),
                                         flagged - k_accounting_trials_shown)
                << '\n';
    }

    // The simulator's verdict over many seeds: the rate with its 95% interval, and which seeds
    // to replay.
    void report_wrong_rate(const LabResult& lab, std::ostream& out) const {
        const Lang lang = m_opts.lang;
        if (lab.replay_seed) {
            out << "  " << pick(lang, "replay of trial seed ", "chạy lại seed của lần thử ") << seed_text(*lab.replay_seed)
                << '\n';
            return;
        }
        out << "  "
            << fmt::format(fmt::runtime(pick(lang, "wrong rate {:.1f}% (95% CI {:.1f}–{:.1f}%) over {} trials",
                                             "tỉ lệ SAI {:.1f}% (khoảng tin cậy 95% {:.1f}–{:.1f}%) qua {} lần")),
                           100 * lab.wrong_rate, 100 * lab.wrong_rate_low, 100 * lab.wrong_rate_high, lab.total);
        if (!lab.failing_seeds.empty()) {
            std::vector<std::string> seeds;
            for (uint64_t seed : lab.failing_seeds) seeds.push_back(seed_text(seed));
            out << pick(lang, "; failing seeds: ", "; seed sai: ") << fmt::format("{}", fmt::join(seeds, ", "));
        }
        out << '\n';
    }

    // The outbox labs in the article's layout: the outbox rows, each dispatcher round, the stream
    // as the consumer will see it, the consumer's final states, and how late each order got out.
    void report_dispatcher_trial(const LabResult& lab, const TrialOutcome& t, std::ostream& out) const {
        report_outbox(t, out);
        report_dispatcher_query(lab.scenario, out);
        report_dispatch_rounds(lab.scenario, t, out);
        report_consumer_view(lab.scenario, t, out);
    }

    void report_outbox(const TrialOutcome& t, std::ostream& out) const {
        int inserts = 0;
        for (const auto& r : t.history) inserts += r.op == Op::outbox_insert;
        out << fmt::format(fmt::runtime(pick(m_opts.lang, "outbox after {} transactions of the app:",
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
    static void report_dispatcher_query(const Scenario& s, std::ostream& out) {
        const bool naive = s.dispatcher.ordering == DispatchOrder::naive;
        const bool one_transaction = s.dispatcher.mark == DispatchMark::round;
        const std::string dispatchers = s.dispatcher.count > 1 ? fmt::format("{} dispatchers", s.dispatcher.count) : "dispatcher";
        if (s.dispatcher.claim == DispatchClaim::skip_locked)
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

    // Each round's publishes, with the nemesis's faults and the dispatcher's errors between them.
    void report_dispatch_rounds(const Scenario& s, const TrialOutcome& t, std::ostream& out) const {
        const Lang lang = m_opts.lang;
        const bool one_transaction = s.dispatcher.mark == DispatchMark::round;
        // Several dispatchers: each line names its dispatcher.
        auto by = [&](const HistoryRecord& r) { return s.dispatcher.count > 1 ? r.actor + " " : std::string{}; };
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
                               field_text(ev, "order"), field_text(ev, "type"), publish_verdict(r, ev));
        }
    }

    // What became of one publish of a round: its entry, a failure, or a wait for an earlier entry.
    std::string publish_verdict(const HistoryRecord& r, const nlohmann::json& ev) const {
        const std::string result = field_text(r.data, "result");
        if (result == "ok") return "XADD " + field_text(r.data, "entry");
        if (result == "fail") return pick(m_opts.lang, "publish FAILED, kept in outbox", "publish LỖI, giữ nguyên trong outbox");
        return fmt::format(fmt::runtime(pick(m_opts.lang, "WAIT (an earlier entry of #{} is not published)",
                                             "CHỜ (entry trước của #{} chưa publish được)")),
                           field_text(ev, "order"));
    }

    // The stream as the consumer will see it, the final states it left, and the late publishes.
    void report_consumer_view(const Scenario& s, const TrialOutcome& t, std::ostream& out) const {
        const Lang lang = m_opts.lang;
        out << "XRANGE " << s.stream.key << " - + " << pick(lang, "(the order the consumer will see):", "(thứ tự consumer sẽ thấy):")
            << '\n';
        for (const auto& e : t.stream)
            out << fmt::format("  {}  #{} {:<7} v={}\n", e.id, e.field("order"), e.field("type"), e.field("v"));
        const std::string mode = is_guarded_update(s.write.mode) ? "CAS" : pick(lang, "plain UPDATE", "UPDATE thường");
        const std::string who = s.consumers == 1 ? "consumer S1" : fmt::format("{} consumers", s.consumers);
        out << fmt::format(fmt::runtime(pick(lang, "{} ({}) applies in log order →", "{} ({}) áp theo thứ tự log →")), who, mode);
        for (const auto& order : s.orders) {
            const OrderRow* row = find_row(t, order.id);
            const std::string status = row ? row_state_text(*row, carries_amounts(s)) : m_w.no_row;
            out << fmt::format("{}#{}={}{}", &order == &s.orders.front() ? " " : "  ", order.id, status,
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

    void report_sessions(const LabResult& lab, std::ostream& out) const {
        const Scenario& s = lab.scenario;
        for (size_t i = 0; i < lab.cases.size(); ++i) {
            const SessionCase* spec = i < s.cases.size() ? &s.cases[i] : nullptr;
            report_case(lab.cases[i], spec, out);
        }
        // Redis transcripts have no final rows; their steps' expectations make the verdict.
        const bool redis_only = !s.cases.empty() && std::all_of(s.cases.begin(), s.cases.end(), [](const SessionCase& c) {
            return is_redis_case(c) && c.final_sql.empty();
        });
        if (!redis_only) out << "  " << fmt::format(fmt::runtime(m_w.wrong_cases), lab.wrong, lab.total) << '\n';
        report_verdict(lab, out);
    }

    void report_case(const CaseOutcome& c, const SessionCase* spec, std::ostream& out) const {
        if (spec && is_redis_case(*spec)) {  // redis-cli transcripts, in time order
            print_redis_case(c, *spec, m_opts.lang, out);
            return;
        }
        out << "--- " << pick(m_opts.lang, c.title, c.title_vi) << '\n';

        // Sessions in the scenario's order (only the transcript ones if it names any); without a
        // spec, in the order they first ran.
        std::vector<std::string> names;
        if (spec) {
            for (const auto& session : spec->sessions)
                if (spec->transcript_sessions.empty() ||
                    std::find(spec->transcript_sessions.begin(), spec->transcript_sessions.end(), session.name) !=
                        spec->transcript_sessions.end())
                    names.push_back(session.name);
        } else {
            for (const auto& step : c.steps)
                if (std::find(names.begin(), names.end(), step.session) == names.end()) names.push_back(step.session);
        }

        // A case with one session is a plain psql transcript, as in the article's "CAS by hand".
        const bool headers = (spec ? spec->sessions.size() : names.size()) > 1;
        std::set<std::string> shown_failures;
        for (const auto& name : names) {
            if (headers) out << "----- " << name << " -----\n";
            const SessionSpec* session_spec = nullptr;
            if (spec)
                for (const auto& ss : spec->sessions)
                    if (ss.name == name) session_spec = &ss;
            size_t index = 0;
            for (const auto& step : c.steps) {
                if (step.session != name) continue;
                const SessionStep* step_spec =
                    session_spec && index < session_spec->steps.size() ? &session_spec->steps[index] : nullptr;
                ++index;
                print_step(step, step_spec, out);
                if (!step.ok) shown_failures.insert(step.failure);
            }
        }

        print_psql_table(out, c.columns, c.final_rows);
        for (const auto& failure : c.failures)
            if (!shown_failures.count(failure)) out << "  ✕ " << failure << '\n';
    }

    static void print_step(const StepOutcome& step, const SessionStep* spec, std::ostream& out) {
        // As psql echoes a statement typed at its prompt.
        out << step.sql << (!step.sql.empty() && step.sql.back() == ';' ? "" : ";") << '\n';
        if (!step.error.empty() || !step.sqlstate.empty())
            out << "ERROR:  " << step.error << '\n';
        else if (!step.columns.empty())
            print_psql_table(out, step.columns, step.rows);
        else if (!step.tag.empty())
            out << step.tag << '\n';
        if (spec && (spec->expect_wait_min_ms || spec->expect_wait_max_ms))
            out << fmt::format("Time: {:.3f} ms", step.duration_us / 1000.0) << '\n';
        if (!step.ok) out << "  ✕ " << step.failure << '\n';
    }

    void report_verdict(const LabResult& lab, std::ostream& out) const {
        report_documented(lab, out);
        out << "  " << m_w.expectation << ' ' << lab.scenario.expect.describe() << " → "
            << (lab.held ? m_w.held : m_w.broken) << '\n';
        for (const auto& failure : lab.failures) out << "    ✕ " << failure << '\n';
    }

    // What the article reported: its count, its own words marked as its (title and section), then
    // relab's words, each under a label saying they are relab's.
    void report_documented(const LabResult& lab, std::ostream& out) const {
        const Documented& doc = lab.scenario.documented;
        const QuoteLabels& l = quote_labels(m_opts.lang);
        const std::string& summary = pick(m_opts.lang, doc.text, doc.text_vi);
        const std::string& choice = pick(m_opts.lang, doc.relab_choice, doc.relab_choice_vi);
        if (!doc.wrong && doc.quote_vi.empty() && summary.empty() && choice.empty()) return;
        out << "  " << m_w.documented;
        if (doc.wrong) out << ' ' << documented_count(doc);
        out << '\n';
        if (!doc.quote_vi.empty())
            out << "    " << l.article << " (" << article_citation(doc.article, doc.section) << "): " << quoted(doc.quote_vi)
                << '\n';
        if (!summary.empty()) out << "    " << l.summary << ' ' << summary << '\n';
        if (!choice.empty()) out << "    " << l.choice << ' ' << choice << '\n';
        for (const auto& p : doc.also) report_passage(l.article_also, p, out);
        // A figure with nothing measured beside it is still the article's: printed here instead.
        if (doc.throughput && !throughput_shown(lab)) report_throughput_figure(doc, out);
    }

    static bool throughput_shown(const LabResult& lab) {
        return lab.scenario.show_throughput && lab.throughput.trials > 0;
    }

    // A further passage of the article the quote above named: its section is citation enough.
    void report_passage(const char* label, const ArticlePassage& p, std::ostream& out) const {
        out << "    " << label << " (" << p.section << "): " << quoted(p.quote_vi) << '\n';
        if (const std::string& note = pick(m_opts.lang, p.text, p.text_vi); !note.empty())
            out << "      " << quote_labels(m_opts.lang).note << ' ' << note << '\n';
    }

    // The article's throughput figure, under the measured one.
    void report_throughput_figure(const Documented& doc, std::ostream& out) const {
        const DocumentedThroughput& t = *doc.throughput;
        const QuoteLabels& l = quote_labels(m_opts.lang);
        out << "    " << l.figure << ", " << throughput_figure_text(t, m_opts.lang) << " ("
            << article_citation(doc.article, t.passage.section) << "): " << quoted(t.passage.quote_vi) << '\n';
        if (const std::string& note = pick(m_opts.lang, t.passage.text, t.passage.text_vi); !note.empty())
            out << "      " << l.note << ' ' << note << '\n';
    }

    TextOptions m_opts;
    const Words& m_w;
};

}  // namespace

std::unique_ptr<Reporter> make_text_reporter(const TextOptions& opts) { return std::make_unique<TextReporter>(opts); }

void write_text_lab(const LabResult& lab, const TextOptions& opts, std::ostream& out) {
    TextReporter(opts).report_lab(lab, out);
}

}  // namespace relab
