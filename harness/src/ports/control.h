// The Control port: what a trial's supervisor does to the world around the roles. The supervisor
// (run/supervisor.cpp) is written once against it: start barrier and origin, fault schedule,
// drained check, stop. The real backend implements it over processes, signals and redis-server;
// the simulator over fibers and its server models.
#pragma once

#include <optional>
#include <string>
#include <vector>

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
    // Kills the primary and waits for Sentinel to promote the replica; returns what happened.
    virtual std::string failover(const std::string& server) = 0;
    // Drops a server's link (the replica's replication link); returns what happened.
    virtual std::string drop_link(const std::string& server) = 0;

    // --- the stream ---
    // Every published entry delivered and acknowledged (XINFO GROUPS: pending 0, last-delivered-id
    // at the stream's last entry).
    virtual bool drained() = 0;
    virtual void raise_stop() = 0;       // the stop flag idle consumers leave on
    virtual void unblock_readers() = 0;  // CLIENT UNBLOCK every blocked reader of the trial

    // --- the history ---
    // Appends the roles' records written since the last call (times absolute).
    virtual void poll_records(std::vector<HistoryRecord>& out) = 0;
    // A record of the supervisor's own (the nemesis's fault records).
    virtual void record(HistoryRecord r) = 0;
};

}  // namespace relab
