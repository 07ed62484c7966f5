// What relab learns of an exec role's program without its help (scenario/exec_spec.h), and the
// trace it may write:
//   writes      a trigger on tmp_orders logs each row the program's statements change (order, status,
//               version, time) and each UPDATE that changed none, into relab_write_log in the trial's
//               schema; the program is known by its connection's application_name (RELAB_PG_URL);
//   deliveries  the group's PEL, read every few ms (XPENDING): an entry that appears under a
//               program's consumer name was delivered to it (at now − its idle time), one whose
//               delivery count grows was delivered again, one that leaves it was acknowledged;
//   publishes   a program producer's entries, read from the stream at the end (their IDs' times);
//   the trace   JSON lines the program wrote on RELAB_TRACE_FD, each a history record of its own.
// The history then holds, per actor, receives and acks from the trace when the program traced them
// and from the PEL otherwise, writes from the trigger always (the database says what was written),
// each write given the entry and event its actor last received, and every other op from the trace.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "clients/redis_client.h"
#include "ports/ports.h"
#include "scenario/scenario.h"
#include "servers/servers.h"

namespace relab {

class ProgramObserver {
public:
    // `programs`: the actors that are programs; `prefix`: the trial's key prefix.
    ProgramObserver(const Scenario& s, std::string prefix, std::set<std::string> programs);
    ~ProgramObserver();  // removes the write log and its triggers; never throws
    ProgramObserver(const ProgramObserver&) = delete;
    ProgramObserver& operator=(const ProgramObserver&) = delete;

    // The trigger and its log on the trial's tmp_orders (once its rows are in place).
    void install_write_log(const PgEndpoint& pg, const std::string& schema);
    // A program's trace file, read as it grows.
    void watch_trace(const std::string& actor, const std::string& path);
    // One look at the group's PEL (a consumer program's deliveries and acks since the last look).
    void poll_stream(RedisClient& redis);
    // The records seen since the last call (the nemesis's triggers look at them).
    void new_records(std::vector<HistoryRecord>& out);
    // Everything observed in the trial, writes attributed, in time order. Throws HarnessError for a
    // trace line that is not a history record.
    std::vector<HistoryRecord> records(RedisClient& redis);

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

}  // namespace relab
