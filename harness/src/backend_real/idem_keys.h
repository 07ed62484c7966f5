// An idempotency lab's keys as its supervisor reads and writes them on the lab's Redis (the
// trial's prefix added): the clients' ready keys and go signal, the keys a check looks at, and the
// flags that say a named fault is done.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend_real/lab_connections.h"
#include "backend_real/real_control.h"

namespace relab {

class IdemKeys {
public:
    IdemKeys(const RealControl::Env& env, LabConnections& connections)
        : m_env(env), m_ns{env.prefix}, m_connections(connections) {}

    // Control's, for the clients `actors`.
    bool clients_ready(const std::vector<std::string>& actors);
    void go(Nanos origin);
    std::vector<std::string> present(const std::vector<std::string>& keys);
    int64_t pttl_ms(const std::string& key);

    // Writes each named fault's flag ahead, so it can be raised by RENAME under noeviction's OOM.
    void prepare_flags();
    // Control::raise_flag; the flag is then kept written while the trial runs (refresh_flags).
    void raise_flag(const std::string& fault_name);
    // Under maxmemory with allkeys-lru the flags are keys like any other: the clients' writes can
    // evict one (the LRU clock ticks once a second, so a fresh flag ties with a flood's keys).
    // Written again every 20 ms; a failed write (the server restarting, OOM) means "next time".
    void refresh_flags();

private:
    const RealControl::Env& m_env;
    RedisNamespace m_ns;
    LabConnections& m_connections;
    std::vector<std::string> m_raised_flags;  // kept written while the trial runs
    int64_t m_flags_written_ns = 0;
};

}  // namespace relab
