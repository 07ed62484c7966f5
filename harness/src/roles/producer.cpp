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

// One try at publishing an event: what its publish record will say.
struct Attempt {
    Pending& next;
    const Event ev;
    const Nanos sent_at;
    nlohmann::json data;
    std::string entry;  // the record's entry (in HistoryRecord::names), once the XADD gave one
};

// The producer of a stream lab: publishes the scenario's events at their times, retries failed
// publishes on backoff, and (S2) routes each event to a shard, resharding once when asked.
class Producer {
public:
    Producer(const RoleSettings& s, RolePorts& p, Nanos origin) : s_(s), p_(p), shards_(s.shard.streams) {
        // Events due at the same time go out back to back in file order, one XADD each, as the
        // article's producer did. (Pipelining them makes Redis answer both blocked readers in one
        // event-loop pass, newest reply first, which hands the paid holder a head start.)
        for (const auto& e : s.events) queue_.push_back({origin + Millis{e.at_ms}, seq_++, &e, 1, Nanos{0}});
        std::make_heap(queue_.begin(), queue_.end(), later);
    }

    void run() {
        const ShardSpec& shard = s_.shard;
        while (!queue_.empty()) {
            std::pop_heap(queue_.begin(), queue_.end(), later);
            Pending next = queue_.back();
            queue_.pop_back();
            const Nanos wait = next.due - p_.clock.now();
            if (wait.count() > 0) p_.clock.sleep_for(wait);
            if (shard.enabled && shard.reshard && !resharded_ && routed_ >= shard.reshard->after_events)
                reshard();
            publish(next);
        }
    }

private:
    static bool later(const Pending& a, const Pending& b) { return a.due != b.due ? a.due > b.due : a.seq > b.seq; }

    // One try: an injected blip, a Redis fault or a lost reply fails it (see fail); else recorded ok.
    void publish(Pending& next) {
        const EventSpec& spec = *next.event;
        Attempt a{next, Event{spec.order, spec.type, spec.version, spec.delta, spec.amount}, p_.clock.now(),
                  json_object("attempt", next.attempt), {}};
        if (next.attempt == 1) next.first_try = a.sent_at;
        if (publish_fails(s_.producer, spec, next.attempt)) {
            // Injected in the publish path, before anything reaches Redis: a network blip.
            return fail(a, "simulated network blip", backoff_due(next));
        }
        const std::string key = stream_for(a);
        const std::optional<std::vector<std::string>> ids = xadd(a, key);
        if (!ids) return;
        if (reply_lost(s_.producer, spec, next.attempt)) {
            // The XADD ran: the stream has the entry (recorded here, for the accounting), but the
            // producer never learns it and sends the event again.
            a.entry = ids->at(0);
            a.data["reply_lost"] = true;
            if (s_.producer.idmp) entries_of_[idmp_iid(a.ev)].insert(ids->at(0));
            return fail(a, "reply lost: the XADD ran on the server, its reply never reached the producer",
                        backoff_due(next));
        }
        if (s_.producer.wait && !replicated(a, ids->at(0)))
            return fail(a, a.data.value("reason", std::string()), p_.clock.now() + kRetryAfterRedisError);
        a.data["result"] = "ok";
        a.entry = ids->at(0);
        if (s_.producer.idmp) {
            // An entry this event already got: IDMP added nothing.
            auto& seen = entries_of_[idmp_iid(a.ev)];
            a.data["idmp_known"] = seen.count(ids->at(0)) > 0;
            seen.insert(ids->at(0));
        }
        ++routed_;
        record(a);
    }

    // The stream the event goes to: the lab's, or (S2) the shard the router picks for its order.
    std::string stream_for(Attempt& a) {
        std::string key = s_.stream.key;
        if (s_.shard.enabled) {
            const int i = shard_of(s_.shard, a.ev.order, routed_, shards_);
            key = shard_stream_key(s_.shard, i);
            a.data["stream"] = key;
            a.data["shard"] = i;
        }
        return key;
    }

    // The entry IDs the XADD answered; nullopt when the lab's Redis fault failed it (recorded).
    std::optional<std::vector<std::string>> xadd(Attempt& a, const std::string& key) {
        try {
            if (!s_.producer.idmp) return p_.stream.xadd(key, {event_fields(a.ev)});
            a.data["idmp"] = idmp_iid(a.ev);
            return std::vector<std::string>{p_.stream.xadd_idmp(key, event_fields(a.ev), "producer", idmp_iid(a.ev))};
        } catch (const KvError& e) {
            // The lab's Redis fault: the publish failed for real; tried again shortly.
            if (e.kind() == KvError::Kind::unexpected || !s_.redis_faults_scheduled) throw;
            fail(a, e.what(), p_.clock.now() + kRetryAfterRedisError);
            return std::nullopt;
        }
    }

