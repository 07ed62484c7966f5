#include "report/text/timeline.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "fault/faults.h"
#include "report/text/delivery_label.h"
#include "report/text/idem_text.h"
#include "util/check.h"
#include "util/json_number.h"

namespace relab {

namespace {

using nlohmann::json;

const json& member(const json& data, const char* key) {
    static const json null;
    if (!data.is_object()) return null;
    const auto it = data.find(key);
    return it == data.end() ? null : *it;
}

std::string text_of(const json& v) {
    if (v.is_null()) return "?";
    if (v.is_string()) return v.get<std::string>();
    return v.dump();
}

std::optional<int64_t> int_of(const json& v) {
    if (v.is_number()) return json_number_as<int64_t>(v);  // nullopt for a number int64_t cannot hold
    if (v.is_string()) {
        const std::string s = v.get<std::string>();
        if (s.empty()) return std::nullopt;
        size_t used = 0;
        try {
            const int64_t n = std::stoll(s, &used);
            if (used == s.size()) return n;
        } catch (const std::exception&) {
        }
    }
    return std::nullopt;
}

// "C2" < "C10": runs of digits compare by value.
bool natural_less(const std::string& a, const std::string& b) {
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const bool da = std::isdigit(static_cast<unsigned char>(a[i])), db = std::isdigit(static_cast<unsigned char>(b[j]));
        if (da && db) {
            size_t ie = i, je = j;
            while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
            while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
            const std::string na = a.substr(i, ie - i), nb = b.substr(j, je - j);
            const std::string ta = na.substr(std::min(na.find_first_not_of('0'), na.size()));
            const std::string tb = nb.substr(std::min(nb.find_first_not_of('0'), nb.size()));
            if (ta.size() != tb.size()) return ta.size() < tb.size();
            if (ta != tb) return ta < tb;
            i = ie;
            j = je;
        } else {
            if (a[i] != b[j]) return a[i] < b[j];
            ++i;
            ++j;
        }
    }
    return a.size() - i < b.size() - j;
}

std::string record_text(const HistoryRecord& r) {
    std::string text = fmt::format("{:.3f} ms  {} {}", static_cast<double>(r.t_ns) / 1e6, r.actor, to_string(r.op));
    if (r.data.is_object() && !r.data.empty())
        text += " " + r.data.dump(-1, ' ', false, json::error_handler_t::replace);
    return text;
}

// One consumer's job in progress.
struct OpenJob {
    int64_t received_ns = 0;  // a lock wait counts from here
    int64_t job_from_ns = 0;
    std::string label;
};

// The trial's records by time (ties in recorded order); widens tl's span to cover them.
std::vector<const HistoryRecord*> records_in_time_order(const TrialOutcome& trial, Timeline& tl) {
    std::vector<const HistoryRecord*> records;
    for (const auto& r : trial.history) records.push_back(&r);
    std::stable_sort(records.begin(), records.end(),
                     [](const HistoryRecord* a, const HistoryRecord* b) { return a->t_ns < b->t_ns; });
    for (const auto* r : records) {
        tl.start_ns = std::min(tl.start_ns, r->t_ns);
        tl.end_ns = std::max(tl.end_ns, r->t_ns);
    }
    return records;
}

// The actors of the records as lanes: those with a record of an op in `group_ops` first
// (`group_first`) or last, each group in natural order. Records whose op is in `drawn_as_nothing`
// give no lane.
std::vector<std::string> lanes_of(const std::vector<const HistoryRecord*>& records,
                                  std::initializer_list<Op> drawn_as_nothing,
                                  std::initializer_list<Op> group_ops, bool group_first) {
    std::vector<std::string> actors;
    std::set<std::string> seen, in_group;
    for (const auto* r : records) {
        if (std::find(drawn_as_nothing.begin(), drawn_as_nothing.end(), r->op) != drawn_as_nothing.end()) continue;
        if (seen.insert(r->actor).second) actors.push_back(r->actor);
        if (std::find(group_ops.begin(), group_ops.end(), r->op) != group_ops.end()) in_group.insert(r->actor);
    }
    std::stable_sort(actors.begin(), actors.end(), [&](const std::string& a, const std::string& b) {
        const bool ga = in_group.count(a) > 0, gb = in_group.count(b) > 0;
        if (ga != gb) return group_first ? ga : gb;
        return natural_less(a, b);
    });
    return actors;
}

}  // namespace

