// What the roles read of their lab, resolved once. The parent builds it from the loaded Scenario
// (after its defaults, validation, a mutant's patch and any change made to the struct since) with
// role_settings(), and every role runs on it: a role process receives it as JSON in its config
// (role_settings_to_json / role_settings_from_json) and never parses a scenario file; the
// simulator's fibers get the same struct from the same function.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "describe/describe.h"
#include "fault/fault_spec.h"
#include "roles/idem_middleware.h"
#include "scenario/idem/idem_spec.h"
#include "scenario/scenario.h"

namespace relab {

struct RoleSettings {
    // Stream roles: consumer and reaper (stream, job_cost_ms, write, lock, buffer, recovery), producer
    // (consumers: the start barrier, events, producer), source app and dispatcher (events, dispatcher).
    StreamSpec stream;
    std::vector<EventSpec> events;
    std::map<std::string, int64_t> job_cost_ms;
    int consumers = 2;
    WriteSpec write;
    LockSpec lock;
    BufferSpec buffer;
    FanoutSpec fanout;
    ProducerSpec producer;
    DispatcherSpec dispatcher;
    ShardSpec shard;  // S2: the producer routes by it, consumer Ck reads shard k-1
    RecoverySpec recovery;
    // The lab schedules a fault of its Redis server or of the roles' Redis connections (the fault
    // target table's outage, fault/faults.cpp): stream roles ride out Redis errors.
    bool redis_faults_scheduled = false;
    // The same for the lab's own PostgreSQL: the source app, dispatcher and consumers ride out its errors.
    bool postgres_faults_scheduled = false;

    // Idempotency clients: every client as the file gives it, a "generate" block unexpanded (a role
    // finds its own by actor and makes its requests with idem_client_requests), the middleware, and
    // whether a fault of the store's server is scheduled (a lost connection is then a lab result).
    std::vector<IdemClient> idem_clients;
    IdemMiddlewareSpec idem_middleware;
    StoreOutages idem_store_outages = StoreOutages::none_scheduled;

    bool operator==(const RoleSettings&) const = default;
};

namespace desc {

template <>
struct Described<RoleSettings> {
    static constexpr auto fields = std::tuple{
        field("stream", &RoleSettings::stream, ""),
        field("events", &RoleSettings::events, ""),
        field("job_cost_ms", &RoleSettings::job_cost_ms, "").of(Unit::ms),
        field("consumers", &RoleSettings::consumers, ""),
        field("write", &RoleSettings::write, ""),
        field("lock", &RoleSettings::lock, ""),
        field("buffer", &RoleSettings::buffer, ""),
        field("fanout", &RoleSettings::fanout, ""),
        field("producer", &RoleSettings::producer, ""),
        field("dispatcher", &RoleSettings::dispatcher, ""),
        field("shard", &RoleSettings::shard, ""),
        field("recovery", &RoleSettings::recovery, ""),
        field("redis_faults_scheduled", &RoleSettings::redis_faults_scheduled, ""),
        field("postgres_faults_scheduled", &RoleSettings::postgres_faults_scheduled, ""),
        field("idem_clients", &RoleSettings::idem_clients, ""),
        field("idem_middleware", &RoleSettings::idem_middleware, ""),
        field("idem_store_outages", &RoleSettings::idem_store_outages, ""),
    };
};

}  // namespace desc

// The settings every role of `s` runs on. Both backends call it.
RoleSettings role_settings(const Scenario& s);

nlohmann::json role_settings_to_json(const RoleSettings& r);
// Every field must be present (a config written by this same relab): a missing or mistyped one
// throws std::invalid_argument naming it.
RoleSettings role_settings_from_json(const nlohmann::json& j);

}  // namespace relab
