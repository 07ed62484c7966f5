// `relab merge`: the reports of a run's N shards (`relab run --shard K/N`) combined into the report
// one runner would have written: every lab's trials together in trial order, cut where a racy lab's
// sequential rule (until_wrong) would have stopped, the histories one run would have kept, and the
// counts, rates, intervals, failing seeds and verdicts computed again over all trials.
#pragma once

#include <vector>

#include "check/outcome.h"

namespace relab {

// Throws std::runtime_error saying what is wrong and what to do: a shard missing or given twice,
// shards of different runs (seed, commit, labs), a trial missing from every shard.
RunReport merge_shards(std::vector<RunReport> shards);

}  // namespace relab
