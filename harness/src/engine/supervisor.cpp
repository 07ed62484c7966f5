#include "engine/supervisor.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "fault/faults.h"
#include "roles/idem_client.h"
#include "engine/timeouts.h"

namespace relab {

namespace {

bool is_consuming(const RoleLaunch& r) { return r.role == "consumer" || r.role == "reaper"; }

bool matches(const FaultTrigger::After& a, const HistoryRecord& r) {
    return r.op == a.op && (a.actor.empty() || r.actor == a.actor) && record_has_fields(r, a.fields);
}

// One fault of the schedule while the trial runs.
struct FaultState {
    const FaultSpec* spec = nullptr;
    int index = 0;              // 1-based, as the records and target_of name it
    int fired = 0;
    std::optional<Nanos> first_due;
    std::optional<Nanos> at_due;     // at_ms from the origin, once the origin is known
    std::optional<Nanos> after_due;  // the matched record's time + delay_ms
    std::string matched_actor;  // the actor of the record `after` matched
    std::optional<Target> target;  // resolved at the first firing
    bool ended = false;         // its repeats were ended ("until": "published", or a soak's deadline)
    bool pending() const { return !ended && fired < spec->trigger.count; }
    std::optional<Nanos> due() const {
        if (!first_due || !pending()) return std::nullopt;
        return *first_due + Millis{spec->trigger.every_ms} * fired;
    }
    // With both triggers, whichever comes later.
    void settle() {
        const auto& t = spec->trigger;
        if (first_due) return;
        if (t.at_ms && !at_due) return;
        if (t.after && !after_due) return;
        first_due = std::max(at_due.value_or(Nanos{0}), after_due.value_or(Nanos{0}));
    }
};

// What a lab kind adds to a fault's record: the state it looks at before the fault and after.
class FaultProbe {
public:
    virtual ~FaultProbe() = default;
    virtual nlohmann::json before(const FaultState& f) = 0;
    virtual void after(const FaultState& f, const nlohmann::json& before, nlohmann::json& details) = 0;
};

// Jepsen's nemesis for one trial, the same for every lab kind and both backends: reads the roles'
// new records, fires each fault of the schedule as its trigger comes due, and records it.
class Nemesis {
public:
    // want_origin: the caller needs the trial's origin (a soak's deadline counts from it), even in a
    // lab without faults.
    Nemesis(const std::vector<FaultSpec>& faults, Control& c, FaultProbe* probe, bool want_origin = false)
        : m_c(c), m_probe(probe), m_want_origin(want_origin) {
        for (size_t i = 0; i < faults.size(); ++i) {
            FaultState f;
            f.spec = &faults[i];
            f.index = static_cast<int>(i) + 1;
            m_faults.push_back(std::move(f));
        }
    }

    // New records: the origin and `after` triggers, then every fault now due. The roles' records
    // are read only while something waits for one (the origin, an `after` trigger, a probe's
    // look back): a lab without faults, or a soak whose kills run by the clock, does not read and
    // keep its hundreds of thousands of records twice.
    void step() {
        if (needs_records()) {
            const size_t from = m_seen.size();
            m_c.poll_records(m_seen);
            for (size_t i = from; i < m_seen.size(); ++i) consider(m_seen[i]);
        }
        fire_due();
    }

    // The publishing roles are done: faults repeated "until": "published" fire no more.
    void end_repeats_until_published() {
        for (auto& f : m_faults)
            if (f.spec->trigger.until_published) f.ended = true;
    }
    // A soak's deadline: no fault fires any more.
    void end_all() {
        for (auto& f : m_faults) f.ended = true;
    }

    // A record of the supervisor's own (the idempotency labs' go signal).
    void own(HistoryRecord r) {
        m_c.record(r);
        m_seen.push_back(std::move(r));
        consider(m_seen.back());
    }