std::string timeline_event_text(const json& data, bool several_orders) {
    const json& ev = member(data, "event");
    if (!ev.is_object()) return {};
    std::string text;
    if (several_orders) text = "#" + text_of(member(ev, "order")) + " ";
    return text + text_of(member(ev, "type")) + " (v=" + text_of(member(ev, "v")) + ")";
}

std::string fault_words(const json& d) {
    const std::string action = text_of(member(d, "action"));
    const std::string words = action + " " + text_of(member(d, "target"));
    const auto named = fault_action_named(action);
    return named && acts_on_link(*named) ? "link: " + words : words;
}

namespace {

bool is_nemesis_fault(const HistoryRecord& r) { return r.actor == "nemesis" && r.op == Op::fault; }


// Lanes: `start` and `ack` are drawn as nothing (no lane of their own); receivers (and claimers)
// go last. The nemesis's faults span every lane: they give no lane.
std::vector<std::string> stream_lanes(const std::vector<const HistoryRecord*>& records) {
    std::vector<const HistoryRecord*> in_lanes;
    std::copy_if(records.begin(), records.end(), std::back_inserter(in_lanes),
                 [](const HistoryRecord* r) { return !is_nemesis_fault(*r); });
    return lanes_of(in_lanes, {Op::start, Op::ack}, {Op::receive, Op::claim}, false);
}

// Draws a stream lab's records, fed in time order: a consumer's job opens at its receive (or
// take) and closes at its write, ack or dispatch; a redelivery, a kill or the trial's end leaves
// it unfinished.
class StreamTimeline {
public:
    StreamTimeline(Timeline& tl, bool several_orders) : tl_(tl), several_orders_(several_orders) {}

    void add(const HistoryRecord& r) {
        if (r.op == Op::start) return;
        if (is_nemesis_fault(r)) return add_fault(r);
        if (r.op == Op::ack) return close_job(r.actor, r.t_ns, false, false);
        TimelineMarker m;
        m.op = to_string(r.op);
        m.lane = r.actor;
        m.t_ns = r.t_ns;
        m.detail = record_text(r);
        mark(r, m);
        tl_.markers.push_back(std::move(m));
    }

    // Faults never ended run to the trial's end; jobs still open end there, unfinished.
    void finish() {
        for (const auto& [index, i] : open_fault_) tl_.faults[i].end_ns = tl_.end_ns;
        std::vector<std::string> still_open;
        for (const auto& [actor, job] : open_) still_open.push_back(actor);
        for (const auto& actor : still_open) close_job(actor, tl_.end_ns, false, true);
    }

private:
    // Fills the marker's kind and label from its op, opening and closing jobs on the way.
    void mark(const HistoryRecord& r, TimelineMarker& m) {
        const json& d = r.data;
        switch (r.op) {
            case Op::receive:
                m.kind = TimelineMarker::Kind::receive;
                m.label = delivery_label(d);
                open_job(r);
                return;
            case Op::take:  // an S3 worker's job runs from here to its write (and XACK)
                m.kind = TimelineMarker::Kind::receive;
                m.label = "take";
                open_job(r);
                return;
            case Op::dispatch:  // S3's reader handed the entry to a FIFO: its part of the job is over
                close_job(r.actor, r.t_ns, false, false);
                m.kind = TimelineMarker::Kind::other;
                m.label = text_of(member(d, "key")) == "0" ? "→ FIFO" : "→ FIFO #" + text_of(member(d, "key"));
                return;
            case Op::claim: {
                m.kind = TimelineMarker::Kind::other;
                const json& claimed = member(d, "claimed");
                m.label = fmt::format("XAUTOCLAIM {}", claimed.is_array() ? claimed.size() : 0);
                return;
            }
            case Op::lock_acquire:
                m.kind = TimelineMarker::Kind::lock_acquire;
                start_locked_work(r);
                return;
            case Op::lock_release: {
                m.kind = TimelineMarker::Kind::lock_release;
                const auto result = int_of(member(d, "result"));
                m.bad = result && *result == 0;
                if (m.bad) m.label = "release → 0";
                return;
            }
            case Op::write:
                mark_write(r, m);
                return;
            case Op::publish: {
                m.kind = TimelineMarker::Kind::publish;
                const std::string result = text_of(member(d, "result"));
                m.bad = result == "fail";
                if (result != "ok") m.label = result;
                return;
            }
            default:
                mark_other(r, m);
                return;
        }
    }

