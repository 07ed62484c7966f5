#include "sim/kv_model.h"

#include <fmt/format.h>

namespace relab::sim {

KvError::KvError(std::string command, std::string key, std::string message)
    : std::runtime_error(fmt::format("redis {} (key {}): {}", command, key, message)) {}

SetOptions SetOptions::nx_px(Millis ttl) {
    SetOptions o;
    o.condition = Condition::nx;
    o.px = ttl;
    return o;
}

void KvModel::clear() { m_keys.clear(); }

KvModel::Value* KvModel::live(const std::string& key, Nanos now) {
    auto it = m_keys.find(key);
    if (it == m_keys.end()) return nullptr;
    // Redis: expired when now > deadline.
    if (it->second.expires_at && now > *it->second.expires_at) {
        m_keys.erase(it);
        return nullptr;
    }
    return &it->second;
}

SetResult KvModel::set(const std::string& key, const std::string& value, const SetOptions& o, Nanos now) {
    if (o.keepttl && o.px) throw KvError("SET", key, "ERR syntax error");
    if (o.px && o.px->count() <= 0) throw KvError("SET", key, "ERR invalid expire time in 'set' command");
    Value* current = live(key, now);
    SetResult r;
    if (o.get && current) r.previous = current->data;
    if ((o.condition == SetOptions::Condition::nx && current) || (o.condition == SetOptions::Condition::xx && !current))
        return r;
    std::optional<Nanos> deadline;
    if (o.px)
        deadline = now + *o.px;
    else if (o.keepttl && current)
        deadline = current->expires_at;
    Value& v = current ? *current : m_keys[key];
    v.data = value;
    v.expires_at = deadline;
    r.written = true;
    return r;
}

std::optional<std::string> KvModel::get(const std::string& key, Nanos now) {
    const Value* v = live(key, now);
    if (!v) return std::nullopt;
    return v->data;
}

bool KvModel::exists(const std::string& key, Nanos now) { return live(key, now) != nullptr; }

int64_t KvModel::del(const std::string& key, Nanos now) {
    if (!live(key, now)) return 0;
    m_keys.erase(key);
    return 1;
}

int64_t KvModel::delete_if_equals(const std::string& key, const std::string& expected, Nanos now) {
    const Value* v = live(key, now);
    if (!v || v->data != expected) return 0;
    m_keys.erase(key);
    return 1;
}

int64_t KvModel::pttl(const std::string& key, Nanos now) {
    const Value* v = live(key, now);
    if (!v) return -2;
    if (!v->expires_at) return -1;
    const int64_t left_ns = (*v->expires_at - now).count();
    return (left_ns + 999'999) / 1'000'000;
}

int64_t KvModel::size(Nanos now) {
    int64_t n = 0;
    for (const auto& [key, v] : m_keys)
        if (!v.expires_at || now <= *v.expires_at) ++n;
    return n;
}

int64_t KvModel::ttl(const std::string& key, Nanos now) {
    const int64_t ms = pttl(key, now);
    if (ms < 0) return ms;
    return (ms + 500) / 1000;
}

}  // namespace relab::sim
