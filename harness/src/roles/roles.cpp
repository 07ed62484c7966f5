#include "roles/roles.h"

#include <stdexcept>

#include <fmt/format.h>

namespace relab {

std::vector<RoleLaunch> trial_roles(const Scenario& s) {
    std::vector<RoleLaunch> out;
    for (int i = 1; i <= s.consumers; ++i) out.push_back({"consumer", fmt::format("C{}", i)});
    out.push_back({"producer", "producer"});
    return out;
}

void run_role(const std::string& role, const std::string& actor, const Scenario& s, RolePorts& ports,
              Millis barrier_timeout) {
    if (role == "consumer")
        run_consumer(s, actor, ports);
    else if (role == "producer")
        run_producer(s, ports, barrier_timeout);
    else
        throw std::invalid_argument("unknown role '" + role + "'");
}

}  // namespace relab