    // A receive or take: the actor's job in progress, if any, never finished.
    void open_job(const HistoryRecord& r) {
        close_job(r.actor, r.t_ns, false, true);
        open_[r.actor] = OpenJob{r.t_ns, r.t_ns, timeline_event_text(r.data, several_orders_)};
    }

    // The lock taken: the wait since the receive is a bar of its own, and the job counts from here.
    void start_locked_work(const HistoryRecord& r) {
        const auto it = open_.find(r.actor);
        if (it == open_.end()) return;
        if (r.t_ns > it->second.received_ns) {
            TimelineBar wait;
            wait.kind = TimelineBar::Kind::lock_wait;
            wait.lane = r.actor;
            wait.start_ns = it->second.received_ns;
            wait.end_ns = r.t_ns;
            const auto attempts = member(r.data, "attempts");
            wait.label = attempts.is_null() ? "lock wait" : "lock wait, " + text_of(attempts) + " attempt(s)";
            tl_.bars.push_back(std::move(wait));
        }
        it->second.job_from_ns = r.t_ns;
    }

    // A write that changed rows with a lower version than one already applied to its order
    // overwrites a newer state: bad, and so is the job it ends.
    void mark_write(const HistoryRecord& r, TimelineMarker& m) {
        const json& d = r.data;
        m.kind = TimelineMarker::Kind::write;
        const auto affected = int_of(member(d, "affected"));
        const json& tag = member(d, "tag");
        m.label = tag.is_string() ? tag.get<std::string>()
                  : affected      ? fmt::format("UPDATE {}", *affected)
                                  : std::string("write");
        const json& ev = member(d, "event");
        const auto v = int_of(member(ev, "v"));
        const std::string order = text_of(member(ev, "order"));
        if (affected && *affected > 0 && v) {
            const auto it = applied_max_v_.find(order);
            if (it != applied_max_v_.end() && *v < it->second) {
                m.bad = true;
                m.label += fmt::format(" — overwrites v={}", it->second);
            }
            if (it == applied_max_v_.end() || *v > it->second) applied_max_v_[order] = *v;
        }
        close_job(r.actor, r.t_ns, m.bad, false);
    }

    // Ops without a kind of their own; the reorder buffer's decisions are named on the marker.
    static void mark_other(const HistoryRecord& r, TimelineMarker& m) {
        const json& d = r.data;
        m.kind = TimelineMarker::Kind::other;
        if (r.op == Op::buffer_hold) m.label = "hold, waiting for v=" + text_of(member(d, "waiting_for"));
        if (r.op == Op::buffer_release)
            m.label = text_of(member(d, "reason")) == "gap_timeout" ? "gap timeout: let through" : "let through";
        if (r.op == Op::late) {
            m.label = "late → " + text_of(member(d, "action"));
            m.bad = text_of(member(d, "action")) == "apply";
        }
        if (r.op == Op::serialization_failure) {
            // The job stays open: its transaction runs again unless the consumer gave up (then bad).
            const json& retry = member(d, "retry");
            const bool again = !retry.is_boolean() || retry.get<bool>();
            m.label = fmt::format("40001 under {}, try {}: rolled back, {}", text_of(member(d, "isolation")),
                                  text_of(member(d, "attempt")), again ? "runs again" : "given up");
            m.bad = !again;
        }
    }

    // Ends the actor's job in progress, if any, as a bar.
    void close_job(const std::string& actor, int64_t end_ns, bool overwrites, bool unfinished) {
        const auto it = open_.find(actor);
        if (it == open_.end()) return;
        RELAB_CHECK(end_ns >= it->second.job_from_ns, "records are drawn in time order: a job ends after it began");
        TimelineBar bar;
        bar.kind = TimelineBar::Kind::job;
        bar.lane = actor;
        bar.start_ns = it->second.job_from_ns;
        bar.end_ns = end_ns;
        bar.label = it->second.label;
        bar.overwrites = overwrites;
        bar.unfinished = unfinished;
        tl_.bars.push_back(std::move(bar));
        open_.erase(it);
    }

