// The per-order lock around a job (S4, RoleSettings::lock): after its random skew, SET NX PX
// every retry_ms until the key is free; released by a delete that only the token's holder can do.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "roles/consumer/context.h"

namespace relab {

// The lock's key for an order: LockSpec::key with each "{order}" replaced by the order's id.
std::string lock_key_for(const LockSpec& lock, int64_t order);

class ConsumerLock {
public:
    struct Held {
        std::string token;  // unique to this holder
        std::string key;
        int64_t locked_ns = 0;
    };

    explicit ConsumerLock(const ConsumerContext& c) : m_c(c) {}

    // nullopt when the lab has no lock; otherwise once it is this job's, recorded (lock_acquire,
    // with the attempts it took).
    std::optional<Held> acquire(const StreamEntry& entry, const Event& ev);
    // After the job's write: deleted if still ours, recorded with how long it was held.
    void release(const std::optional<Held>& held, const Event& ev);
    // After a failed job: deleted if still ours, not recorded.
    void drop(const std::optional<Held>& held);

private:
    const ConsumerContext& m_c;
};

}  // namespace relab
