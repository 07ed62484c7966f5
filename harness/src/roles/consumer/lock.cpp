#include "roles/consumer/lock.h"

#include "util/json_object.h"

namespace relab {

std::string lock_key_for(const LockSpec& lock, int64_t order) {
    std::string key = lock.key;
    const std::string placeholder = "{order}";
    for (auto pos = key.find(placeholder); pos != std::string::npos; pos = key.find(placeholder))
        key.replace(pos, placeholder.size(), std::to_string(order));
    return key;
}

std::optional<ConsumerLock::Held> ConsumerLock::acquire(const StreamEntry& entry, const Event& ev) {
    const LockSpec& lock = m_c.settings().lock;
    if (!lock.enabled) return std::nullopt;
    RolePorts& p = m_c.ports();
    Held held{m_c.actor() + ":" + entry.id, lock_key_for(lock, ev.order), 0};
    if (lock.skew_ms.max > 0) p.clock.sleep_for(Millis{p.rng.uniform(lock.skew_ms.min, lock.skew_ms.max)});
    int attempts = 1;
    while (!p.kv.set_nx_px(held.key, held.token, Millis{lock.ttl_ms})) {
        p.clock.sleep_for(Millis{lock.retry_ms});
        ++attempts;
    }
    held.locked_ns = p.clock.now().count();
    m_c.record(Op::lock_acquire, json_object("key", held.key, "attempts", attempts, "ttl_ms", lock.ttl_ms),
               std::string(), &ev);
    return held;
}

void ConsumerLock::release(const std::optional<Held>& held, const Event& ev) {
    if (!held) return;
    RolePorts& p = m_c.ports();
    const int64_t released = p.kv.delete_if_equals(held->key, held->token);
    // held_ms against ttl_ms tells whether the lock had expired before this release.
    m_c.record(Op::lock_release,
               json_object("key", held->key, "result", released, "method", p.kv.delete_if_equals_method(), "held_ms",
                           (p.clock.now().count() - held->locked_ns) / 1'000'000, "ttl_ms", m_c.settings().lock.ttl_ms),
               std::string(), &ev);
}

void ConsumerLock::drop(const std::optional<Held>& held) {
    if (held) m_c.ports().kv.delete_if_equals(held->key, held->token);
}

}  // namespace relab
