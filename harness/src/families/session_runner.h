#pragma once

#include <string>

#include "check/outcome.h"
#include "servers/servers.h"
#include "families/redis_session.h"
#include "scenario/scenario.h"

namespace relab {

// Runs one scripted case: setup in one connection, then every session concurrently on its own
// connection, each step no earlier than its at_ms; then the final query. Checks each step's
// expectations and the final rows. Sessions with "client": "redis" run on `redis` (required then),
// with their keys under its prefix; a case without SQL at all never connects to PostgreSQL.
CaseOutcome run_session_case(const SessionCase& c, const PgEndpoint& pg, const std::string& schema,
                             const RedisSessionTarget* redis = nullptr);

}  // namespace relab
