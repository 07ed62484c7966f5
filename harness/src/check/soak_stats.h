// A soak trial's figures, from its history: how often the nemesis killed and restarted roles, what
// the consumer group gave back after the kills, and what the group held at the end (relab's own
// reading of the server, recorded as the trial's last record). Pure functions of recorded data,
// like the accounting and the load figures; with them they account for every published entry:
// processed (once or more), still pending in the group, never delivered, or lost.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ports/ports.h"

namespace relab {

// Per trial.
//   kills           scheduled faults (the lab's own, not relab's stop at a deadline) that SIGKILLed a
//                   running role: `kill` ok, or `restart` ok that found it running (killed: true)
//   restarts        scheduled restarts of a role done (ok): a new process under the same name
//   fault_failures  scheduled faults that failed (phase fail: the target was not running, ...)
//   recovered       entries received again while no ack of them had come: the group giving back
//                   what a dead (or stalled) consumer held, through a consumer's own pending list or
//                   XAUTOCLAIM; an entry counts once however often it came back
//   pending         the group's PEL at the trial's end (XINFO GROUPS), -1 when not read
//   undelivered     entries after the group's last-delivered-id at the end, -1 when not read
//   deadline_passed the soak's deadline came before the group drained
//   deadline_ms     the soak's deadline, from the trial's origin
//   end_ms          when relab read the group, from the trial's origin
struct SoakStats {
    bool measured = false;  // the history has relab's reading of the group (a soak lab's trial)
    int64_t kills = 0;
    int64_t restarts = 0;
    int64_t fault_failures = 0;
    int64_t recovered = 0;
    int64_t pending = -1;
    int64_t undelivered = -1;
    bool deadline_passed = false;
    int64_t deadline_ms = 0;
    int64_t end_ms = 0;
    std::vector<std::string> recovered_examples;  // the first few entry ids
    bool operator==(const SoakStats&) const = default;
};

// The trial's soak figures; its history in time order (the checker sorts it), times from the origin.
SoakStats soak_stats(const std::vector<HistoryRecord>& history);

// The figure a "soak" band names (scenario.h's soak_figure_names()), deadline_passed as 0 or 1;
// nullopt for another name, or for pending/undelivered when the group was not read.
std::optional<int64_t> soak_figure(const SoakStats& s, const std::string& name);

}  // namespace relab