    bool pending() const {
        return std::any_of(m_faults.begin(), m_faults.end(), [](const FaultState& f) { return f.pending(); });
    }
    // A fault still to fire at a known time: the trial is not quiet while one is to come.
    bool due_pending() const {
        return std::any_of(m_faults.begin(), m_faults.end(), [](const FaultState& f) { return f.due().has_value(); });
    }

    std::optional<Nanos> wake_at() const {
        std::optional<Nanos> at;
        for (const auto& f : m_faults) {
            if (!f.pending()) continue;
            // A fault waiting for a record (or for the origin) looks again soon.
            const Nanos t = f.due().value_or(m_c.now() + timeouts::kFaultPoll);
            if (!at || t < *at) at = t;
        }
        return at;
    }

    std::string unfired() const {
        for (const auto& f : m_faults)
            if (f.pending() && !f.first_due)
                return fmt::format("fault {} ({}) never fired: no history record matched its trigger {} within {} ms",
                                   f.index, to_string(f.spec->action),
                                   f.spec->trigger.after ? nlohmann::json{{"op", to_string(f.spec->trigger.after->op)},
                                                                          {"actor", f.spec->trigger.after->actor},
                                                                          {"fields", f.spec->trigger.after->fields}}
                                                               .dump()
                                                         : std::string("at_ms"),
                                   timeouts::kFaultTrigger.count());
        return "a fault never fired";
    }

    // Jepsen's nemesis op: invoke, then ok (what happened) or fail (why not).
    void fire(const FaultState* f, FaultAction action, const Target& target, const std::string& note) {
        nlohmann::json base = {{"action", to_string(action)}, {"target", target_name(target)}, {"fault", f ? f->index : 0}};
        if (!note.empty()) base["note"] = note;
        if (f && !f->spec->name.empty()) base["name"] = f->spec->name;
        auto emit = [&](const std::string& phase, nlohmann::json extra) {
            nlohmann::json d = base;
            d["phase"] = phase;
            for (auto& [k, v] : extra.items()) d[k] = v;
            own(HistoryRecord{0, m_c.now().count(), "nemesis", Op::fault, std::move(d)});
        };
        emit("invoke", nlohmann::json::object());
        try {
            FaultSpec plain;
            plain.action = action;
            const FaultSpec& spec = f ? *f->spec : plain;
            const nlohmann::json before = m_probe && f ? m_probe->before(*f) : nlohmann::json();
            nlohmann::json details = apply_fault(spec, target, m_c);
            if (m_probe && f) m_probe->after(*f, before, details);
            emit("ok", std::move(details));
            if (f && !f->spec->name.empty()) m_c.raise_flag(f->spec->name);
        } catch (const std::runtime_error& e) {
            emit("fail", {{"error", e.what()}});
        }
    }

    void set_probe(FaultProbe* probe) { m_probe = probe; }
    const std::vector<HistoryRecord>& seen() const { return m_seen; }
    std::optional<Nanos> origin() const { return m_origin; }

private:
    bool needs_records() const {
        if (m_probe) return true;  // an idempotency lab's probe looks back at the clients' records
        if (!m_origin && (m_want_origin || !m_faults.empty())) return true;
        return std::any_of(m_faults.begin(), m_faults.end(),
                           [](const FaultState& f) { return f.pending() && f.spec->trigger.after && !f.after_due; });
    }

    void consider(const HistoryRecord& r) {
        if (r.op == Op::start && !m_origin) {
            m_origin = Nanos{r.t_ns};
            for (auto& f : m_faults)
                if (f.spec->trigger.at_ms) {
                    f.at_due = *m_origin + Millis{*f.spec->trigger.at_ms};
                    f.settle();
                }
        }
        for (auto& f : m_faults) {
            const auto& after = f.spec->trigger.after;
            if (!after || f.after_due || !matches(*after, r)) continue;
            f.after_due = Nanos{r.t_ns} + Millis{f.spec->trigger.delay_ms};
            f.matched_actor = r.actor;
            f.settle();
        }
    }

    void fire_due() {
        for (auto& f : m_faults) {
            while (f.pending() && f.due() && m_c.now() >= *f.due()) {
                if (!f.target) f.target = resolve(f);
                ++f.fired;
                fire(&f, f.spec->action, *f.target, f.spec->note);
            }
        }
    }

