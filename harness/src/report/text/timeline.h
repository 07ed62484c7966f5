// A trial's history (or a scripted case's steps) as swimlanes: one lane per actor, bars for the
// time spent on a job or waiting for a lock, markers for single records. The HTML reporter draws
// it; keeping the model apart lets it be tested without parsing SVG.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "check/outcome.h"

namespace relab {

struct TimelineBar {
    enum class Kind {
        job,        // a consumer working on an entry: receive (or lock acquired) → write
        lock_wait,  // received, not yet holding the lock: receive → lock_acquire
        step,       // one statement of a scripted session, start → reply
        request,    // an idempotency lab's request: the client's send → the answer it got
    };
    Kind kind = Kind::job;
    std::string lane;
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    std::string label;        // "created (v=1)", or the statement
    bool overwrites = false;  // the job's write overwrote a newer state of its order
    bool failed = false;      // a step that failed or did not do what was expected
    bool unfinished = false;  // the trial ended before the job wrote or acked (a request: no answer)
    // A request: the answer's status code (0: none) and where it came from ("created", "replay",
    // "in_progress", "mismatch", "layer4", "other_user", "error", …).
    int code = 0;
    std::string source;
    bool duplicate = false;  // a request whose INSERT made a second order for the same key
    bool leak = false;       // a request answered with another user's order
};

struct TimelineMarker {
    enum class Kind {
        receive, lock_acquire, lock_release, write, publish, step_end, other,
        // the idempotency labs
        send,    // a client sends its request
        answer,  // … and gets its answer (label: the code)
        order,   // the business logic's INSERT INTO orders (bad: a duplicate), or layer 4's refusal
        fault,   // the runner injects a fault (flood, crash, failover, kill) or observes the keys
        minor,   // a middleware step (claim, store, WAIT, DEL): a dot, its text in the tooltip
    };
    Kind kind = Kind::other;
    std::string op;  // the record's op, as written (for `other`: what to call it)
    std::string lane;
    int64_t t_ns = 0;
    std::string label;   // shown beside the marker: "UPDATE 1", "fail"; empty for most
    std::string detail;  // the whole record, for a tooltip
    bool bad = false;    // a failed publish, a release that returned 0, an overwriting write, an error
};

// A fault of the lab's schedule, as the nemesis recorded it (actor "nemesis", op "fault"): drawn
// across every lane from its invocation to its end, not in a lane of its own.
struct TimelineFault {
    std::string index;       // its 1-based place in the schedule, as recorded
    std::string action;      // "kill", "pause", "resume", "restart", "failover", "drop_link"
    std::string target;      // "C1", "redis", ...
    int64_t start_ns = 0;    // the invocation (an end recorded without one: the end)
    int64_t end_ns = 0;      // its ok or fail; the trial's end when neither was recorded
    bool ended = false;      // an ok or a fail was recorded
    bool failed = false;     // ... and it was a fail
    std::string label;       // "kill C1", "kill C1 ✕" when it failed
    std::string detail;      // times, the sentence, the outcome and its error: a tooltip
};

struct Timeline {
    std::vector<std::string> lanes;  // top to bottom
    std::vector<TimelineBar> bars;
    std::vector<TimelineMarker> markers;
    std::vector<TimelineFault> faults;  // in order of invocation
    int64_t start_ns = 0;  // 0, or the earliest record if one is earlier
    int64_t end_ns = 0;    // the latest record
};

// Lanes: actors that publish (never receive or claim) first, then the rest, each group in natural order
// (C2 before C10); an actor with nothing to draw has no lane. A write with affected rows > 0 whose event version is lower than a write
// already applied to the same order overwrites a newer state. Ops it does not know become
// `other` markers; `start` and `ack` draw nothing. The nemesis's faults become `faults` (no lane);
// a kill ends its target's job in progress, unfinished. A receive that is not a first delivery of a
// new entry is labelled "delivery 2, claimed" (or "… from its pending list"); a `claim` is labelled
// "XAUTOCLAIM 2" (the entries it claimed).
Timeline trial_timeline(const TrialOutcome& trial, bool several_orders);

// An idempotency workload trial (article 002): a lane per client in natural order, then the runner's
// lane (faults) last; a bar per request from its send to its answer; markers for send, answer,
// the order's INSERT (a second order for the same user and key is a duplicate: bad), layer 4's
// refusal, the middleware's steps and the faults. An answer naming another user's order is a leak.
Timeline idem_trial_timeline(const TrialOutcome& trial);

// One lane per session in the order they first ran, one bar per statement.
Timeline case_timeline(const CaseOutcome& c);

// The event of a record as "created (v=1)", or "#42 created (v=1)" with several orders.
std::string timeline_event_text(const nlohmann::json& data, bool several_orders);
// A nemesis record's action and target in words; a link fault says so: "link: blackhole C1",
// "link: heal C1" (its text names the server).
std::string fault_words(const nlohmann::json& data);

}  // namespace relab
