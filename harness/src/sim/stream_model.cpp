#include "sim/stream_model.h"

#include <charconv>
#include <iterator>

#include <fmt/format.h>

#include "util/check.h"

namespace relab::sim {

namespace {

constexpr int kAutoclaimAttemptsFactor = 10;  // Redis's attempts_factor: scan at most COUNT*10 PEL entries

StreamEntry make_entry(const EntryId& id, const Fields& fields) { return StreamEntry{id.to_string(), fields}; }

}  // namespace

StreamError::StreamError(std::string command, std::string key, std::string message)
    : std::runtime_error(fmt::format("redis {} (key {}): {}", command, key, message)),
      m_command(std::move(command)),
      m_key(std::move(key)) {}

std::string EntryId::to_string() const {
    // "<ms>-<seq>"; to_chars rather than fmt: every delivered entry's ID is written here.
    char text[2 * 20 + 1];
    char* end = std::to_chars(text, text + 20, ms).ptr;
    *end++ = '-';
    end = std::to_chars(end, text + sizeof text, seq).ptr;
    return std::string(text, end);
}

EntryId EntryId::parse(const std::string& text) {
    EntryId id;
    const char* begin = text.data();
    const char* end = begin + text.size();
    auto [p, ec] = std::from_chars(begin, end, id.ms);
    if (ec != std::errc() || id.ms < 0) throw StreamError("ID", text, "ERR Invalid stream ID specified as stream command argument");
    if (p == end) return id;
    if (*p != '-') throw StreamError("ID", text, "ERR Invalid stream ID specified as stream command argument");
    auto [q, ec2] = std::from_chars(p + 1, end, id.seq);
    if (ec2 != std::errc() || q != end || id.seq < 0)
        throw StreamError("ID", text, "ERR Invalid stream ID specified as stream command argument");
    return id;
}

void StreamModel::clear() {
    m_streams.clear();
    m_waiters.clear();
    m_next_ticket = 1;
}

StreamModel::Stream* StreamModel::find(const std::string& key) {
    auto it = m_streams.find(key);
    return it == m_streams.end() ? nullptr : &it->second;
}

const StreamModel::Stream* StreamModel::find(const std::string& key) const {
    auto it = m_streams.find(key);
    return it == m_streams.end() ? nullptr : &it->second;
}

StreamModel::Group& StreamModel::group_or_throw(const std::string& command, const std::string& key,
                                                const std::string& group) {
    Stream* s = find(key);
    if (s) {
        auto it = s->groups.find(group);
        if (it != s->groups.end()) return it->second;
    }
    const std::string suffix = command == "XREADGROUP" ? " in XREADGROUP with GROUP option" : "";
    throw StreamError(command, key, fmt::format("NOGROUP No such key '{}' or consumer group '{}'{}", key, group, suffix));
}

void StreamModel::create_group(const std::string& key, const std::string& group, const std::string& start,
                               bool mkstream) {
    Stream* s = find(key);
    if (!s) {
        if (!mkstream)
            throw StreamError("XGROUP", key,
                              "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want "
                              "to use the MKSTREAM option to create an empty stream automatically.");
        s = &m_streams[key];
    }
    if (s->groups.count(group)) throw StreamError("XGROUP", key, "BUSYGROUP Consumer Group name already exists");
    Group g;
    g.last_delivered = start == "$" ? s->last_id : EntryId::parse(start);
    s->groups.emplace(group, std::move(g));
}

std::string StreamModel::xadd(const std::string& key, const Fields& fields, Nanos now) {
    Stream& s = m_streams[key];
    const int64_t ms = now.count() / 1'000'000;
    EntryId id{ms, 0};
    if (id <= s.last_id) id = EntryId{s.last_id.ms, s.last_id.seq + 1};
    s.last_id = id;
    s.entries.emplace(id, fields);
    return id.to_string();
}

std::pair<std::string, bool> StreamModel::xadd_idmp(const std::string& key, const Fields& fields,
                                                    const std::string& producer_id, const std::string& iid, Nanos now) {
    const auto pair = std::make_pair(producer_id, iid);
    if (const Stream* s = find(key))
        if (const auto it = s->idmp.find(pair); it != s->idmp.end()) return {it->second, false};
    std::string id = xadd(key, fields, now);
    m_streams[key].idmp[pair] = id;
    return {id, true};
}

std::vector<StreamEntry> StreamModel::xreadgroup(const std::string& key, const std::string& group,
                                                 const std::string& consumer, int count, Nanos now) {
    Group& g = group_or_throw("XREADGROUP", key, group);
    Stream& s = *find(key);
    std::vector<StreamEntry> out;
    for (auto it = s.entries.upper_bound(g.last_delivered); it != s.entries.end(); ++it) {
        if (count > 0 && static_cast<int>(out.size()) >= count) break;
        out.push_back(make_entry(it->first, it->second));
        out.back().deliveries = 1;
        g.deliver(it->first, consumer, now);
    }
    return out;
}

StreamModel::Pending& StreamModel::Group::deliver(const EntryId& id, const std::string& consumer, Nanos now) {
    RELAB_CHECK(id > last_delivered, "a group's last-delivered ID never moves back");
    last_delivered = id;
    Pending& p = pel[id];
    p = Pending{consumer, now, 1};
    RELAB_CHECK(pel.rbegin()->first <= last_delivered, "the PEL holds only IDs its group delivered");
    return p;
}

std::vector<StreamEntry> StreamModel::xreadgroup_pending(const std::string& key, const std::string& group,
                                                         const std::string& consumer, int count, Nanos now,
                                                         const std::string& after) {
    Group& g = group_or_throw("XREADGROUP", key, group);
    Stream& s = *find(key);
    std::vector<StreamEntry> out;
    const EntryId from = EntryId::parse(after);
    for (auto it = g.pel.upper_bound(from); it != g.pel.end(); ++it) {
        const EntryId& id = it->first;
        Pending& p = it->second;
        if (count > 0 && static_cast<int>(out.size()) >= count) break;
        if (p.consumer != consumer) continue;
        p.delivered_at = now;
        ++p.deliveries;
        auto entry = s.entries.find(id);
        // An entry deleted from the stream comes back as its ID with no fields, as in Redis.
        out.push_back(entry == s.entries.end() ? StreamEntry{id.to_string(), {}} : make_entry(id, entry->second));
        out.back().deliveries = p.deliveries;
    }
    return out;
}

int64_t StreamModel::xack(const std::string& key, const std::string& group, const std::string& id) {
    Stream* s = find(key);
    if (!s) return 0;
    auto g = s->groups.find(group);
    if (g == s->groups.end()) return 0;
    return static_cast<int64_t>(g->second.pel.erase(EntryId::parse(id)));
}

StreamModel::AutoClaim StreamModel::xautoclaim(const std::string& key, const std::string& group,
                                               const std::string& consumer, Nanos min_idle, const std::string& start,
                                               int count, Nanos now) {
    if (count < 1) throw StreamError("XAUTOCLAIM", key, "ERR COUNT must be > 0");
    Group& g = group_or_throw("XAUTOCLAIM", key, group);
    Stream& s = *find(key);
    AutoClaim out;
    int64_t attempts = static_cast<int64_t>(count) * kAutoclaimAttemptsFactor;
    auto it = g.pel.lower_bound(EntryId::parse(start));
    while (attempts-- > 0 && count > 0 && it != g.pel.end()) {
        Pending& p = it->second;
        if (now - p.delivered_at < min_idle) {
            ++it;
            continue;
        }
        auto entry = s.entries.find(it->first);
        if (entry == s.entries.end()) {
            out.deleted.push_back(it->first.to_string());
            it = g.pel.erase(it);
            continue;
        }
        p.consumer = consumer;
        p.delivered_at = now;
        ++p.deliveries;
        out.claimed.push_back(make_entry(entry->first, entry->second));
        out.claimed.back().deliveries = p.deliveries;
        --count;
        ++it;
    }
    out.next = it == g.pel.end() ? "0-0" : it->first.to_string();
    return out;
}

std::vector<StreamModel::PendingEntry> StreamModel::pending(const std::string& key, const std::string& group) const {
    std::vector<PendingEntry> out;
    const Stream* s = find(key);
    if (!s) return out;
    auto g = s->groups.find(group);
    if (g == s->groups.end()) return out;
    for (const auto& [id, p] : g->second.pel) out.push_back(PendingEntry{id.to_string(), p.consumer, p.delivered_at, p.deliveries});
    return out;
}

std::vector<StreamEntry> StreamModel::xrange(const std::string& key) const {
    std::vector<StreamEntry> out;
    const Stream* s = find(key);
    if (!s) return out;
    out.reserve(s->entries.size());
    for (const auto& [id, fields] : s->entries) out.push_back(make_entry(id, fields));
    return out;
}

std::optional<std::string> StreamModel::last_delivered(const std::string& key, const std::string& group) const {
    const Stream* s = find(key);
    if (!s) return std::nullopt;
    auto g = s->groups.find(group);
    if (g == s->groups.end()) return std::nullopt;
    return g->second.last_delivered.to_string();
}

std::optional<std::string> StreamModel::last_id(const std::string& key) const {
    const Stream* s = find(key);
    if (!s || s->entries.empty()) return std::nullopt;
    return s->last_id.to_string();
}

size_t StreamModel::length(const std::string& key) const {
    const Stream* s = find(key);
    return s ? s->entries.size() : 0;
}

size_t StreamModel::undelivered(const std::string& key, const std::string& group) const {
    const Stream* s = find(key);
    if (!s) return 0;
    auto g = s->groups.find(group);
    if (g == s->groups.end()) return s->entries.size();
    return static_cast<size_t>(std::distance(s->entries.upper_bound(g->second.last_delivered), s->entries.end()));
}

bool StreamModel::drained(const std::string& key, const std::string& group) const {
    const Stream* s = find(key);
    if (!s || s->entries.empty()) return true;
    auto g = s->groups.find(group);
    if (g == s->groups.end()) return false;
    return g->second.pel.empty() && g->second.last_delivered == s->last_id;
}

uint64_t StreamModel::block(const std::string& key, const std::string& group, const std::string& consumer, int count) {
    group_or_throw("XREADGROUP", key, group);
    const uint64_t ticket = m_next_ticket++;
    m_waiters.push_back(Waiter{ticket, key, group, consumer, count});
    return ticket;
}

std::vector<StreamModel::Served> StreamModel::serve_blocked(const std::string& key, Nanos now) {
    std::vector<Served> out;
    const Stream* s = find(key);
    if (!s) return out;
    for (auto it = m_waiters.begin(); it != m_waiters.end();) {
        if (it->key != key) {
            ++it;
            continue;
        }
        // The group may have been destroyed meanwhile; Redis then fails the read. The labs never
        // do that, so the reader simply stays blocked until its timeout.
        auto g = s->groups.find(it->group);
        if (g == s->groups.end() || g->second.last_delivered >= s->last_id) {
            ++it;
            continue;
        }
        auto entries = xreadgroup(it->key, it->group, it->consumer, it->count, now);
        out.push_back(Served{it->ticket, std::move(entries)});
        it = m_waiters.erase(it);
    }
    return out;
}

bool StreamModel::unblock(uint64_t ticket) {
    for (auto it = m_waiters.begin(); it != m_waiters.end(); ++it)
        if (it->ticket == ticket) {
            m_waiters.erase(it);
            return true;
        }
    return false;
}

int StreamModel::blocked_readers() const { return static_cast<int>(m_waiters.size()); }

std::vector<uint64_t> StreamModel::blocked_tickets() const {
    std::vector<uint64_t> out;
    out.reserve(m_waiters.size());
    for (const auto& w : m_waiters) out.push_back(w.ticket);
    return out;
}

}  // namespace relab::sim