    Target resolve(const FaultState& f) const {
        if (f.spec->target_of > 0) {
            const FaultState& other = m_faults.at(static_cast<size_t>(f.spec->target_of - 1));
            if (!other.target)
                throw std::runtime_error(fmt::format("fault {} targets fault {}'s target, which has not fired yet",
                                                     f.index, f.spec->target_of));
            return *other.target;
        }
        if (f.spec->matched) return Target::role(f.matched_actor);
        return f.spec->target;
    }

    Control& m_c;
    FaultProbe* m_probe;
    bool m_want_origin = false;
    std::vector<FaultState> m_faults;
    std::vector<HistoryRecord> m_seen;
    std::optional<Nanos> m_origin;
};

class TrialSupervisor {
public:
    TrialSupervisor(const Scenario& s, const std::vector<RoleLaunch>& roles, Control& c)
        : m_s(s), m_flow(s.flow()), m_c(c),
          m_nemesis(s.faults, c, nullptr, m_flow.soak.enabled || m_flow.stream.deadline_ms > 0) {
        for (const auto& r : roles) m_roles.push_back({Target::role(r.actor), is_consuming(r)});
    }

    void run() {
        const Nanos deadline = m_c.now() + stream_trial_budget(m_s) - Millis{m_flow.stream.block_ms} - timeouts::kStopGrace;
        while (std::any_of(m_roles.begin(), m_roles.end(),
                           [&](const Watched& r) { return !r.consuming && !m_c.finished(r.target); })) {
            step(deadline, "the publishing roles to finish");
            if (soak_deadline_passed()) break;
            m_c.wait(Control::Phase::publishing, wake_at());
        }
        if (!m_deadline_passed) {
            m_nemesis.end_repeats_until_published();
            m_c.check_roles();
        }
        Nanos drained_at{-1};  // when the group was last seen drained with faults still to fire
        m_moved = {m_c.activity(), m_c.now()};
        while (!m_deadline_passed) {
            step(deadline, "the consumers to acknowledge every entry");
            const bool drained = m_c.drained();
            if (drained && !m_nemesis.pending()) break;
            if (soak_deadline_passed()) break;
            if (!drained && quiet_passed()) break;
            if (drained) {
                // Only faults waiting for a record that has not come: give them a bounded time.
                if (drained_at.count() < 0) drained_at = m_c.now();
                if (m_c.now() - drained_at > timeouts::kFaultTrigger)
                    throw std::runtime_error(m_nemesis.unfired() + " of the group draining");
            } else {
                drained_at = Nanos{-1};
            }
            m_c.wait(Control::Phase::draining, wake_at());
        }
        m_nemesis.step();
        // A role still paused would never see the stop flag.
        for (const auto& r : m_roles)
            if (!m_c.finished(r.target) && m_c.paused(r.target))
                m_nemesis.fire(nullptr, FaultAction::resume, r.target, "the trial ends: resumed so it can stop");
        m_c.raise_stop();
        const Nanos stop_deadline = m_c.now() + Millis{m_flow.stream.block_ms} + timeouts::kStopGrace;
        for (;;) {
            m_c.unblock_readers();
            m_c.wait(Control::Phase::stopping, m_c.now() + Millis{5});
            if (std::all_of(m_roles.begin(), m_roles.end(),
                            [&](const Watched& r) { return !r.consuming || m_c.finished(r.target); }))
                break;
            if (m_c.now() > stop_deadline) {
                if (!m_deadline_passed && !m_ended_quiet) throw std::runtime_error("consumers did not stop when told to");
                // Past a soak's deadline, or in a trial that ended quiet, a consumer busy with what
                // it holds is stopped: what it holds is the trial's result.
                for (const auto& r : m_roles)
                    if (!m_c.finished(r.target))
                        m_nemesis.fire(nullptr, FaultAction::kill, r.target,
                                       m_ended_quiet ? "the trial ended quiet and it did not stop when told to"
                                                     : "the trial's deadline passed and it did not stop when told to");
                break;
            }
        }
        m_c.check_roles();
        if (m_flow.soak.enabled) record_group();
    }

private:
    void step(Nanos deadline, const char* waiting_for) {
        m_c.check_roles();
        m_nemesis.step();
        if (m_c.now() > deadline) throw std::runtime_error(fmt::format("trial timed out waiting for {}", waiting_for));
    }

