// The Control port: what a trial's supervisor does to the world around the roles. The supervisors
// (engine/supervisor.cpp) are written once against it, for stream and idempotency labs alike: start
// barrier and origin, fault schedule, drained check, stop. The real backend implements it over
// processes, signals and redis-server; the simulator over fibers and its server models. The faults
// are built from a few primitives of it (fault/faults.cpp), as FoundationDB's workloads build
// theirs from the simulator's kill, reboot and clog.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ports/link_mode.h"
#include "ports/ports.h"
#include "ports/target.h"

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
        fault,       // a fault's own wait (a snapshot to finish): only `until`
    };
    // Returns when something may have changed, at the latest at `until`; may return early. A wait
    // in the draining phase returns within the lab's stream.quiet_ms even when nothing changes.
    virtual void wait(Phase phase, std::optional<Nanos> until) = 0;

    // Throws when a role ended badly by itself (not by a fault): the trial cannot be judged.
    virtual void check_roles() = 0;

    // --- the primitives: what the nemesis can do to a role or a server ---
    // Every fault action is a composition of these, written once for both backends
    // (fault/faults.cpp); a backend implements the primitives only.
    // Its current process (or fiber, or server) has ended: exited, or killed by a fault.
    virtual bool finished(const Target& t) = 0;
    virtual void kill(const Target& t) = 0;    // SIGKILL (a server: as `docker kill`); returns once it is gone
    virtual void pause(const Target& t) = 0;   // SIGSTOP: it stays connected and runs nothing
    virtual void resume(const Target& t) = 0;  // SIGCONT
    virtual bool paused(const Target& t) = 0;
    // Starts it again after a kill: a role under the same name; a server on its port and data
    // directory, returning once it serves what its persistence kept; "redis-replica": the old
    // primary after a failover, returning once Sentinel made it the new primary's replica and its
    // first sync is done.
    virtual void start(const Target& t) = 0;
    // Closes links, returning how many: "redis-replica": the primary's replication links; a role:
    // its Redis connections (its tasks' too); "clients": every role's. The harness's own stay.
    virtual int64_t drop_links(const Target& t) = 0;
    // Sentinel's election, never a promotion by hand: the primary died at `killed_at`; returns once
    // the sentinels promoted the replica, every one names it and it serves as the primary. What
    // the election took: "switch_ms" from `killed_at` to the switch, the backend's own figures, and
    // "text", the election in words.
    virtual nlohmann::json promote(Nanos killed_at) = 0;
    // The Redis Cluster's own failover, never a promotion by hand: `master` (a redis_cluster_master
    // target) died at `killed_at`; returns once a live node's CLUSTER SLOTS names another node as the
    // master of its shard's slot and that node says it is one. "switch_ms" from `killed_at` to then,
    // "old_master" and "new_master" (host:port), and "text", the failover in words.
    virtual nlohmann::json shard_promote(const Target& master, Nanos killed_at) = 0;
    // Redis commands on a server ("redis", "redis-cache"), sent in one round trip; db >= 0: that
    // database of the same instance, -1: the lab's own. Each reply as data: an integer is a number,
    // a string or status a string, nil null, an array an array, an error {"error": message}.
    using Command = std::vector<std::string>;
    virtual std::vector<nlohmann::json> commands(const Target& server, int64_t db, const std::vector<Command>& batch) = 0;
    nlohmann::json command(const Target& server, Command argv) { return commands(server, -1, {std::move(argv)}).at(0); }
    // What a fault's record says of a server ("redis") before and after it.
    struct ServerState {
        int64_t keys = 0;            // DBSIZE
        bool appendonly = false;     // its persistence
        // A stream lab's group: its last-delivered-id (XINFO GROUPS), or why there is none to
        // read ("(no group)", "(down)", "(unreadable: ...)"); empty in a lab of another kind.
        std::string last_delivered;
        std::string persistence() const { return appendonly ? "appendonly yes" : "appendonly no"; }
    };
    virtual ServerState describe(const Target& server) = 0;
    // The key a lab names `logical` as the servers hold it (under the trial's prefix).
    virtual std::string server_key(const std::string& logical) = 0;
    // --- a role's link to a server: the TCP proxy relab puts between them on the real backend
    // (in a lab whose faults act on links), the connection model in the simulator ---
    // What the link of role `t` to `server` does from now on: a delay of its replies, a blackhole,
    // or neither (a heal, which lets every byte a blackhole held through, in order). Returns the
    // backend's figures: "released", what the change let through (bytes on the real backend,
    // calls in the simulator), and "unit", which.
    virtual nlohmann::json set_link(const Target& t, LinkServer server, const LinkMode& mode) = 0;

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
    // The IDs in the lab's group's pending entries list as the server has them now (XPENDING), what
    // a trial that ended quiet left pending even where a killed role's receive never reached the
    // history; nullopt when the server cannot be read (down or paused) or the lab is sharded.
    virtual std::optional<std::vector<std::string>> pel_ids() = 0;
    virtual void raise_stop() = 0;       // the stop flag idle consumers leave on
    virtual void unblock_readers() = 0;  // CLIENT UNBLOCK every blocked reader of the trial

    // --- the history ---
    // Appends the roles' records written since the last call (times absolute).
    virtual void poll_records(std::vector<HistoryRecord>& out) = 0;
    // A record of the supervisor's own (the nemesis's fault records).
    virtual void record(HistoryRecord r) = 0;
    // A figure that grows whenever a record is written, the roles' or the supervisor's (bytes or
    // records): what tells the supervisor that something still moves, without reading the records.
    virtual int64_t activity() = 0;
};

}  // namespace relab
