#include "roles/role_settings.h"

#include <stdexcept>

#include "roles/roles.h"

namespace relab {

RoleSettings role_settings(const Scenario& s) {
    RoleSettings r;
    if (const StreamLab* flow = s.flow_if()) {
        r.stream = flow->stream;
        r.events = flow->events;
        r.job_cost_ms = flow->job_cost_ms;
        r.consumers = flow->consumers;
        r.write = flow->write;
        r.lock = flow->lock;
        r.buffer = flow->buffer;
        r.fanout = flow->fanout;
        r.producer = flow->producer;
        r.dispatcher = flow->dispatcher;
        r.shard = flow->shard;
        r.recovery = flow->recovery;
    }
    r.redis_faults_scheduled = redis_faults_scheduled(s);
    r.postgres_faults_scheduled = postgres_faults_scheduled(s);
    if (is_idem(s.kind)) {
        r.idem_clients = s.idem().clients;
        r.idem_middleware = s.idem().middleware;
    }
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