    // Nothing moved (no record, no ack) for the lab's quiet_ms and no fault is due: the group will
    // not drain by itself. The trial ends here and what it left pending or undelivered is its
    // result, counted by the accounting; a fault waiting for a record that cannot come fires no more.
    bool quiet_passed() {
        const int64_t activity = m_c.activity();
        if (activity != m_moved.activity || m_nemesis.due_pending()) {
            m_moved = {activity, m_c.now()};
            return false;
        }
        const Millis quiet{m_flow.stream.quiet_ms};
        if (m_c.now() - m_moved.at < quiet) return false;
        m_nemesis.end_all();
        m_ended_quiet = true;
        nlohmann::json g = {{"quiet_ms", m_flow.stream.quiet_ms}};
        // The server's PEL, not only the history: a SIGKILLed consumer's last receive may never
        // have reached its history file, while the group still holds the entry.
        if (const auto pel = m_c.pel_ids()) g["pel"] = *pel;
        g["text"] = fmt::format("the trial ended with the group not drained: nothing moved for {} ms (stream.quiet_ms)",
                                m_flow.stream.quiet_ms);
        m_c.record(HistoryRecord{0, m_c.now().count(), "relab", Op::observe, std::move(g)});
        return true;
    }

    // A soak lab's deadline, once the origin is known: the last event's time + drain_ms; a stream
    // lab's stream.deadline_ms from its origin.
    std::optional<Nanos> soak_deadline() const {
        if (!m_nemesis.origin()) return std::nullopt;
        if (m_flow.soak.enabled) return *m_nemesis.origin() + Millis{soak_deadline_ms(m_flow)};
        if (m_flow.stream.deadline_ms > 0) return *m_nemesis.origin() + Millis{m_flow.stream.deadline_ms};
        return std::nullopt;
    }

    int64_t deadline_ms() const { return m_flow.soak.enabled ? soak_deadline_ms(m_flow) : m_flow.stream.deadline_ms; }

    std::optional<Nanos> wake_at() const {
        std::optional<Nanos> at = m_nemesis.wake_at();
        if (const auto d = soak_deadline(); d && (!at || *d < *at)) at = *d;
        return at;
    }

    // Past a soak's deadline the trial ends where it is: no fault fires any more, the publishing
    // roles still running are stopped (SIGKILL, recorded as the nemesis's), and what the group
    // holds is read at the end as the trial's result.
    bool soak_deadline_passed() {
        const auto d = soak_deadline();
        if (!d || m_c.now() < *d) return false;
        m_deadline_passed = true;
        m_nemesis.end_all();
        for (const auto& r : m_roles)
            if (!r.consuming && !m_c.finished(r.target))
                m_nemesis.fire(nullptr, FaultAction::kill, r.target,
                               fmt::format("the trial's deadline ({} ms) passed while it was still publishing",
                                           deadline_ms()));
        if (!m_flow.soak.enabled) {
            // What the group left is the trial's result: the accounting counts it from this record.
            nlohmann::json g = {{"stream_deadline_ms", m_flow.stream.deadline_ms}};
            g["text"] = fmt::format("the trial ended with the group not drained: its deadline passed ({} ms, "
                                    "stream.deadline_ms)",
                                    m_flow.stream.deadline_ms);
            m_c.record(HistoryRecord{0, m_c.now().count(), "relab", Op::observe, std::move(g)});
        }
        return true;
    }