    // Faults: an invocation opens one, its ok or fail (same index) ends it; an end recorded
    // without an invocation opens and ends one.
    void add_fault(const HistoryRecord& r) {
        const std::string phase = text_of(member(r.data, "phase"));
        const std::string index = text_of(member(r.data, "fault"));
        const std::string when = fmt::format("{:.3f} ms", static_cast<double>(r.t_ns) / 1e6);
        auto it = open_fault_.find(index);
        if (phase == "invoke" || it == open_fault_.end()) {
            tl_.faults.push_back(new_fault(r, index, phase, when));
            it = open_fault_.insert_or_assign(index, tl_.faults.size() - 1).first;
            if (phase == "invoke") return;
        } else {
            tl_.faults[it->second].detail += fmt::format(", {} {}", phase, when);
        }
        end_fault(tl_.faults[it->second], r, phase);
        open_fault_.erase(it);
    }

    static TimelineFault new_fault(const HistoryRecord& r, const std::string& index, const std::string& phase,
                                   const std::string& when) {
        const json& d = r.data;
        TimelineFault f;
        f.index = index;
        f.action = text_of(member(d, "action"));
        f.target = text_of(member(d, "target"));
        f.start_ns = f.end_ns = r.t_ns;
        f.label = fault_words(d);
        f.detail = fmt::format("fault {}: {}", index, f.label);
        if (member(d, "text").is_string()) f.detail += " — " + member(d, "text").get<std::string>();
        f.detail += fmt::format("; {} {}", phase, when);
        return f;
    }

    // The fault's ok or fail. A kill that worked ends its target's job in progress, and those of
    // its tasks (S3's workers, "<target>.w1", ...): they die with its process, unfinished.
    void end_fault(TimelineFault& f, const HistoryRecord& r, const std::string& phase) {
        f.end_ns = r.t_ns;
        f.ended = true;
        f.failed = phase == "fail";
        if (f.failed) {
            f.label += " ✕";
            if (member(r.data, "error").is_string()) f.detail += ": " + member(r.data, "error").get<std::string>();
        }
        // A trim and a consumer's delete say what they took from the group in their mark.
        if (!f.failed && (f.action == "trim" || f.action == "delete_consumer")) {
            const bool trim = f.action == "trim";
            f.label += fmt::format(" ({} {})", text_of(member(r.data, trim ? "trimmed" : "pending_dropped")),
                                   trim ? "trimmed" : "pending dropped");
            if (member(r.data, "text").is_string()) f.detail += " — " + member(r.data, "text").get<std::string>();
        }
        if (f.action != "kill" || f.failed) return;
        close_job(f.target, r.t_ns, false, true);
        std::vector<std::string> tasks;
        for (const auto& [actor, job] : open_)
            if (actor.rfind(f.target + ".", 0) == 0) tasks.push_back(actor);
        for (const auto& actor : tasks) close_job(actor, r.t_ns, false, true);
    }

    Timeline& tl_;
    const bool several_orders_;
    std::map<std::string, OpenJob> open_;            // per actor
    std::map<std::string, int64_t> applied_max_v_;   // per order (as text): highest version written
    std::map<std::string, size_t> open_fault_;       // fault index -> its place in tl_.faults
};

}  // namespace

Timeline trial_timeline(const TrialOutcome& trial, bool several_orders) {
    Timeline tl;
    const std::vector<const HistoryRecord*> records = records_in_time_order(trial, tl);
    tl.lanes = stream_lanes(records);
    StreamTimeline drawing(tl, several_orders);
    for (const auto* r : records) drawing.add(*r);
    drawing.finish();
    return tl;
}

