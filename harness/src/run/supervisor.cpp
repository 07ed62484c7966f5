#include "run/supervisor.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "fault/faults.h"
#include "run/timeouts.h"

namespace relab {

namespace {

bool is_consuming(const RoleLaunch& r) { return r.role == "consumer" || r.role == "reaper"; }

// `pattern` holds in `value`: objects key by key (recursively), anything else equal.
bool subset(const nlohmann::json& pattern, const nlohmann::json& value) {
    if (!pattern.is_object()) return pattern == value;
    if (!value.is_object()) return false;
    for (const auto& [k, v] : pattern.items())
        if (!value.contains(k) || !subset(v, value.at(k))) return false;
    return true;
}

bool matches(const FaultTrigger::After& a, const HistoryRecord& r) {
    return r.op == a.op && (a.actor.empty() || r.actor == a.actor) && subset(a.fields, r.data);
}

// One fault of the schedule while the trial runs.
struct FaultState {
    const FaultSpec* spec = nullptr;
    int index = 0;              // 1-based, as the records and target_of name it
    int fired = 0;
    std::optional<Nanos> first_due;
    std::string matched_actor;  // the actor of the record `after` matched
    std::string target;         // resolved at the first firing
    bool pending() const { return fired < spec->trigger.count; }
    std::optional<Nanos> due() const {
        if (!first_due || !pending()) return std::nullopt;
        return *first_due + Millis{spec->trigger.every_ms} * fired;
    }
};

class TrialSupervisor {
public:
    TrialSupervisor(const Scenario& s, const std::vector<RoleLaunch>& roles, Control& c) : m_s(s), m_roles(roles), m_c(c) {
        for (size_t i = 0; i < s.faults.size(); ++i) {
            FaultState f;
            f.spec = &s.faults[i];
            f.index = static_cast<int>(i) + 1;
            m_faults.push_back(std::move(f));
        }
    }

    void run() {
        const Nanos deadline = m_c.now() + stream_trial_budget(m_s) - Millis{m_s.stream.block_ms} - timeouts::kStopGrace;
        while (std::any_of(m_roles.begin(), m_roles.end(),
                           [&](const RoleLaunch& r) { return !is_consuming(r) && !m_c.finished(r.actor); })) {
            step(deadline, "the publishing roles to finish");
            m_c.wait(Control::Phase::publishing, wake_at());
        }
        m_c.check_roles();
        Nanos drained_at{-1};  // when the group was last seen drained with faults still to fire
        for (;;) {
            step(deadline, "the consumers to acknowledge every entry");
            const bool drained = m_c.drained();
            if (drained && !pending()) break;
            if (drained) {
                // Only faults waiting for a record that has not come: give them a bounded time.
                if (drained_at.count() < 0) drained_at = m_c.now();
                if (m_c.now() - drained_at > timeouts::kFaultTrigger) throw std::runtime_error(unfired());
            } else {
                drained_at = Nanos{-1};
            }
            m_c.wait(Control::Phase::draining, wake_at());
        }
        observe();
        // A role still paused would never see the stop flag.
        for (const auto& r : m_roles)
            if (!m_c.finished(r.actor) && m_c.paused(r.actor)) nemesis(0, FaultAction::resume, r.actor, "the trial ends: resumed so it can stop");
        m_c.raise_stop();
        const Nanos stop_deadline = m_c.now() + Millis{m_s.stream.block_ms} + timeouts::kStopGrace;
        for (;;) {
            m_c.unblock_readers();
            m_c.wait(Control::Phase::stopping, m_c.now() + Millis{5});
            if (std::all_of(m_roles.begin(), m_roles.end(),
                            [&](const RoleLaunch& r) { return !is_consuming(r) || m_c.finished(r.actor); }))
                break;
            if (m_c.now() > stop_deadline) throw std::runtime_error("consumers did not stop when told to");
        }
        m_c.check_roles();
    }

private:
    void step(Nanos deadline, const char* waiting_for) {
        m_c.check_roles();
        observe();
        fire_due();
        if (m_c.now() > deadline) throw std::runtime_error(fmt::format("trial timed out waiting for {}", waiting_for));
    }

    bool pending() const {
        return std::any_of(m_faults.begin(), m_faults.end(), [](const FaultState& f) { return f.pending(); });
    }

