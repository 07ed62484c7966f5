#include <algorithm>
#include <optional>
#include <set>

#include "roles/event.h"
#include "roles/roles.h"

namespace relab {

namespace {

bool row_fails(const DispatcherSpec& spec, int64_t outbox_id, int attempt) {
    for (const auto& f : spec.failures)
        if (f.outbox_id == outbox_id)
            return std::find(f.attempts.begin(), f.attempts.end(), attempt) != f.attempts.end();
    return false;
}

// One attempt to publish an outbox row, for both dispatchers: a scheduled failure is recorded
// (the row stays, its attempts counted); else the XADD, its record, the scenario's pause before
// the mark, and the mark. `data` already names the round, row, event and attempt. Returns whether
// the row went out.
bool publish_row(const DispatcherSpec& d, const std::string& stream, const std::string& actor, RolePorts& p,
                 const OutboxRow& row, nlohmann::json data) {
    const Event ev{row.aggregate_id, row.type, row.version};
    const int attempt = row.attempts + 1;
    const Nanos t = p.clock.now();
    if (row_fails(d, row.id, attempt)) {
        p.outbox.count_failed_attempt(row.id);  // the row stays in the outbox
        data["result"] = "fail";
        data["reason"] = "simulated publish failure";
        p.history.record(HistoryRecord{0, t.count(), actor, Op::publish, std::move(data)});
        return false;
    }
    const auto ids = p.stream.xadd(stream, {event_fields(ev)});
    // In the stream from here on, whatever becomes of the row's mark.
    data["result"] = "ok";
    data["entry"] = ids.at(0);
    const nlohmann::json round = data.contains("round") ? data.at("round") : nlohmann::json();
    p.history.record(HistoryRecord{0, t.count(), actor, Op::publish, std::move(data)});
    if (d.publish_ms > 0) p.clock.sleep_for(Millis{d.publish_ms});
    p.outbox.mark_published(row.id, ids.at(0));
    // The end of the row's publish: its time (publish_ms after the XADD) is the lab's own.
    nlohmann::json mark = {{"outbox_id", row.id}, {"entry", ids.at(0)}};
    if (!round.is_null()) mark["round"] = round;
    p.history.record(HistoryRecord{0, p.clock.now().count(), actor, Op::mark, std::move(mark)});
    return true;
}

// A lab that faults its PostgreSQL (the caller rethrows anywhere else): the round's uncommitted
// marks are gone with the connection; the error is recorded, and after a pause a new round, on a
// new connection, reads what is still unpublished.
void ride_out_store_error(const std::string& actor, RolePorts& p, int round, const StoreUnavailable& e) {
    p.history.record(HistoryRecord{0, p.clock.now().count(), actor, Op::error,
                                   {{"round", round}, {"error", e.what()}, {"kind", "unavailable"}, {"server", "postgres"}}});
    p.clock.sleep_for(kRetryAfterRedisError);
}

}  // namespace

void run_source_app(const RoleSettings& s, RolePorts& p, Millis barrier_timeout) {
    p.stream.wait_readers_blocked(s.consumers, barrier_timeout);
    const Nanos origin = p.clock.now();
    p.history.record(HistoryRecord{0, origin.count(), "app", Op::start, nlohmann::json::object()});
    for (const auto& e : s.events) {
        const Nanos wait = origin + Millis{e.at_ms} - p.clock.now();
        if (wait.count() > 0) p.clock.sleep_for(wait);
        int64_t id = 0;
        for (;;) {
            try {
                id = p.outbox.record_change(e.order, e.type, e.version);
                break;
            } catch (const StoreUnavailable& err) {
                // A lab that faults its PostgreSQL: the transaction did not happen; tried again.
                if (!s.postgres_faults_scheduled) throw;
                p.history.record(HistoryRecord{0, p.clock.now().count(), "app", Op::error,
                                               {{"error", err.what()}, {"kind", "unavailable"}, {"server", "postgres"}}});
                p.clock.sleep_for(kRetryAfterRedisError);
            }
        }
        p.history.record(HistoryRecord{0, p.clock.now().count(), "app", Op::outbox_insert,
                                       {{"outbox_id", id}, {"event", event_json(Event{e.order, e.type, e.version})}}});
    }
    p.kv.set_nx_px(kSourceDoneKey, "1", Millis{3600'000});
}

namespace {

// claim skip_locked: one row per transaction, held across its XADD and its mark, so that no other
// dispatcher takes it (or, per key, any later row of its aggregate) meanwhile. A round claims rows
// until none is left to it; the aggregates (per key) or rows (naive) whose publish failed wait for
// the next round, poll_ms later. Ends once the outbox has no unpublished row.
void run_claiming_dispatcher(const RoleSettings& s, const std::string& actor, RolePorts& p) {
    const DispatcherSpec& d = s.dispatcher;
    const ClaimScope scope = d.ordering == DispatchOrder::naive ? ClaimScope::row : ClaimScope::aggregate_head;
    const OutboxOrder order = d.ordering == DispatchOrder::naive ? OutboxOrder::by_id : OutboxOrder::by_aggregate_then_id;
    int round = 0;
    for (int counted = 0; counted < d.max_rounds;) {
        ++round;
        try {
            std::vector<int64_t> failed;  // per key: aggregates; naive: row ids
            for (;;) {
                p.outbox.begin_round();
                const std::optional<OutboxRow> row = p.outbox.claim_next(scope, failed);
                if (!row) {
                    p.outbox.commit_round();  // nothing claimed: an empty transaction ends
                    break;
                }
                const nlohmann::json data = {{"round", round},
                                             {"outbox_id", row->id},
                                             {"event", event_json(Event{row->aggregate_id, row->type, row->version})},
                                             {"attempt", row->attempts + 1}};
                const bool published = publish_row(d, s.stream.key, actor, p, *row, data);
                p.outbox.commit_round();  // the mark or the failed attempt, and the row's lock released
                if (!published) failed.push_back(scope == ClaimScope::row ? row->id : row->aggregate_id);
            }
            ++counted;
            // Done once nothing is left unpublished (rows another dispatcher holds are not).
            if (p.outbox.unpublished(order).empty()) return;
        } catch (const StoreUnavailable& e) {
            if (!s.postgres_faults_scheduled) throw;
            ride_out_store_error(actor, p, round, e);
            continue;
        }
        p.clock.sleep_for(Millis{d.poll_ms});
    }
}

}  // namespace

void run_dispatcher(const RoleSettings& s, const std::string& actor, RolePorts& p, Millis barrier_timeout) {
    const DispatcherSpec& d = s.dispatcher;
    const OutboxOrder order = d.ordering == DispatchOrder::naive ? OutboxOrder::by_id : OutboxOrder::by_aggregate_then_id;
    // Starts once the source app has committed its changes, like the article's dispatcher.
    // The source app records its events on their schedule (a load lab's takes seconds): wait that long too.
    int64_t last_at_ms = 0;
    for (const auto& e : s.events) last_at_ms = std::max(last_at_ms, e.at_ms);
    const Nanos give_up = p.clock.now() + barrier_timeout + Millis{last_at_ms};
    while (!p.kv.exists(kSourceDoneKey)) {
        if (p.clock.now() > give_up) throw std::runtime_error(actor + ": the source app never finished");
        p.clock.sleep_for(Millis{1});
    }
    if (d.claim == DispatchClaim::skip_locked) return run_claiming_dispatcher(s, actor, p);
    const bool in_transaction = d.mark == DispatchMark::round;
    int round = 0;
    for (int counted = 0; counted < d.max_rounds;) {
        ++round;
        bool held_back = false;
        try {
            if (in_transaction) p.outbox.begin_round();
            std::set<int64_t> blocked;  // aggregates with an earlier row not yet published (per key)
            for (const OutboxRow& row : p.outbox.unpublished(order)) {
                const Event ev{row.aggregate_id, row.type, row.version};
                nlohmann::json data = {{"round", round}, {"outbox_id", row.id}, {"event", event_json(ev)}};
                if (d.ordering == DispatchOrder::per_key && blocked.count(row.aggregate_id)) {
                    data["result"] = "wait";
                    p.history.record(HistoryRecord{0, p.clock.now().count(), actor, Op::publish, std::move(data)});
                    held_back = true;
                    continue;
                }
                data["attempt"] = row.attempts + 1;
                if (!publish_row(d, s.stream.key, actor, p, row, std::move(data))) {
                    blocked.insert(row.aggregate_id);
                    held_back = true;
                }
            }
            if (in_transaction) p.outbox.commit_round();
        } catch (const StoreUnavailable& e) {
            if (!s.postgres_faults_scheduled) throw;
            ride_out_store_error(actor, p, round, e);
            continue;  // not counted against max_rounds
        }
        ++counted;
        if (!held_back) return;
        p.clock.sleep_for(Millis{d.poll_ms});
    }
}

}  // namespace relab
