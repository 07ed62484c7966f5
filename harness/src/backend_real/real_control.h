// The Control port on real servers, for every lab kind: roles are `relab role` processes (signals
// for kill, pause, resume; a new process under the same name for a restart: role_processes.h),
// servers are the lab's own redis-server, replica and sentinels (servers/lab_redis.h), PostgreSQL
// and cluster (server_faults.h), a role's links go through proxies of relab's (role_link_proxies.h),
// the history is the roles' files (role_history_files.h). The supervisors (engine/supervisor.cpp)
// drive it; the simulator implements the same port.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ports/control.h"
#include "clients/redis_client.h"
#include "roles/roles.h"
#include "process/role_process.h"
#include "scenario/scenario.h"

namespace relab {

class LabRedis;
class ClusterClient;
class EmbeddedPostgres;
class EmbeddedRedisCluster;

class RealControl : public Control {
public:
    struct Env {
        const Scenario& s;
        std::string prefix;     // the trial's key prefix (its namespace on the server)
        std::string dir;        // the trial's directory: role configs, histories, stderr
        std::string relab_exe;  // what runs `relab role`
        LabRedis* own = nullptr;  // the lab's own servers; null: the run's server, never faulted
        RedisEndpoint run_redis;  // the run's server
        EmbeddedPostgres* own_pg = nullptr;  // the lab's own PostgreSQL ("postgres"); null: none to fault
        // S2: the nodes of the lab's Redis Cluster, where its shard streams live; empty: none.
        std::vector<RedisEndpoint> cluster{};
        // Forks the roles (role_spawner.h); null: each is exec'd as `relab_exe role --config`.
        RoleSpawner* spawner = nullptr;
        // Its servers, for a fault on a shard's master ("redis-cluster-master"); null: none to fault.
        EmbeddedRedisCluster* cluster_servers = nullptr;
    };
    explicit RealControl(Env env);
    ~RealControl() override;

    // Starts a role's process (asks for it: see roles_started()).
    void add(const RoleLaunch& launch, RoleConfig config);
    // Every role added has started; throws EnvironmentError naming why one could not.
    void roles_started();
    // The next trial's (or lab's) role processes forked and connected ahead while relab reads this
    // trial's outcome (RoleSpawner::open_ahead), once per trial. A stream trial asks by itself,
    // 100 ms into its drain or as it raises the stop; an idempotency trial, as its clients are done.
    void open_roles_ahead();
    // A client of the lab's current primary (again after a restart or a failover).
    RedisClient& admin();
    // S2: the harness's own client of the lab's Redis Cluster (keys under the trial's prefix; MOVED
    // and ASK followed, as the roles follow them).
    ClusterClient& cluster();
    // Every role's history file and the supervisor's records, unsorted (the checker sorts).
    std::vector<HistoryRecord> history();
    // Writes each named fault's flag ahead, so it can be raised by RENAME under noeviction's OOM.
    void prepare_flags();
    // Sentinel failed over more often than the lab scheduled: a primary did not answer for
    // down-after-milliseconds (a machine too loaded): the lab's story is no longer the one it tells.
    void fail_on_unscheduled_failover();

    Nanos now() override;
    void wait(Phase phase, std::optional<Nanos> until) override;
    bool finished(const Target& t) override;
    void check_roles() override;
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
    std::string server_key(const std::string& logical) override;
    bool drained() override;
    nlohmann::json group_state() override;
    std::optional<std::vector<std::string>> pel_ids() override;
    void raise_stop() override;
    void unblock_readers() override;
    bool clients_ready() override;
    void go(Nanos origin) override;
    std::vector<std::string> present(const std::vector<std::string>& keys) override;
    int64_t pttl_ms(const std::string& key) override;
    void raise_flag(const std::string& fault_name) override;
    void poll_records(std::vector<HistoryRecord>& out) override;
    void record(HistoryRecord r) override;
    int64_t activity() override;

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

}  // namespace relab
