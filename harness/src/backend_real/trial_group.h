// A stream lab's stream and consumer group as the lab's Redis has them (or its Redis Cluster, one
// stream per shard), read by the supervisor through the harness's own connections: whether the
// group drained, what it holds at the end, and the stop that ends the trial.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend_real/lab_connections.h"
#include "backend_real/real_control.h"

namespace relab {

class TrialGroup {
public:
    TrialGroup(const RealControl::Env& env, LabConnections& connections)
        : m_env(env), m_ns{env.prefix}, m_connections(connections) {}

    // Control::drained; false while the primary is out (`primary_out`: down or stopped).
    bool drained(bool primary_out);
    // XINFO GROUPS' last-delivered-id of the lab's group, or why it cannot be read.
    std::string last_delivered();
    // Control::group_state.
    nlohmann::json state();
    // Control::pel_ids; nullopt while the primary is out.
    std::optional<std::vector<std::string>> pel_ids(bool primary_out);
    // Sets the stop key idle consumers leave on.
    void raise_stop();
    // CLIENT UNBLOCK every blocked reader of the trial (its connections' names start with the prefix).
    void unblock_readers();

private:
    // Every entry now in the stream delivered and acknowledged.
    bool group_drained();

    const RealControl::Env& m_env;
    RedisNamespace m_ns;
    LabConnections& m_connections;
};

}  // namespace relab
