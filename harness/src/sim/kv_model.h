// Redis string keys with expiry, in memory: SET with NX/XX/PX/EX/KEEPTTL/GET, GET, EXISTS, DEL,
// PTTL, TTL and compare-and-delete (DELEX IFEQ, or the Lua script before 8.4). A key expires when
// the time given to a call is past its deadline, checked on access as Redis does lazily. Pure:
// every call is given the time.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "ports/ports.h"

namespace relab::sim {

// An error reply as Redis would send it ("ERR syntax error", ...).
class KvError : public std::runtime_error {
public:
    KvError(std::string command, std::string key, std::string message);
};

// KvSetOptions with the expiry as Redis's PX argument (nullopt: none; PX 0 is an error reply).
struct SetOptions {
    using Condition = KvSetOptions::Condition;
    Condition condition = Condition::always;
    std::optional<Millis> px;  // PX ms (EX s is given as its milliseconds); must be > 0
    bool keepttl = false;      // keep the key's current deadline (otherwise SET clears it)
    bool get = false;          // reply with the old value

    static SetOptions nx_px(Millis ttl);
};

using SetResult = KvSetResult;

class KvModel {
public:
    void clear();  // every key; not the server's version
    // The modelled server has DELEX (Redis 8.4): compare-and-delete is DELEX IFEQ, not the Lua
    // script. The same atomic check either way; what changes is what the lab reports it used.
    bool delex = false;

    SetResult set(const std::string& key, const std::string& value, const SetOptions& o, Nanos now);
    std::optional<std::string> get(const std::string& key, Nanos now);
    bool exists(const std::string& key, Nanos now);
    int64_t del(const std::string& key, Nanos now);
    // Deletes key only while it holds `expected`: 1 deleted, 0 missing/expired/someone else's.
    int64_t delete_if_equals(const std::string& key, const std::string& expected, Nanos now);
    // PTTL: milliseconds left (rounded as Redis does, up to the next ms), -1 without a deadline,
    // -2 for a missing key.
    int64_t pttl(const std::string& key, Nanos now);
    // TTL: seconds left, rounded to the nearest second as Redis does ((ms + 500) / 1000); -1
    // without a deadline, -2 for a missing key.
    int64_t ttl(const std::string& key, Nanos now);
    // DBSIZE: the keys not expired by now.
    int64_t size(Nanos now);

private:
    struct Value {
        std::string data;
        std::optional<Nanos> expires_at;
    };
    // The live value, after dropping it if it has expired.
    Value* live(const std::string& key, Nanos now);

    std::unordered_map<std::string, Value> m_keys;
};

}  // namespace relab::sim