    // The consumer group as the server has it at the trial's end: a soak's pending and undelivered
    // entries are measured there, not inferred from the roles' records.
    void record_group() {
        nlohmann::json g;
        try {
            g = m_c.group_state();
        } catch (const std::exception& e) {
            g = {{"error", e.what()}};
        }
        const int64_t pending = g.value("pending", int64_t{-1}), undelivered = g.value("undelivered", int64_t{-1});
        g["consumer_group"] = m_flow.stream.group;
        g["drained"] = pending == 0 && undelivered == 0;
        g["deadline_passed"] = m_deadline_passed;
        g["deadline_ms"] = soak_deadline_ms(m_flow);
        g["text"] = g.contains("error")
                        ? fmt::format("consumer group {} at the end: unreadable ({})", m_flow.stream.group,
                                      g.at("error").get<std::string>())
                        : fmt::format("consumer group {} at the end: {} pending, {} never delivered{}", m_flow.stream.group,
                                      pending, undelivered,
                                      m_deadline_passed
                                          ? fmt::format("; the soak's deadline ({} ms) passed before it drained",
                                                        soak_deadline_ms(m_flow))
                                          : std::string());
        m_c.record(HistoryRecord{0, m_c.now().count(), "relab", Op::observe, std::move(g)});
    }

    // A role of the trial as the supervisor watches it: its target, built once rather than at
    // every look, and whether it consumes (it stops on the stop flag) or publishes.
    struct Watched {
        Target target;
        bool consuming = false;
    };
    // The last change of Control::activity() the supervisor saw, and when it saw it.
    struct Moved {
        int64_t activity = 0;
        Nanos at{0};
    };

    const Scenario& m_s;
    const StreamLab& m_flow;  // the stream lab it supervises
    std::vector<Watched> m_roles;
    Control& m_c;
    Nemesis m_nemesis;
    bool m_deadline_passed = false;
    bool m_ended_quiet = false;
    Moved m_moved;
};

// The idempotency labs' view of a fault: which of the keys the clients had written by then exist
// before and after a server fault, the key a killed client left behind, the keys' TTLs.
class IdemProbe : public FaultProbe {
public:
    IdemProbe(const Scenario& s, Control& c, const Nemesis& n) : m_s(s), m_c(c), m_n(n) {}

    nlohmann::json before(const FaultState& f) override {
        const FaultAction a = f.spec->action;
        // A flood of the cache's own instance: the idempotency keys it must not touch are the primary's.
        const FaultTarget kind = f.target->kind;
        if ((kind == FaultTarget::redis || (kind == FaultTarget::redis_cache && a == FaultAction::flood)) &&
            (a == FaultAction::restart || a == FaultAction::failover || a == FaultAction::flood ||
             a == FaultAction::observe))
            return {{"keys", m_c.present(keys_due(f))}};
        if (a == FaultAction::kill && kind == FaultTarget::role) {
            // The key of the client's last claim (a trigger "after its claim" has seen it).
            std::string key;
            for (const auto& r : m_n.seen())
                if (r.actor == f.target->actor && r.op == Op::claim && r.data.contains("key")) key = r.data.value("key", "");
            return {{"key", key}};
        }
        return nlohmann::json::object();
    }

