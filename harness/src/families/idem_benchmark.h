// The benchmark lab of article 002 (section 3.1): the claim operation with one client, on Redis
// (SET k v NX GET EX 60) and on PostgreSQL (INSERT INTO idempotency_keys ... ON CONFLICT DO
// NOTHING, with fsync per commit and with synchronous_commit=off), measured by relab itself and
// by redis-benchmark (process/redis_benchmark_tool.h) and pgbench on the same servers in the
// same run.
#pragma once

#include <optional>
#include <string>

#include "check/outcome.h"
#include "families/probe.h"

namespace relab {

// The lab's one trial, whose history has an "observe" record per step and a "figure" record per
// figure: {name, value, unit, tool, ...}; the figures beside the article's go to `measurements`. A missing
// redis-benchmark or pgbench throws EnvironmentError naming what to install; a tool that fails or
// prints no figure throws HarnessError: both end the run with exit status 2, never a held lab.
TrialOutcome run_idem_benchmark(const Scenario& s, const ProbeEnv& env, std::vector<Measurement>& measurements);

}  // namespace relab