namespace {

std::string request_label(int code, const std::string& source) {
    if (source == "created") return fmt::format("{} created", code);
    if (source == "replay") return "replay";
    if (source == "in_progress") return fmt::format("{} in progress", code);
    if (source == "layer4") return fmt::format("{} layer 4", code);
    if (source == "other_user") return fmt::format("{} other user", code);
    if (source.empty() || source == "mismatch" || source == "error") return std::to_string(code);
    return fmt::format("{} {}", code, source);
}

// The order an answer's body names ({"order_id":1}), if any.
std::optional<int64_t> answered_order(const json& data) {
    const json& body = member(data, "body");
    if (!body.is_string()) return std::nullopt;
    const json parsed = json::parse(body.get<std::string>(), nullptr, false);
    return int_of(member(parsed, "order_id"));
}


// Draws an idempotency trial's records, fed in time order: a request's bar runs from its send to
// its answer; an INSERT for a key that already has an order marks its request a duplicate.
class IdemTimeline {
public:
    IdemTimeline(Timeline& tl, const TrialOutcome& trial) : tl_(tl) {
        for (const auto& o : trial.idem.orders) owner_[o.id] = o.user_id;
    }

    void add(const HistoryRecord& r) {
        if (r.op == Op::start) return;
        // A fault is drawn once, where it ended (its ok or fail record).
        if (r.actor == "nemesis" && text_of(member(r.data, "phase")) == "invoke") return;
        TimelineMarker m;
        m.op = to_string(r.op);
        m.lane = r.actor;
        m.t_ns = r.t_ns;
        m.detail = fmt::format("{:.3f} ms  {}", static_cast<double>(r.t_ns) / 1e6, idem_record_text(r));
        m.kind = TimelineMarker::Kind::minor;
        if (r.op == Op::send) {
            m.kind = TimelineMarker::Kind::send;
            const std::string key = request_key(r);
            open_[key] = OpenRequest{r.actor, r.t_ns, false};
            current_[r.actor] = key;
        } else if (r.op == Op::order) {
            mark_order(r, m);
        } else if (r.op == Op::answer) {
            mark_answer(r, m);
        } else if (r.op == Op::fault || r.op == Op::observe) {
            m.kind = TimelineMarker::Kind::fault;
            m.label = fault_label(r);
        } else {
            m.label = minor_label(r);
        }
        tl_.markers.push_back(std::move(m));
    }

    // Requests without an answer (the client was killed) run to the end of the trial.
    void finish() {
        for (const auto& entry : open_) {
            const OpenRequest& req = entry.second;
            TimelineBar bar;
            bar.kind = TimelineBar::Kind::request;
            bar.lane = req.actor;
            bar.start_ns = req.from_ns;
            bar.end_ns = tl_.end_ns;
            bar.duplicate = req.duplicate;
            bar.unfinished = true;
            bar.label = "no answer";
            tl_.bars.push_back(std::move(bar));
        }
    }

private:
    struct OpenRequest {
        std::string actor;
        int64_t from_ns = 0;
        bool duplicate = false;
    };

    static std::string request_key(const HistoryRecord& r) {
        return r.actor + "|" + text_of(member(r.data, "request")) + "|" + text_of(member(r.data, "attempt"));
    }

    // The business logic's INSERT, or layer 4's refusal. A second order for a key makes the
    // actor's open request a duplicate.
    void mark_order(const HistoryRecord& r, TimelineMarker& m) {
        m.kind = TimelineMarker::Kind::order;
        if (!member(r.data, "refused").is_null()) {
            m.label = "layer 4 refused";
            return;
        }
        const bool duplicate = !ordered_.insert(text_of(member(r.data, "idem_key"))).second;
        m.label = "order " + text_of(member(r.data, "order_id"));
        if (!duplicate) return;
        m.bad = true;
        m.label += " — duplicate";
        const auto it = current_.find(r.actor);
        if (it != current_.end() && open_.count(it->second)) open_[it->second].duplicate = true;
    }

    // The answer's code, or the leak when it names another user's order; it ends its request.
    void mark_answer(const HistoryRecord& r, TimelineMarker& m) {
        const json& d = r.data;
        m.kind = TimelineMarker::Kind::answer;
        const int code = static_cast<int>(int_of(member(d, "code")).value_or(0));
        const std::string source = member(d, "source").is_string() ? member(d, "source").get<std::string>() : "";
        bool leak = false;
        if (const auto order = answered_order(d)) {
            const auto user = int_of(member(d, "user_id"));
            const auto it = owner_.find(*order);
            leak = user && it != owner_.end() && it->second != *user;
            if (leak) m.label = fmt::format("{} leak: order {} of user {}", code, *order, it->second);
        }
        if (!leak) m.label = source == "replay" ? "replay" : std::to_string(code);
        m.bad = leak;
        end_request(r, code, source, leak);
    }

