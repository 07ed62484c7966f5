// A stream lab's trial as the article prints it: one line per history record, its time first
// ("t=  51 ms  C2 wrote status=paid → UPDATE 1"), the faults as Jepsen's nemesis logs them.
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "check/record_fields.h"
#include "report/text/delivery_label.h"
#include "report/text/record_text.h"
#include "report/text/stream_text.h"
#include "report/text/timeline.h"

namespace relab {

namespace {

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
    TimelinePrinter(const TextWords& w, const LabResult& lab, const TrialOutcome& trial)
        : m_w(w), m_lab(lab), m_trial(trial), m_several_orders(lab.scenario.flow().orders.size() > 1) {
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

    const TextWords& m_w;
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

void print_stream_timeline(const TextWords& w, const LabResult& lab, const TrialOutcome& trial, std::ostream& out) {
    TimelinePrinter(w, lab, trial).print(out);
}

}  // namespace relab
