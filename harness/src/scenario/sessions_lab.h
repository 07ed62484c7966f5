// A sessions lab's own data ("kind": "sessions"): its cases, each a set of scripted psql or
// redis-cli sessions run concurrently and the rows the case must end with. A Scenario of kind
// sessions holds one (Scenario::sessions()); no other kind has cases.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scenario/idem/idem_spec.h"

namespace relab {

// One step of a scripted session (the article's psql transcripts).
struct SessionStep {
    int64_t at_ms = -1;  // start no earlier than this (from the case's origin); -1: right after the previous step
    std::string sql;
    std::optional<std::string> expect;          // command tag, e.g. "UPDATE 1", "COMMIT"
    std::optional<std::string> expect_sqlstate;  // e.g. "40001": the step must fail with it
    std::optional<int64_t> expect_wait_min_ms;   // the step's duration must lie in [min, max]
    std::optional<int64_t> expect_wait_max_ms;
    std::optional<RedisStep> redis;  // set in a Redis session ("client": "redis"); sql is then empty
};

struct SessionSpec {
    std::string name;  // "A", "B"
    std::vector<SessionStep> steps;
    std::string client = "sql";  // "sql" (psql-like) or "redis" (redis-cli-like)
};

struct SessionCase {
    std::string title;
    std::string title_vi;
    std::vector<std::string> setup_sql;  // run before the sessions, in one connection
    std::vector<SessionSpec> sessions;   // run concurrently, one connection each
    std::string final_sql = "SELECT id, status, version FROM tmp_orders ORDER BY id";
    std::vector<std::vector<std::string>> expect_rows;  // the final query's rows, as text
    std::vector<std::string> transcript_sessions;       // print only these sessions' steps; empty: all
    // Redis sessions use the key names as written, without the run's prefix, when relab started
    // the server itself (a measurement the name's length changes, like MEMORY USAGE). On a server
    // relab did not start the prefix stays. The keys are deleted after the case either way.
    bool exact_keys = false;
};

struct SessionsLab {
    std::vector<SessionCase> cases;
};

}  // namespace relab