    std::string unfired() const {
        for (const auto& f : m_faults)
            if (f.pending() && !f.first_due)
                return fmt::format("fault {} ({}) never fired: no history record matched its trigger {} within {} ms of "
                                   "the group draining",
                                   f.index, to_string(f.spec->action),
                                   f.spec->trigger.after ? nlohmann::json{{"op", to_string(f.spec->trigger.after->op)},
                                                                          {"actor", f.spec->trigger.after->actor},
                                                                          {"fields", f.spec->trigger.after->fields}}
                                                               .dump()
                                                         : std::string("at_ms"),
                                   timeouts::kFaultTrigger.count());
        return "a fault never fired";
    }

    // New records: the origin (the publishing role's start) and `after` triggers. Only a lab with
    // faults needs them: the others skip reading the roles' histories on every poll.
    void observe() {
        if (m_faults.empty()) return;
        const size_t from = m_seen.size();
        m_c.poll_records(m_seen);
        for (size_t i = from; i < m_seen.size(); ++i) consider(m_seen[i]);
    }

    void consider(const HistoryRecord& r) {
        if (r.op == Op::start && !m_origin) {
            m_origin = Nanos{r.t_ns};
            for (auto& f : m_faults)
                if (f.spec->trigger.at_ms) f.first_due = *m_origin + Millis{*f.spec->trigger.at_ms};
        }
        for (auto& f : m_faults) {
            const auto& after = f.spec->trigger.after;
            if (!after || f.first_due || !matches(*after, r)) continue;
            f.first_due = Nanos{r.t_ns} + Millis{f.spec->trigger.delay_ms};
            f.matched_actor = r.actor;
        }
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

    void fire_due() {
        for (auto& f : m_faults) {
            while (f.pending() && f.due() && m_c.now() >= *f.due()) {
                if (f.target.empty()) f.target = resolve(f);
                ++f.fired;
                nemesis(f.index, f.spec->action, f.target, f.spec->note);
            }
        }
    }

    std::string resolve(const FaultState& f) const {
        if (f.spec->target_of > 0) {
            const FaultState& other = m_faults.at(static_cast<size_t>(f.spec->target_of - 1));
            if (other.target.empty())
                throw std::runtime_error(fmt::format("fault {} targets fault {}'s target, which has not fired yet",
                                                     f.index, f.spec->target_of));
            return other.target;
        }
        if (f.spec->target == "matched") return f.matched_actor;
        return f.spec->target;
    }

    // Jepsen's nemesis op: invoke, then ok (what happened) or fail (why not).
    void nemesis(int index, FaultAction action, const std::string& target, const std::string& note) {
        nlohmann::json base = {{"action", to_string(action)}, {"target", target}, {"fault", index}};
        if (!note.empty()) base["note"] = note;
        auto emit = [&](const std::string& phase, nlohmann::json extra) {
            nlohmann::json d = base;
            d["phase"] = phase;
            for (auto& [k, v] : extra.items()) d[k] = v;
            HistoryRecord r{0, m_c.now().count(), "nemesis", Op::fault, std::move(d)};
            m_c.record(r);
            m_seen.push_back(r);
            consider(m_seen.back());
        };
        emit("invoke", nlohmann::json::object());
        try {
            emit("ok", {{"text", apply_fault(action, target, m_c)}});
        } catch (const std::runtime_error& e) {
            emit("fail", {{"error", e.what()}});
        }
    }

    const Scenario& m_s;
    const std::vector<RoleLaunch>& m_roles;
    Control& m_c;
    std::vector<FaultState> m_faults;
    std::vector<HistoryRecord> m_seen;
    std::optional<Nanos> m_origin;
};

}  // namespace

Nanos stream_trial_budget(const Scenario& s) {
    int64_t last_ms = 0;
    for (const auto& e : s.events) last_ms = std::max(last_ms, e.at_ms);
    for (const auto& f : s.faults) {
        const auto& t = f.trigger;
        last_ms = std::max(last_ms, t.at_ms.value_or(0) + t.delay_ms + t.every_ms * (t.count - 1));
    }
    return timeouts::kBarrier + timeouts::kPublishAndDrain + Millis{last_ms + s.stream.block_ms} + timeouts::kStopGrace;
}

void supervise_stream_trial(const Scenario& s, const std::vector<RoleLaunch>& roles, Control& c) {
    TrialSupervisor(s, roles, c).run();
}

}  // namespace relab
