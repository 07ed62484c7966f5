#include "roles/role_settings.h"

#include <stdexcept>

#include "roles/roles.h"

namespace relab {

RoleSettings role_settings(const Scenario& s) {
    RoleSettings r;
    r.stream = s.stream;
    r.events = s.events;
    r.job_cost_ms = s.job_cost_ms;
    r.consumers = s.consumers;
    r.write = s.write;
    r.lock = s.lock;
    r.buffer = s.buffer;
    r.fanout = s.fanout;
    r.producer = s.producer;
    r.dispatcher = s.dispatcher;
    r.shard = s.shard;
    r.recovery = s.recovery;
    r.redis_faults_scheduled = redis_faults_scheduled(s);
    r.postgres_faults_scheduled = postgres_faults_scheduled(s);
    r.idem_clients = s.idem.clients;
    r.idem_middleware = s.idem.middleware;
    r.idem_store_outages = r.redis_faults_scheduled ? StoreOutages::scheduled : StoreOutages::none_scheduled;
    return r;
}

using json = nlohmann::json;

json role_settings_to_json(const RoleSettings& r) { return desc::write_complete(r); }

RoleSettings role_settings_from_json(const json& j) {
    try {
        return desc::read_complete<RoleSettings>(j, "role settings");
    } catch (const ScenarioError& e) {
        throw std::invalid_argument(e.what());
    }
}

}  // namespace relab
