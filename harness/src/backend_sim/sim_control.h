// The Control port on the simulated world: the supervisor's waits are scheduler events, a role's
// primitives go to its fiber (SimRoles), a server's to the world's server models, and what the
// supervisor reads (the keys, the group, the history) is read from the models directly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backend_sim/sim_roles.h"
#include "backend_sim/sim_trial.h"
#include "ports/control.h"
#include "roles/roles.h"
#include "scenario/scenario.h"

namespace relab::sim_backend_detail {

class SimControl : public Control {
public:
    SimControl(SimTrial& trial, const Scenario& s, const std::vector<RoleLaunch>& roles,
               std::vector<sim::FiberId> fibers, uint64_t seed)
        : m_trial(trial), m_s(s), m_roles(trial, roles, std::move(fibers), seed) {}

    Nanos now() override { return m_trial.world.now(); }
    void wait(Phase phase, std::optional<Nanos> until) override;
    void check_roles() override {}  // a fiber that throws fails the trial in the scheduler

    bool finished(const Target& t) override;
    void kill(const Target& t) override;
    void pause(const Target& t) override;
    void resume(const Target& t) override;
    bool paused(const Target& t) override;
    void start(const Target& t) override;
    int64_t drop_links(const Target& t) override;
    nlohmann::json set_link(const Target& t, LinkServer server, const LinkMode& mode) override;
    nlohmann::json promote(Nanos killed_at) override;
    nlohmann::json shard_promote(const Target& master, Nanos killed_at) override;
    std::vector<nlohmann::json> commands(const Target& server, int64_t db, const std::vector<Command>& batch) override;
    ServerState describe(const Target& server) override;
    std::string server_key(const std::string& logical) override { return logical; }

    bool clients_ready() override;
    void go(Nanos origin) override;
    std::vector<std::string> present(const std::vector<std::string>& keys) override;
    int64_t pttl_ms(const std::string& key) override;
    void raise_flag(const std::string& name) override;

    bool drained() override { return m_trial.drained(m_s); }
    nlohmann::json group_state() override;
    std::optional<std::vector<std::string>> pel_ids() override;
    void raise_stop() override;
    void unblock_readers() override { m_trial.world.unblock_all_readers(); }

    void poll_records(std::vector<HistoryRecord>& out) override;
    void record(HistoryRecord r) override { m_trial.history.record(std::move(r)); }
    int64_t activity() override { return static_cast<int64_t>(m_trial.history.records().size()); }

private:
    // A fault the action table keeps away from the simulator (a skip reason): a harness bug here.
    [[noreturn]] static void not_modelled(const char* primitive, const Target& t);
    bool appendonly() const;
    std::string last_delivered();

    SimTrial& m_trial;
    const Scenario& m_s;
    SimRoles m_roles;
    size_t m_seen = 0;
};

}  // namespace relab::sim_backend_detail