    // The answered request's bar: the one the answer names, else the actor's latest.
    void end_request(const HistoryRecord& r, int code, const std::string& source, bool leak) {
        std::string key = request_key(r);
        if (!open_.count(key) && current_.count(r.actor)) key = current_[r.actor];
        const auto it = open_.find(key);
        if (it == open_.end()) return;
        TimelineBar bar;
        bar.kind = TimelineBar::Kind::request;
        bar.lane = r.actor;
        bar.start_ns = it->second.from_ns;
        bar.end_ns = r.t_ns;
        bar.code = code;
        bar.source = source;
        bar.duplicate = it->second.duplicate;
        bar.leak = leak;
        bar.label = (bar.duplicate ? "duplicate · " : "") + request_label(code, source);
        tl_.bars.push_back(std::move(bar));
        open_.erase(it);
    }

    static std::string fault_label(const HistoryRecord& r) {
        const json& d = r.data;
        return member(d, "action").is_string() ? fault_words(d)
               : member(d, "type").is_string() ? member(d, "type").get<std::string>()
                                               : to_string(r.op);
    }

    // A middleware step's label: empty unless it says something went otherwise than planned.
    static std::string minor_label(const HistoryRecord& r) {
        const json& d = r.data;
        if (r.op == Op::release) return "DEL";
        if (r.op == Op::business_error) return "threw";
        if (r.op == Op::store && member(d, "written").is_boolean() && !member(d, "written").get<bool>())
            return "key gone";
        if (r.op == Op::wait) {
            const auto acked = int_of(member(d, "acked")), wanted = int_of(member(d, "wanted"));
            if (acked && wanted && *acked < *wanted) return fmt::format("WAIT → {}", *acked);
        }
        return {};
    }

    Timeline& tl_;
    std::map<int64_t, int64_t> owner_;             // order id → its user
    std::set<std::string> ordered_;                // idem keys with an order already
    std::map<std::string, OpenRequest> open_;      // by actor|request|attempt
    std::map<std::string, std::string> current_;   // actor → its latest open request
};

}  // namespace

Timeline idem_trial_timeline(const TrialOutcome& trial) {
    Timeline tl;
    const std::vector<const HistoryRecord*> records = records_in_time_order(trial, tl);
    // Lanes: the clients (actors that send), then the rest (the runner's faults).
    tl.lanes = lanes_of(records, {Op::start}, {Op::send}, true);
    IdemTimeline drawing(tl, trial);
    for (const auto* r : records) drawing.add(*r);
    drawing.finish();
    return tl;
}

Timeline case_timeline(const CaseOutcome& c) {
    Timeline tl;
    for (const auto& step : c.steps) {
        if (std::find(tl.lanes.begin(), tl.lanes.end(), step.session) == tl.lanes.end()) tl.lanes.push_back(step.session);
        const int64_t start = step.start_us * 1000;
        const int64_t end = (step.start_us + step.duration_us) * 1000;
        tl.start_ns = std::min(tl.start_ns, start);
        tl.end_ns = std::max(tl.end_ns, end);

        TimelineBar bar;
        bar.kind = TimelineBar::Kind::step;
        bar.lane = step.session;
        bar.start_ns = start;
        bar.end_ns = end;
        bar.label = step.sql;
        bar.failed = !step.ok;
        tl.bars.push_back(bar);

        TimelineMarker m;
        m.kind = TimelineMarker::Kind::step_end;
        m.op = "step";
        m.lane = step.session;
        m.t_ns = end;
        const bool error = !step.error.empty() || !step.sqlstate.empty();
        m.label = error ? "ERROR " + step.sqlstate : step.tag;
        m.bad = !step.ok;
        m.detail = fmt::format("{:.3f}–{:.3f} ms  {}: {} → {}", static_cast<double>(step.start_us) / 1e3,
                               static_cast<double>(step.start_us + step.duration_us) / 1e3, step.session, step.sql,
                               error ? "ERROR " + step.sqlstate + " " + step.error : step.tag);
        if (!step.ok) m.detail += "  ✕ " + step.failure;
        tl.markers.push_back(std::move(m));
    }
    return tl;
}

}  // namespace relab
