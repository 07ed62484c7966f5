// The Control port: what a trial's supervisor does to the world around the roles. The supervisors
// (engine/supervisor.cpp) are written once against it, for stream and idempotency labs alike: start
// barrier and origin, fault schedule, drained check, stop. The real backend implements it over
// processes, signals and redis-server; the simulator over fibers and its server models.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ports/ports.h"

namespace relab {

class Control {
public:
    virtual ~Control() = default;

    // The backend's clock, on the same scale as the roles' history records.
    virtual Nanos now() = 0;
    // What the supervisor waits for; the simulator waits on the matching event instead of polling.
    enum class Phase {
        publishing,  // the publishing roles (producer, source app, dispatcher) to end
        draining,    // the group to drain: every entry delivered and acknowledged
        stopping,    // consumers to leave after the stop flag
        clients,     // an idempotency lab's clients to finish
    };
    // Returns when something may have changed, at the latest at `until`; may return early.
    virtual void wait(Phase phase, std::optional<Nanos> until) = 0;

    // --- roles, by actor name ---
    // Its current process (or fiber) has ended: exited, or killed by the nemesis.
    virtual bool finished(const std::string& actor) = 0;
    // Throws when a role ended badly by itself (not by a fault): the trial cannot be judged.
    virtual void check_roles() = 0;
    virtual void kill(const std::string& actor) = 0;    // SIGKILL; returns once it is gone
    virtual void pause(const std::string& actor) = 0;   // SIGSTOP
    virtual void resume(const std::string& actor) = 0;  // SIGCONT
    virtual void start(const std::string& actor) = 0;   // again, under the same name (after kill)
    virtual bool paused(const std::string& actor) = 0;

    // --- servers ("redis", "redis-replica") ---
    // Each returns what happened as a fault record's details: "text" in words, and the figures.
    // Kills the primary and waits for Sentinel to promote the replica.
    virtual nlohmann::json failover(const std::string& server) = 0;
    // Drops a server's link (the replica's replication link).
    virtual nlohmann::json drop_link(const std::string& server) = 0;
    // Writes `bytes` of cache keys into the server in values of `value_bytes` (a peak of cache
    // traffic): evicted_keys, oom_errors, the memory policy.
    // db >= 0: the keys go to that database of the same instance (SELECT db), not the lab's own.
    virtual nlohmann::json flood(const std::string& server, int64_t bytes, int64_t value_bytes, int64_t db) = 0;
    // BGSAVE, and waits for it to finish.
    virtual nlohmann::json snapshot(const std::string& server) = 0;
    // The server as it is now: "keys" (DBSIZE) and "persistence" ("appendonly yes" / "no").
    virtual nlohmann::json describe(const std::string& server) = 0;

    // --- an idempotency lab's keys, named without the trial's prefix ---
    virtual bool clients_ready() = 0;     // every client has said it is ready
    virtual void go(Nanos origin) = 0;    // the clients' go signal: they start at `origin`
    virtual std::vector<std::string> present(const std::vector<std::string>& keys) = 0;  // those that exist
    virtual int64_t pttl_ms(const std::string& key) = 0;  // PTTL: -2 absent, -1 no expiry
    virtual void raise_flag(const std::string& fault_name) = 0;  // a named fault is done

    // --- the stream ---
    // Every published entry delivered and acknowledged (XINFO GROUPS: pending 0, last-delivered-id
    // at the stream's last entry).
    virtual bool drained() = 0;
    // The lab's consumer group as the server has it now (a soak trial's final state):
    // "pending", its PEL's size (XINFO GROUPS), and "undelivered", the entries after its
    // last-delivered-id; with "group": false when the group is gone (every entry undelivered).
    virtual nlohmann::json group_state() = 0;
    virtual void raise_stop() = 0;       // the stop flag idle consumers leave on
    virtual void unblock_readers() = 0;  // CLIENT UNBLOCK every blocked reader of the trial

    // --- the history ---
    // Appends the roles' records written since the last call (times absolute).
    virtual void poll_records(std::vector<HistoryRecord>& out) = 0;
    // A record of the supervisor's own (the nemesis's fault records).
    virtual void record(HistoryRecord r) = 0;
};

}  // namespace relab
