#include "roles/event.h"
#include "roles/roles.h"
#include "util/json_object.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace relab {

namespace {

bool publish_fails(const ProducerSpec& spec, const EventSpec& e, int attempt) {
    for (const auto& f : spec.failures)
        if (f.order == e.order && f.type == e.type)
            return std::find(f.attempts.begin(), f.attempts.end(), attempt) != f.attempts.end();
    return false;
}

bool reply_lost(const ProducerSpec& spec, const EventSpec& e, int attempt) {
    for (const auto& f : spec.failures)
        if (f.order == e.order && f.type == e.type)
            return std::find(f.reply_lost.begin(), f.reply_lost.end(), attempt) != f.reply_lost.end();
    return false;
}

// The idempotent ID of an event under XADD ... IDMP: the same for every resend of it.
std::string idmp_iid(const Event& ev) { return fmt::format("{}:{}:v{}", ev.order, ev.type, ev.v); }

// One publication waiting for its time: the first try at the event's at_ms, retries on backoff.
struct Pending {
    Nanos due;
    size_t seq;  // file order breaks ties, so same-time events go out in the order written
    const EventSpec* event;
    int attempt;
    Nanos first_try;
};

}  // namespace

void run_producer(const RoleSettings& s, RolePorts& p, Millis barrier_timeout) {
    p.stream.wait_readers_blocked(s.consumers, barrier_timeout);
    const Nanos origin = p.clock.now();
    p.history.record(HistoryRecord{0, origin.count(), "producer", Op::start, nlohmann::json::object()});

    // Events due at the same time go out back to back in file order, one XADD each, as the
    // article's producer did. (Pipelining them makes Redis answer both blocked readers in one
    // event-loop pass, newest reply first, which hands the paid holder a head start.)
    std::vector<Pending> queue;
    size_t seq = 0;
    for (const auto& e : s.events) queue.push_back({origin + Millis{e.at_ms}, seq++, &e, 1, Nanos{0}});
    auto later = [](const Pending& a, const Pending& b) { return a.due != b.due ? a.due > b.due : a.seq > b.seq; };
    std::make_heap(queue.begin(), queue.end(), later);

    // S2: the router's number of shards, and the events it has put in a stream so far.
    const ShardSpec& shard = s.shard;
    int shards = shard.streams;
    int64_t routed = 0;
    bool resharded = false;
    // "N goes to N+1": from the next event on, hash % to; with drain, only once every shard's group
    // has delivered and acknowledged everything it was given.
    auto reshard = [&] {
        const Nanos asked = p.clock.now();
        if (shard.drain) {
            for (;;) {
                bool all = true;
                for (int i = 0; i < shards && all; ++i)
                    all = p.stream.group_drained(shard_stream_key(shard, i), s.stream.group);
                if (all) break;
                p.clock.sleep_for(Millis{shard.drain_poll_ms});
            }
        }
        std::set<int64_t> orders, moved;
        for (const auto& e : s.events) orders.insert(e.order);
        for (int64_t o : orders)
            if (shard_of(shard, o, 0, shards) != shard_of(shard, o, 0, shard.reshard_to)) moved.insert(o);
        p.history.record(HistoryRecord{0, p.clock.now().count(), "producer", Op::reshard,
                                       {{"from", shards},
                                        {"to", shard.reshard_to},
                                        {"at_event", routed + 1},
                                        {"drain", shard.drain},
                                        {"waited_ms", (p.clock.now() - asked).count() / 1'000'000},
                                        {"moved_orders", moved.size()}}});
        shards = shard.reshard_to;
        resharded = true;
    };

    std::map<std::string, std::set<std::string>> entries_of;  // IDMP: iid -> entries the stream answered
    while (!queue.empty()) {
        std::pop_heap(queue.begin(), queue.end(), later);
        Pending next = queue.back();
        queue.pop_back();
        const Nanos wait = next.due - p.clock.now();
        if (wait.count() > 0) p.clock.sleep_for(wait);
        if (shard.enabled && shard.reshard_to > 0 && !resharded && routed >= shard.reshard_after_events) reshard();

        const EventSpec& spec = *next.event;
        const Event ev{spec.order, spec.type, spec.version};
        const Nanos sent_at = p.clock.now();
        if (next.attempt == 1) next.first_try = sent_at;
        nlohmann::json data = json_object("attempt", next.attempt);
        std::string entry;  // the record's entry (in HistoryRecord::names), once the XADD gave one
        auto publish_record = [&] {
            return HistoryRecord{0, sent_at.count(), "producer", Op::publish, std::move(data), std::move(entry), ev};
        };
        // A failed publish is recorded and, attempts left, tried again at `due`.
        auto fail = [&](const std::string& reason, Nanos due) {
            data["result"] = "fail";
            data["reason"] = reason;
            if (next.attempt < s.producer.max_attempts) {
                data["retry_in_ms"] = (due - sent_at + Micros{500}) / Millis{1};  // to the nearest ms
                queue.push_back({due, seq++, next.event, next.attempt + 1, next.first_try});
                std::push_heap(queue.begin(), queue.end(), later);
            }
            p.history.record(publish_record());
        };
        // Retry k is due backoff * multiplier^(k-1) after the first try: 500, 1000, 2000 ms.
        auto backoff_due = [&] {
            int64_t backoff = s.producer.backoff_ms;
            for (int k = 1; k < next.attempt; ++k) backoff *= s.producer.backoff_multiplier;
            return next.first_try + Millis{backoff};
        };
        if (publish_fails(s.producer, spec, next.attempt)) {
            // Injected in the publish path, before anything reaches Redis: a network blip.
            fail("simulated network blip", backoff_due());
            continue;
        }
        std::string key = s.stream.key;
        if (shard.enabled) {
            const int i = shard_of(shard, ev.order, routed, shards);
            key = shard_stream_key(shard, i);
            data["stream"] = key;
            data["shard"] = i;
        }
        std::vector<std::string> ids;
        try {
            if (s.producer.idmp) {
                data["idmp"] = idmp_iid(ev);
                ids = {p.stream.xadd_idmp(key, event_fields(ev), "producer", idmp_iid(ev))};
            } else {
                ids = p.stream.xadd(key, {event_fields(ev)});
            }
        } catch (const KvError& e) {
            // The lab's Redis fault: the publish failed for real; tried again shortly.
            if (e.kind() == KvError::Kind::unexpected || !s.redis_faults_scheduled) throw;
            fail(e.what(), p.clock.now() + kRetryAfterRedisError);
            continue;
        }
        if (reply_lost(s.producer, spec, next.attempt)) {
            // The XADD ran: the stream has the entry (recorded here, for the accounting), but the
            // producer never learns it and sends the event again.
            entry = ids.at(0);
            data["reply_lost"] = true;
            if (s.producer.idmp) entries_of[idmp_iid(ev)].insert(ids.at(0));
            fail("reply lost: the XADD ran on the server, its reply never reached the producer", backoff_due());
            continue;
        }
        data["result"] = "ok";
        entry = ids.at(0);
        if (s.producer.idmp) {
            // An entry this event already got: IDMP added nothing.
            auto& seen = entries_of[idmp_iid(ev)];
            data["idmp_known"] = seen.count(ids.at(0)) > 0;
            seen.insert(ids.at(0));
        }
        ++routed;
        p.history.record(publish_record());
    }
}

}  // namespace relab
