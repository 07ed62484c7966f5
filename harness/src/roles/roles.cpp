#include "roles/roles.h"

#include "roles/idem_client.h"

#include <stdexcept>

#include <fmt/format.h>

#include "util/check.h"

namespace relab {

std::vector<RoleLaunch> trial_roles(const Scenario& s) {
    std::vector<RoleLaunch> out;
    // Sessions run no roles (the session runner plays them); the benchmark and the cluster lab send
    // their commands themselves.
    const KindRow& kind = kind_row(s.kind);
    if (!kind.runs_roles) return out;
    if (kind.sends_requests) {  // one client process per client, no stream
        for (const auto& c : s.idem().clients) out.push_back({"idem_client", c.name});
        return out;
    }
    const StreamLab& flow = s.flow();  // a kind that runs roles is a stream lab or sends requests
    for (int i = 1; i <= flow.consumers; ++i) out.push_back({"consumer", fmt::format("C{}", i)});
    if (flow.recovery.autoclaim.enabled && flow.recovery.autoclaim.in_reaper()) out.push_back({"reaper", "reaper"});
    if (flow.dispatcher.enabled) {
        out.push_back({"source", "app"});
        for (const auto& d : dispatcher_actors(flow.dispatcher)) out.push_back({"dispatcher", d});
    } else {
        out.push_back({"producer", "producer"});
    }
    return out;
}

bool redis_faults_scheduled(const Scenario& s) { return faults_cause(s.faults, FaultOutage::redis); }

bool postgres_faults_scheduled(const Scenario& s) { return faults_cause(s.faults, FaultOutage::postgres); }

void run_role(const std::string& role, const std::string& actor, const RoleSettings& s, RolePorts& ports,
              Millis barrier_timeout) {
    if (role == "consumer")
        run_consumer(s, actor, ports);
    else if (role == "reaper")
        run_reaper(s, actor, ports);
    else if (role == "producer")
        run_producer(s, ports, barrier_timeout);
    else if (role == "source")
        run_source_app(s, ports, barrier_timeout);
    else if (role == "dispatcher")
        run_dispatcher(s, actor, ports, barrier_timeout);
    else if (role == "idem_client")
        run_idem_client(s, actor, ports, barrier_timeout);
    else
        throw std::invalid_argument("unknown role '" + role + "'");
}

}  // namespace relab