    void after(const FaultState& f, const nlohmann::json& before, nlohmann::json& d) override {
        if (before.contains("key")) {
            const std::string key = before.at("key");
            if (key.empty()) return;
            const int64_t pttl = m_c.pttl_ms(key);
            d["key"] = key;
            d["pttl_ms"] = pttl;
            d["text"] = fmt::format("client {} killed (SIGKILL, as an OOM kill) right after its claim: {} stays "
                                    "in_progress, PTTL {} ms",
                                    f.target->actor, key, pttl);
            m_killed.push_back(key);
            return;
        }
        if (!before.contains("keys")) return;
        const std::vector<std::string> keys = before.at("keys");
        if (f.spec->action == FaultAction::observe) {
            std::string text;
            const auto due = keys_due(f);
            for (const auto& k : due) {
                const int64_t pttl = m_c.pttl_ms(k);
                if (due.size() == 1) d["pttl_ms"] = pttl;  // one key: its TTL left, for an expectation's band
                text += fmt::format("{}{} → {}", text.empty() ? "" : "; ", k,
                                    pttl == -2 ? std::string("absent") : fmt::format("TTL {} s", pttl < 0 ? pttl : (pttl + 500) / 1000));
            }
            d["text"] = "keys: " + (text.empty() ? std::string("none") : text);
            return;
        }
        const std::vector<std::string> left = m_c.present(keys);
        std::vector<std::string> lost;
        for (const auto& k : keys)
            if (std::find(left.begin(), left.end(), k) == left.end()) lost.push_back(k);
        d["idem_keys_before"] = keys.size();
        d["idem_keys_after"] = left.size();
        d["survived"] = left;
        d["lost"] = lost;
        d["text"] = fmt::format("{}; idempotency keys {}/{} still there{}", d.value("text", ""), left.size(), keys.size(),
                                lost.empty() ? "" : " — gone: " + some(lost));
    }

    // Keys that killed clients left behind, as they are at the end of the trial.
    void observe_left_keys() {
        for (const auto& key : m_killed) {
            const int64_t pttl = m_c.pttl_ms(key);
            HistoryRecord r{0, m_c.now().count(), "relab", Op::observe,
                            {{"key", key},
                             {"pttl_ms", pttl},
                             {"text", fmt::format("at the end: {} {}", key,
                                                  pttl == -2 ? std::string("is gone")
                                                             : fmt::format("still there, PTTL {} ms", pttl))}}};
            m_c.record(std::move(r));
        }
    }

private:
    // The keys of the requests due by the fault's at_ms (or by now, for a fault on a record only).
    std::vector<std::string> keys_due(const FaultState& f) const {
        int64_t at_ms = f.spec->trigger.at_ms.value_or(0);
        if (!f.spec->trigger.at_ms && m_n.origin())
            at_ms = std::chrono::duration_cast<Millis>(m_c.now() - *m_n.origin()).count();
        return idem_keys_due(m_s, at_ms);
    }

    static std::string some(const std::vector<std::string>& keys) {
        constexpr size_t kShown = 5;
        std::string out;
        for (size_t i = 0; i < keys.size() && i < kShown; ++i) out += (i == 0 ? "" : ", ") + keys[i];
        if (keys.size() > kShown) out += fmt::format(" and {} more", keys.size() - kShown);
        return out;
    }

