// Redis Streams with consumer groups, in memory, as the labs use them (Redis 7 semantics): XADD
// with '*' IDs from the caller's clock, XGROUP CREATE, XREADGROUP '>' with COUNT, the pending
// entries list (PEL), XACK, XAUTOCLAIM, XPENDING's summary, XRANGE. Blocking is modelled as a
// FIFO of waiting readers per stream, served after each XADD as Redis does; timing the replies is
// the caller's business. Pure: no clock, no scheduler; every call that needs the time is given it.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ports/ports.h"

namespace relab::sim {

// An error reply as Redis would send it ("NOGROUP ...", "ERR ...").
class StreamError : public std::runtime_error {
public:
    StreamError(std::string command, std::string key, std::string message);
    const std::string& command() const { return m_command; }
    const std::string& key() const { return m_key; }

private:
    std::string m_command, m_key;
};

struct EntryId {
    int64_t ms = 0;
    int64_t seq = 0;
    auto operator<=>(const EntryId&) const = default;
    std::string to_string() const;
    // "1792591449272-0", "1792591449272" (seq 0), "0". Throws StreamError otherwise.
    static EntryId parse(const std::string& text);
};

class StreamModel {
public:
    void clear();

    // XGROUP CREATE key group start [MKSTREAM]; start is "$" (the stream's last ID) or an ID.
    void create_group(const std::string& key, const std::string& group, const std::string& start, bool mkstream);
    // XADD key * fields...: the ID is <now in ms>-<seq>, kept strictly increasing when the clock
    // stands still or goes back.
    std::string xadd(const std::string& key, const Fields& fields, Nanos now);
    // XADD key IDMP producer_id iid * fields (Redis 8.6): the pair's first XADD adds the entry;
    // a later one adds nothing and answers that entry's ID (added false). The model keeps every
    // pair for the trial (Redis keeps IDMP-MAXSIZE per producer for IDMP-DURATION, 100 s by
    // default: longer than any trial).
    std::pair<std::string, bool> xadd_idmp(const std::string& key, const Fields& fields, const std::string& producer_id,
                                           const std::string& iid, Nanos now);
    // XREADGROUP GROUP group consumer COUNT count STREAMS key >, without blocking: up to `count`
    // entries never delivered to the group, now in the PEL of `consumer`.
    std::vector<StreamEntry> xreadgroup(const std::string& key, const std::string& group,
                                        const std::string& consumer, int count, Nanos now);
    // XREADGROUP GROUP group consumer COUNT count STREAMS key 0: the consumer's own pending
    // entries from the start, each counted as delivered again (Redis 7: delivery count + 1).
    std::vector<StreamEntry> xreadgroup_pending(const std::string& key, const std::string& group,
                                                const std::string& consumer, int count, Nanos now,
                                                const std::string& after = "0");
    // XACK: 1 when id was pending in the group, else 0.
    int64_t xack(const std::string& key, const std::string& group, const std::string& id);

    struct AutoClaim {
        std::string next;                  // cursor for the next call; "0-0" when the scan ended
        std::vector<StreamEntry> claimed;  // now owned by the claimer, delivery count + 1
        std::vector<std::string> deleted;  // pending IDs no longer in the stream (removed from the PEL)
    };
    // XAUTOCLAIM key group consumer min-idle start COUNT count.
    AutoClaim xautoclaim(const std::string& key, const std::string& group, const std::string& consumer,
                         Nanos min_idle, const std::string& start, int count, Nanos now);

    struct PendingEntry {
        std::string id;
        std::string consumer;
        Nanos delivered_at{0};
        int64_t deliveries = 0;
    };
    // The group's PEL in ID order (XPENDING key group - + N).
    std::vector<PendingEntry> pending(const std::string& key, const std::string& group) const;
    std::vector<StreamEntry> xrange(const std::string& key) const;
    // The group's last-delivered-id, or nullopt when there is no such group.
    std::optional<std::string> last_delivered(const std::string& key, const std::string& group) const;
    // The stream's last ID, or nullopt for a missing or empty stream.
    std::optional<std::string> last_id(const std::string& key) const;
    // EXISTS: the stream key is there (created by XADD or XGROUP CREATE ... MKSTREAM).
    bool exists(const std::string& key) const { return find(key) != nullptr; }
    // Forgets every blocked reader (a copy of the model that becomes the server after a failover
    // must not serve readers of the old one's connections).
    void drop_waiters() { m_waiters.clear(); }
    // XLEN: the stream's entries (0 for a missing stream).
    size_t length(const std::string& key) const;
    // The entries after the group's last-delivered-id: never given to any of its consumers (every
    // entry when there is no such group).
    size_t undelivered(const std::string& key, const std::string& group) const;
    // Every entry delivered to the group and acknowledged (XINFO GROUPS: pending 0 and
    // last-delivered-id equal to the stream's last ID). A stream without entries is drained.
    bool drained(const std::string& key, const std::string& group) const;

    // --- blocked XREADGROUP ---
    // Queues a reader that found nothing; returns its ticket.
    uint64_t block(const std::string& key, const std::string& group, const std::string& consumer, int count);
    struct Served {
        uint64_t ticket;
        std::vector<StreamEntry> entries;
    };
    // After an XADD to key: serves waiting readers first come, first served; a reader whose group
    // has nothing new stays queued.
    std::vector<Served> serve_blocked(const std::string& key, Nanos now);
    // Timeout or CLIENT UNBLOCK: false when the ticket was already served or removed.
    bool unblock(uint64_t ticket);
    int blocked_readers() const;
    std::vector<uint64_t> blocked_tickets() const;  // oldest first, across streams

    struct Pending {
        std::string consumer;
        Nanos delivered_at{0};
        int64_t deliveries = 0;
    };
    // A consumer group. Public so a test can hand-make a broken one: its invariants are checked in
    // deliver(), the only place an ID enters the PEL or last-delivered moves.
    struct Group {
        EntryId last_delivered;
        std::map<EntryId, Pending> pel;
        // XREADGROUP's delivery of `id` to `consumer`: the group's last-delivered ID, and pending.
        // Throws std::logic_error when last-delivered would move back or the PEL would hold an ID
        // the group never delivered (one after last-delivered).
        Pending& deliver(const EntryId& id, const std::string& consumer, Nanos now);
    };

private:
    struct Stream {
        std::map<EntryId, Fields> entries;
        EntryId last_id;
        std::map<std::string, Group> groups;
        std::map<std::pair<std::string, std::string>, std::string> idmp;  // (producer, iid) -> entry ID
    };
    struct Waiter {
        uint64_t ticket;
        std::string key, group, consumer;
        int count;
    };

    Stream* find(const std::string& key);
    const Stream* find(const std::string& key) const;
    Group& group_or_throw(const std::string& command, const std::string& key, const std::string& group);

    std::map<std::string, Stream> m_streams;
    std::deque<Waiter> m_waiters;
    uint64_t m_next_ticket = 1;
};

}  // namespace relab::sim
