#include "report/text/timeline.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "report/text/delivery_label.h"
#include "report/text/idem_text.h"
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

namespace {

bool is_nemesis_fault(const HistoryRecord& r) { return r.actor == "nemesis" && r.op == Op::fault; }

}  // namespace

Timeline trial_timeline(const TrialOutcome& trial, bool several_orders) {
    Timeline tl;
    const std::vector<const HistoryRecord*> records = records_in_time_order(trial, tl);

    // Lanes: `start` and `ack` are drawn as nothing (no lane of their own); receivers (and claimers)
    // go last. The nemesis's faults span every lane: they give no lane.
    std::vector<const HistoryRecord*> in_lanes;
    std::copy_if(records.begin(), records.end(), std::back_inserter(in_lanes),
                 [](const HistoryRecord* r) { return !is_nemesis_fault(*r); });
    tl.lanes = lanes_of(in_lanes, {Op::start, Op::ack}, {Op::receive, Op::claim}, false);

    std::map<std::string, OpenJob> open;           // per actor
    std::map<std::string, int64_t> applied_max_v;  // per order (as text): highest version written
    auto close_job = [&](const std::string& actor, int64_t end_ns, bool overwrites, bool unfinished) {
        const auto it = open.find(actor);
        if (it == open.end()) return;
        TimelineBar bar;
        bar.kind = TimelineBar::Kind::job;
        bar.lane = actor;
        bar.start_ns = it->second.job_from_ns;
        bar.end_ns = end_ns;
        bar.label = it->second.label;
        bar.overwrites = overwrites;
        bar.unfinished = unfinished;
        tl.bars.push_back(std::move(bar));
        open.erase(it);
    };

    // Faults: an invocation opens one, its ok or fail (same index) ends it. A kill ends its
    // target's job in progress: the job never finished.
    std::map<std::string, size_t> open_fault;  // fault index -> its place in tl.faults
    auto add_fault = [&](const HistoryRecord* r) {
        const json& d = r->data;
        const std::string phase = text_of(member(d, "phase"));
        const std::string index = text_of(member(d, "fault"));
        const std::string when = fmt::format("{:.3f} ms", static_cast<double>(r->t_ns) / 1e6);
        auto it = open_fault.find(index);
        if (phase == "invoke" || it == open_fault.end()) {
            TimelineFault f;
            f.index = index;
            f.action = text_of(member(d, "action"));
            f.target = text_of(member(d, "target"));
            f.start_ns = f.end_ns = r->t_ns;
            f.label = f.action + " " + f.target;
            f.detail = fmt::format("fault {}: {} {}", index, f.action, f.target);
            if (member(d, "text").is_string()) f.detail += " — " + member(d, "text").get<std::string>();
            f.detail += fmt::format("; {} {}", phase, when);
            tl.faults.push_back(std::move(f));
            it = open_fault.insert_or_assign(index, tl.faults.size() - 1).first;
            if (phase == "invoke") return;
        } else {
            tl.faults[it->second].detail += fmt::format(", {} {}", phase, when);
        }
        TimelineFault& f = tl.faults[it->second];
        f.end_ns = r->t_ns;
        f.ended = true;
        f.failed = phase == "fail";
        if (f.failed) {
            f.label += " ✕";
            if (member(d, "error").is_string()) f.detail += ": " + member(d, "error").get<std::string>();
        }
        if (f.action == "kill" && !f.failed) {
            close_job(f.target, r->t_ns, false, true);
            // Its tasks (S3's workers, "<target>.w1", ...) die with its process.
            std::vector<std::string> tasks;
            for (const auto& [actor, job] : open)
                if (actor.rfind(f.target + ".", 0) == 0) tasks.push_back(actor);
            for (const auto& actor : tasks) close_job(actor, r->t_ns, false, true);
        }
        open_fault.erase(it);
    };

    for (const auto* r : records) {
        const json& d = r->data;
        if (r->op == Op::start) continue;
        if (is_nemesis_fault(*r)) {
            add_fault(r);
            continue;
        }
        if (r->op == Op::ack) {
            close_job(r->actor, r->t_ns, false, false);
            continue;
        }
        TimelineMarker m;
        m.op = to_string(r->op);
        m.lane = r->actor;
        m.t_ns = r->t_ns;
        m.detail = record_text(*r);
        if (r->op == Op::receive) {
            close_job(r->actor, r->t_ns, false, true);
            m.kind = TimelineMarker::Kind::receive;
            m.label = delivery_label(d);
            open[r->actor] = OpenJob{r->t_ns, r->t_ns, timeline_event_text(d, several_orders)};
        } else if (r->op == Op::take) {
            // An S3 worker's job runs from here to its write (and XACK).
            close_job(r->actor, r->t_ns, false, true);
            m.kind = TimelineMarker::Kind::receive;
            m.label = "take";
            open[r->actor] = OpenJob{r->t_ns, r->t_ns, timeline_event_text(d, several_orders)};
        } else if (r->op == Op::dispatch) {
            // S3's reader handed the entry to a FIFO: its part of the job is over.
            close_job(r->actor, r->t_ns, false, false);
            m.kind = TimelineMarker::Kind::other;
            m.label = text_of(member(d, "key")) == "0" ? "→ FIFO" : "→ FIFO #" + text_of(member(d, "key"));
        } else if (r->op == Op::claim) {
            m.kind = TimelineMarker::Kind::other;
            const json& claimed = member(d, "claimed");
            m.label = fmt::format("XAUTOCLAIM {}", claimed.is_array() ? claimed.size() : 0);
        } else if (r->op == Op::lock_acquire) {
            m.kind = TimelineMarker::Kind::lock_acquire;
            const auto it = open.find(r->actor);
            if (it != open.end()) {
                if (r->t_ns > it->second.received_ns) {
                    TimelineBar wait;
                    wait.kind = TimelineBar::Kind::lock_wait;
                    wait.lane = r->actor;
                    wait.start_ns = it->second.received_ns;
                    wait.end_ns = r->t_ns;
                    const auto attempts = member(d, "attempts");
                    wait.label = attempts.is_null() ? "lock wait" : "lock wait, " + text_of(attempts) + " attempt(s)";
                    tl.bars.push_back(std::move(wait));
                }
                it->second.job_from_ns = r->t_ns;
            }
        } else if (r->op == Op::lock_release) {
            m.kind = TimelineMarker::Kind::lock_release;
            const auto result = int_of(member(d, "result"));
            m.bad = result && *result == 0;
            if (m.bad) m.label = "release → 0";
        } else if (r->op == Op::write) {
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
                const auto it = applied_max_v.find(order);
                if (it != applied_max_v.end() && *v < it->second) {
                    m.bad = true;
                    m.label += fmt::format(" — overwrites v={}", it->second);
                }
                if (it == applied_max_v.end() || *v > it->second) applied_max_v[order] = *v;
            }
            close_job(r->actor, r->t_ns, m.bad, false);
        } else if (r->op == Op::publish) {
            m.kind = TimelineMarker::Kind::publish;
            const std::string result = text_of(member(d, "result"));
            m.bad = result == "fail";
            if (result != "ok") m.label = result;
        } else {
            m.kind = TimelineMarker::Kind::other;
            // The reorder buffer's decisions, named on the marker.
            if (r->op == Op::buffer_hold) m.label = "hold, waiting for v=" + text_of(member(d, "waiting_for"));
            if (r->op == Op::buffer_release)
                m.label = text_of(member(d, "reason")) == "gap_timeout" ? "gap timeout: let through" : "let through";
            if (r->op == Op::late) {
                m.label = "late → " + text_of(member(d, "action"));
                m.bad = text_of(member(d, "action")) == "apply";
            }
        }
        tl.markers.push_back(std::move(m));
    }
    for (const auto& [index, i] : open_fault) tl.faults[i].end_ns = tl.end_ns;

    std::vector<std::string> still_open;
    for (const auto& [actor, job] : open) still_open.push_back(actor);
    for (const auto& actor : still_open) close_job(actor, tl.end_ns, false, true);
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

}  // namespace