    const Scenario& m_s;
    Control& m_c;
    const Nemesis& m_n;
    std::vector<std::string> m_killed;
};

// The middleware answers a lost store only in a lab that schedules a server fault; one that came
// before the first such fault began was not caused by it.
void fail_on_unexplained_outage(const std::vector<HistoryRecord>& history) {
    std::optional<int64_t> outage_from;
    for (const auto& r : history)
        if (r.actor == "nemesis" && r.data.value("phase", "") == "invoke" &&
            is_redis_server(fault_target_kind(r.data.value("target", ""))) &&
            disrupts(fault_action_named(r.data.value("action", "")).value_or(FaultAction::resume)))
            if (!outage_from || r.t_ns < *outage_from) outage_from = r.t_ns;
    for (const auto& r : history) {
        if (r.data.value("error_class", "") != "unavailable") continue;
        if (outage_from && r.t_ns >= *outage_from) continue;
        throw HarnessError(fmt::format(
            "client {} lost the idempotency store at its {} {:.1f} ms before any server fault of the lab began: {} "
            "(check that redis-server is running and reachable)",
            r.actor, to_string(r.op), static_cast<double>((outage_from ? *outage_from : r.t_ns) - r.t_ns) / 1e6,
            r.data.value("error", "")));
    }
}

}  // namespace

Nanos stream_trial_budget(const Scenario& s) {
    const StreamLab& flow = s.flow();
    int64_t last_ms = last_event_ms(flow);
    for (const auto& f : s.faults) {
        const auto& t = f.trigger;
        // Repeats "until": "published" end with the events.
        const int64_t repeats = t.until_published ? 0 : t.every_ms * (t.count - 1);
        last_ms = std::max(last_ms, t.at_ms.value_or(0) + t.delay_ms + repeats);
    }
    const Nanos budget =
        timeouts::kBarrier + timeouts::kPublishAndDrain + Millis{last_ms + flow.stream.block_ms} + timeouts::kStopGrace;
    if (!flow.soak.enabled) {
        // A stream deadline ends the trial as a soak's does: then one BLOCK, the grace, the kills.
        const Nanos own = timeouts::kBarrier + Millis{flow.stream.deadline_ms + flow.stream.block_ms} + timeouts::kStopGrace +
                          timeouts::kStopGrace + timeouts::kSignalTakesEffect;
        return flow.stream.deadline_ms > 0 ? std::max(budget, own) : budget;
    }
    // A soak ends at its own deadline; after it, the consumers get one BLOCK and the grace to stop,
    // then whatever still runs is killed.
    const Nanos soak = timeouts::kBarrier + Millis{soak_deadline_ms(flow) + flow.stream.block_ms} + timeouts::kStopGrace +
                       timeouts::kStopGrace + timeouts::kSignalTakesEffect;
    return std::max(budget, soak);
}

void supervise_stream_trial(const Scenario& s, const std::vector<RoleLaunch>& roles, Control& c) {
    TrialSupervisor(s, roles, c).run();
}

Nanos idem_trial_budget(const Scenario& s) {
    int64_t last_ms = 0;
    for (const auto& f : s.faults) last_ms = std::max(last_ms, f.trigger.at_ms.value_or(0) + f.trigger.delay_ms);
    return timeouts::kIdemStart + timeouts::kIdemOriginAhead + Millis{last_ms + idem_activity_budget_ms(s)} +
           timeouts::kIdemAfter;
}

Nanos supervise_idem_trial(const Scenario& s, Control& c) {
    Nemesis n(s.faults, c, nullptr);
    IdemProbe probe(s, c, n);
    n.set_probe(&probe);
    const Nanos ready_deadline = c.now() + timeouts::kIdemStart;
    while (!c.clients_ready()) {
        c.check_roles();
        if (c.now() > ready_deadline)
            throw std::runtime_error(fmt::format("the clients did not all start within {} ms", timeouts::kIdemStart.count()));
        c.wait(Control::Phase::clients, c.now() + Millis{2});
    }
    // A little ahead, so every client sees the signal before its first send is due.
    const Nanos origin = c.now() + timeouts::kIdemOriginAhead;
    c.go(origin);
    n.own(HistoryRecord{0, origin.count(), "relab", Op::start, nlohmann::json::object()});
    const Nanos deadline = c.now() + idem_trial_budget(s);
    std::vector<Target> clients;
    for (const auto& r : trial_roles(s)) clients.push_back(Target::role(r.actor));
    std::optional<Nanos> done_at;  // when the clients had all finished with faults still to fire
    for (;;) {
        c.check_roles();
        n.step();
        const bool running =
            std::any_of(clients.begin(), clients.end(), [&](const Target& client) { return !c.finished(client); });
        if (!running && !n.pending()) break;
        // Only faults waiting for a record that will not come now: the same bounded time as a
        // stream lab gives them once its group drained.
        if (!running && !done_at) done_at = c.now();
        if (done_at && c.now() - *done_at > timeouts::kFaultTrigger)
            throw std::runtime_error(n.unfired() + " of the clients finishing");
        if (c.now() > deadline)
            throw std::runtime_error(fmt::format("the clients did not finish within {} ms",
                                                 std::chrono::duration_cast<Millis>(idem_trial_budget(s)).count()));
        c.wait(Control::Phase::clients, n.wake_at());
    }
    probe.observe_left_keys();
    c.check_roles();
    n.step();  // the last records: a lab with faults has read every one of them
    fail_on_unexplained_outage(n.seen());
    return origin;
}

}  // namespace relab
