// The lab's actors, written once against the ports. The real backend runs each in its own
// process; the simulator runs them cooperatively on virtual time.
#pragma once

#include <string>
#include <vector>

#include "ports/ports.h"
#include "roles/role_settings.h"
#include "scenario/scenario.h"

namespace relab {

// The logical key whose existence tells idle consumers to exit.
inline const std::string kStopKey = "relab:stop";
// Set by the source app once its changes are committed; the dispatcher starts then.
inline const std::string kSourceDoneKey = "relab:source-done";

// Reads the group until told to stop: receive, [lock], job (a sleep), write, [release], XACK.
void run_consumer(const RoleSettings& s, const std::string& actor, RolePorts& ports);

// Recovery's separate claimer: every every_ms, XAUTOCLAIMs entries idle for min_idle_ms and
// processes them as a consumer would, until told to stop.
void run_reaper(const RoleSettings& s, const std::string& actor, RolePorts& ports);

// Waits for every consumer to block in XREADGROUP (the start barrier), records the trial origin
// ("start"), then publishes the scenario's events at their times.
void run_producer(const RoleSettings& s, RolePorts& ports, Millis barrier_timeout);

// The source system: each event is UPDATE tmp_src_orders + INSERT tmp_outbox in one
// transaction. Records the trial origin ("start") after the start barrier.
void run_source_app(const RoleSettings& s, RolePorts& ports, Millis barrier_timeout);

// Polls the outbox every poll_ms and publishes in the scenario's ordering until it is empty; with
// claim skip_locked, claims one row per transaction (held across its XADD and its mark) so that
// several dispatchers (actor: dispatcher1..N) never publish the same row.
void run_dispatcher(const RoleSettings& s, const std::string& actor, RolePorts& ports, Millis barrier_timeout);

// The lab schedules a fault on its Redis server or on the roles' Redis connections (the fault
// table's outage, fault/faults.cpp): roles then ride out its errors as workers do (record them,
// wait, retry on a new connection). In any other lab a Redis error is the harness's failure and
// ends the run. Roles read it resolved, as RoleSettings::redis_faults_scheduled.
bool redis_faults_scheduled(const Scenario& s);
// The same for the lab's own PostgreSQL (a fault on "postgres"): a role records the error, waits
// and tries the statement (or transaction) again on a new connection (RoleSettings::postgres_faults_scheduled).
bool postgres_faults_scheduled(const Scenario& s);
// How long a role waits after a Redis (or PostgreSQL) error before it tries again.
inline constexpr Millis kRetryAfterRedisError{100};

// Who takes part in one trial of a stream or idem_clients lab (the other kinds start no roles).
// Both backends start exactly these, so a role added here runs on the real servers and in the
// simulator alike.
struct RoleLaunch {
    std::string role;   // "consumer", "producer", ...
    std::string actor;  // "C1", "producer", ...
};
std::vector<RoleLaunch> trial_roles(const Scenario& s);

// Runs one role to its end on its lab's settings (role_settings). Throws std::invalid_argument for
// an unknown role.
void run_role(const std::string& role, const std::string& actor, const RoleSettings& s, RolePorts& ports,
              Millis barrier_timeout);

}  // namespace relab