Timeline idem_trial_timeline(const TrialOutcome& trial) {
    Timeline tl;
    const std::vector<const HistoryRecord*> records = records_in_time_order(trial, tl);

    // Lanes: the clients (actors that send), then the rest (the runner's faults).
    tl.lanes = lanes_of(records, {Op::start}, {Op::send}, true);

    std::map<int64_t, int64_t> owner;  // order id → its user
    for (const auto& o : trial.idem.orders) owner[o.id] = o.user_id;
    std::set<std::string> ordered;     // idem keys with an order already

    struct OpenRequest {
        std::string actor;
        int64_t from_ns = 0;
        bool duplicate = false;
    };
    std::map<std::string, OpenRequest> open;     // by actor|request|attempt
    std::map<std::string, std::string> current;  // actor → its latest open request
    auto request_key = [](const HistoryRecord& r) {
        return r.actor + "|" + text_of(member(r.data, "request")) + "|" + text_of(member(r.data, "attempt"));
    };

    for (const auto* r : records) {
        const json& d = r->data;
        if (r->op == Op::start) continue;
        // A fault is drawn once, where it ended (its ok or fail record).
        if (r->actor == "nemesis" && text_of(member(d, "phase")) == "invoke") continue;
        TimelineMarker m;
        m.op = to_string(r->op);
        m.lane = r->actor;
        m.t_ns = r->t_ns;
        m.detail = fmt::format("{:.3f} ms  {}", static_cast<double>(r->t_ns) / 1e6, idem_record_text(*r));
        m.kind = TimelineMarker::Kind::minor;
        if (r->op == Op::send) {
            m.kind = TimelineMarker::Kind::send;
            const std::string key = request_key(*r);
            open[key] = OpenRequest{r->actor, r->t_ns, false};
            current[r->actor] = key;
        } else if (r->op == Op::order) {
            m.kind = TimelineMarker::Kind::order;
            if (!member(d, "refused").is_null()) {
                m.label = "layer 4 refused";
            } else {
                const std::string key = text_of(member(d, "idem_key"));
                const bool duplicate = !ordered.insert(key).second;
                m.label = "order " + text_of(member(d, "order_id"));
                if (duplicate) {
                    m.bad = true;
                    m.label += " — duplicate";
                    const auto it = current.find(r->actor);
                    if (it != current.end() && open.count(it->second)) open[it->second].duplicate = true;
                }
            }
        } else if (r->op == Op::answer) {
            m.kind = TimelineMarker::Kind::answer;
            const int code = static_cast<int>(int_of(member(d, "code")).value_or(0));
            const std::string source = member(d, "source").is_string() ? member(d, "source").get<std::string>() : "";
            bool leak = false;
            if (const auto order = answered_order(d)) {
                const auto user = int_of(member(d, "user_id"));
                const auto it = owner.find(*order);
                leak = user && it != owner.end() && it->second != *user;
                if (leak) m.label = fmt::format("{} leak: order {} of user {}", code, *order, it->second);
            }
            if (!leak) m.label = source == "replay" ? "replay" : std::to_string(code);
            m.bad = leak;
            std::string key = request_key(*r);
            if (!open.count(key) && current.count(r->actor)) key = current[r->actor];
            const auto it = open.find(key);
            if (it != open.end()) {
                TimelineBar bar;
                bar.kind = TimelineBar::Kind::request;
                bar.lane = r->actor;
                bar.start_ns = it->second.from_ns;
                bar.end_ns = r->t_ns;
                bar.code = code;
                bar.source = source;
                bar.duplicate = it->second.duplicate;
                bar.leak = leak;
                bar.label = (bar.duplicate ? "duplicate · " : "") + request_label(code, source);
                tl.bars.push_back(std::move(bar));
                open.erase(it);
            }
        } else if (r->op == Op::fault || r->op == Op::observe) {
            m.kind = TimelineMarker::Kind::fault;
            m.label = member(d, "action").is_string() ? member(d, "action").get<std::string>() + " " + text_of(member(d, "target"))
                      : member(d, "type").is_string()  ? member(d, "type").get<std::string>()
                                                       : to_string(r->op);
        } else if (r->op == Op::release) {
            m.label = "DEL";
        } else if (r->op == Op::business_error) {
            m.label = "threw";
        } else if (r->op == Op::store && member(d, "written").is_boolean() && !member(d, "written").get<bool>()) {
            m.label = "key gone";
        } else if (r->op == Op::wait) {
            const auto acked = int_of(member(d, "acked")), wanted = int_of(member(d, "wanted"));
            if (acked && wanted && *acked < *wanted) m.label = fmt::format("WAIT → {}", *acked);
        }
        tl.markers.push_back(std::move(m));
    }
    // Requests without an answer (the client was killed) run to the end of the trial.
    for (const auto& entry : open) {
        const OpenRequest& req = entry.second;
        TimelineBar bar;
        bar.kind = TimelineBar::Kind::request;
        bar.lane = req.actor;
        bar.start_ns = req.from_ns;
        bar.end_ns = tl.end_ns;
        bar.duplicate = req.duplicate;
        bar.unfinished = true;
        bar.label = "no answer";
        tl.bars.push_back(std::move(bar));
    }
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