    // WAIT after the XADD: whether enough replicas acknowledged the entry (the record gets the count
    // and the time). An entry only the primary has is recorded not_replicated, with its ID, since it
    // may still be read from the primary; the event is sent again.
    bool replicated(Attempt& a, const std::string& entry) {
        const WaitSpec& ps = *s_.producer.wait;
        const Nanos asked = p_.clock.now();
        int64_t acked = 0;
        std::string error;
        try {
            acked = p_.kv.wait_replicas(ps.replicas, Millis{ps.timeout_ms});
        } catch (const KvError& e) {
            // The lab's Redis fault took the primary while WAIT waited: nothing says a replica has it.
            if (e.kind() == KvError::Kind::unexpected || !s_.redis_faults_scheduled) throw;
            error = e.what();
        }
        a.data["wait_acked"] = acked;
        a.data["wait_us"] = (p_.clock.now() - asked) / Micros{1};
        if (acked >= ps.replicas) return true;
        a.entry = entry;
        a.data["not_replicated"] = true;
        a.data["reason"] = error.empty() ? fmt::format("not replicated: WAIT {} {} answered {}", ps.replicas,
                                                       ps.timeout_ms, acked)
                                         : "not replicated: WAIT failed: " + error;
        return false;
    }

    // A failed publish is recorded and, attempts left, tried again at `due`.
    void fail(Attempt& a, const std::string& reason, Nanos due) {
        a.data["result"] = "fail";
        a.data["reason"] = reason;
        if (a.next.attempt < s_.producer.max_attempts) {
            a.data["retry_in_ms"] = (due - a.sent_at + Micros{500}) / Millis{1};  // to the nearest ms
            queue_.push_back({due, seq_++, a.next.event, a.next.attempt + 1, a.next.first_try});
            std::push_heap(queue_.begin(), queue_.end(), later);
        }
        record(a);
    }

    // Retry k is due backoff * multiplier^(k-1) after the first try: 500, 1000, 2000 ms.
    Nanos backoff_due(const Pending& next) const {
        int64_t backoff = s_.producer.backoff_ms;
        for (int k = 1; k < next.attempt; ++k) backoff *= s_.producer.backoff_multiplier;
        return next.first_try + Millis{backoff};
    }

    void record(Attempt& a) {
        p_.history.record(
            HistoryRecord{0, a.sent_at.count(), "producer", Op::publish, std::move(a.data), std::move(a.entry), a.ev});
    }

    // "N goes to N+1": from the next event on, hash % to; with drain, only once every shard's group
    // has delivered and acknowledged everything it was given.
    void reshard() {
        const ShardSpec& shard = s_.shard;
        const ShardReshard& to = *shard.reshard;
        const Nanos asked = p_.clock.now();
        if (to.drain) wait_until_drained();
        std::set<int64_t> orders, moved;
        for (const auto& e : s_.events) orders.insert(e.order);
        for (int64_t o : orders)
            if (shard_of(shard, o, 0, shards_) != shard_of(shard, o, 0, to.to)) moved.insert(o);
        p_.history.record(HistoryRecord{0, p_.clock.now().count(), "producer", Op::reshard,
                                        {{"from", shards_},
                                         {"to", to.to},
                                         {"at_event", routed_ + 1},
                                         {"drain", to.drain},
                                         {"waited_ms", (p_.clock.now() - asked).count() / 1'000'000},
                                         {"moved_orders", moved.size()}}});
        shards_ = to.to;
        resharded_ = true;
    }

    void wait_until_drained() {
        for (;;) {
            bool all = true;
            for (int i = 0; i < shards_ && all; ++i)
                all = p_.stream.group_drained(shard_stream_key(s_.shard, i), s_.stream.group);
            if (all) return;
            p_.clock.sleep_for(Millis{s_.shard.reshard->drain_poll_ms});
        }
    }

    const RoleSettings& s_;
    RolePorts& p_;
    std::vector<Pending> queue_;  // a heap by `later`: the next publication due on top
    size_t seq_ = 0;
    // S2: the router's number of shards, and the events it has put in a stream so far.
    int shards_;
    int64_t routed_ = 0;
    bool resharded_ = false;
    std::map<std::string, std::set<std::string>> entries_of_;  // IDMP: iid -> entries the stream answered
};

}  // namespace

void run_producer(const RoleSettings& s, RolePorts& p, Millis barrier_timeout) {
    p.stream.wait_readers_blocked(s.consumers, barrier_timeout);
    const Nanos origin = p.clock.now();
    p.history.record(HistoryRecord{0, origin.count(), "producer", Op::start, nlohmann::json::object()});
    Producer(s, p, origin).run();
}

}  // namespace relab
