// Faults as data, Jepsen's nemesis for relab: what a scenario's "faults" list says, and how a
// stream lab's consumers recover. One vocabulary for every lab family and both backends; the
// supervisor (run/supervisor.cpp) fires them through the Control port.
//
// Adding a fault action: its name and what it does live in fault/faults.cpp (the name table
// and apply()); this header lists it in FaultAction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ports/history_op.h"

namespace relab {

enum class FaultAction {
    kill,     // SIGKILL the target (a role's process, or redis-server as `docker kill` does; a fiber
              // that never runs again, or a server model that answers nothing, in the sim)
    pause,    // SIGSTOP: the target stays connected but runs nothing until resumed
    resume,   // SIGCONT
    restart,  // kill if still running, then start the role again under the same name (a server:
              // again on its port and data directory, keeping what its persistence kept; "redis-replica"
              // after a failover: the old primary comes back empty and Sentinel makes it a replica)
    failover,   // "redis": SIGKILL the primary, Sentinel's election promotes the replica
    drop_link,  // "redis-replica": the primary drops the replication link (CLIENT KILL TYPE replica)
    flood,      // "redis": writes `bytes` of cache keys (`value_bytes` each, EX 3600) into the server,
                // as a peak of cache traffic does; counts evicted keys and OOM refusals
    snapshot,   // "redis": BGSAVE, and waits for it (the RDB snapshot `save` would take on its schedule)
    observe,    // "redis": changes nothing; records what the lab's keys look like now (a probe)
};

// Whether the action takes a server away or cuts it off (clients see errors while it lasts).
bool disrupts(FaultAction a);

// When a fault fires. The first firing is due at `at_ms` after the trial origin (a stream lab's
// publishing role's start; an idempotency lab's go signal) or, with `after`, `delay_ms` after the
// first history record that matches it (the nemesis's own records included: "1500 ms after fault
// 1"); with both, at whichever comes later ("at 900 ms, once B has its answer"). With every_ms, it
// fires `count` times, every_ms apart from the first firing.
struct FaultTrigger {
    std::optional<int64_t> at_ms;
    // A history record to wait for: op, actor ("" any), fields matched subset-wise (objects
    // recursively), e.g. {"op": "receive", "fields": {"event": {"type": "created"}}}.
    struct After {
        Op op = Op::start;
        std::string actor;
        nlohmann::json fields = nlohmann::json::object();
    };
    std::optional<After> after;
    int64_t delay_ms = 0;
    int64_t every_ms = 0;
    int count = 1;
};

struct FaultSpec {
    FaultAction action = FaultAction::kill;
    // A role's actor ("C1", "reaper", "producer", ...), the lab's own server "redis" (a lab with
    // "servers"), or "matched": the actor of the record the `after` trigger matched ("the consumer
    // that received created"); empty with target_of.
    std::string target;
    int target_of = 0;  // 1-based: the same target fault N resolved to (resume what fault 1 paused)
    FaultTrigger trigger;
    std::string note;     // why, in words, printed beside the fault (and, with `documented`, why
    std::string note_vi;  // this machine's figure must differ from the article's)
    // Roles may wait for a fault by name (an idempotency client's resend_after_fault): the
    // nemesis raises the name's flag once the fault is done.
    std::string name;
    // flood: how much to write, in values of value_bytes.
    int64_t bytes = 0;
    int64_t value_bytes = 1024;
    // What the article documented for this fault, shown beside the figure relab measures.
    std::string documented;
};

// How consumers get back entries a crashed or stalled consumer left pending.
struct RecoverySpec {
    // On start, a consumer first reads its own pending entries (XREADGROUP ... 0), then new ones.
    bool pending_first = false;
    // A NOGROUP error (the group vanished with a restarted server) makes the consumer create the
    // group again (XGROUP CREATE ... 0 MKSTREAM) instead of retrying its read forever.
    bool recreate_group = false;
    struct Autoclaim {
        bool enabled = false;
        int64_t min_idle_ms = 1000;  // XAUTOCLAIM ... min-idle-time
        int64_t every_ms = 100;      // how often the claimer scans
        int count = 10;              // XAUTOCLAIM ... COUNT
        bool in_reaper = true;       // a separate "reaper" role claims; false: every consumer in its loop
        bool operator==(const Autoclaim&) const = default;
    } autoclaim;
    bool any() const { return pending_first || autoclaim.enabled; }
    bool operator==(const RecoverySpec&) const = default;
};

std::string to_string(FaultAction a);
// The action named `name`, or nullopt.
std::optional<FaultAction> fault_action_named(const std::string& name);
// Every action's name, for error messages and the README.
std::vector<std::string> fault_action_names();

}  // namespace relab
