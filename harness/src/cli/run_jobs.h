// `relab run --jobs N`: the chosen labs split into N groups, each run by a `relab run` child process
// of its own (its own throwaway servers, or its own namespace on a server given by URL), and their
// JSON reports merged back into the order a --jobs 1 run would have. Processes rather than threads:
// the backends and the interrupt handling are built for one run per process.
#pragma once

#include <cstdint>
#include <optional>
#include <map>
#include <string>
#include <vector>

#include "check/outcome.h"
#include "cli/commands.h"
#include "scenario/scenario.h"

namespace relab {

// --jobs as given: a count >= 1, or 0 / "auto" for the number of cores. Throws std::invalid_argument.
int parse_jobs(const std::string& text);

// A rough estimate of how long a lab runs, in µs, to balance the groups: per trial a fixed cost
// (role processes, setup, checking), the last event's time and the sum of the job costs; per
// session case the fixed cost and its last planned step; servers of the lab's own and a cluster
// add their start. `runs` overrides the file's runs (--runs / --trials).
int64_t estimated_lab_us(const Scenario& s, std::optional<int> runs);

// Longest first onto the least loaded group: at most `jobs` groups, none empty, each group's lab
// indices ascending (the labs keep their order inside a child). Ties go to the lower group.
std::vector<std::vector<size_t>> split_labs(const std::vector<int64_t>& estimates, int jobs);

// The labs one child runs.
struct JobGroup {
    std::vector<size_t> labs;        // indices into the base labs (before --mutant), ascending
    std::vector<std::string> files;  // their scenario files, as paths
    bool orders_apply = false;       // one of them has a generated workload (--orders resizes it)
};

// The argument list (after the executable) of the child that runs `g`, writing its JSON to
// json_path: the parent's options that change what runs (--seed, --runs, --trials, --orders when
// it applies to the group, --backend, --mutant, --redis-url, --pg-url, --scenarios,
// --allow-server-faults) and --quiet;
// the files after "--".
std::vector<std::string> child_run_args(const RunOptions& o, const JobGroup& g, const std::string& json_path);
// The servers' URLs go to a child in $REDIS_URL/$DATABASE_URL, not its argv: a password in a URL
// must not show in ps.
std::map<std::string, std::string> child_run_env(const RunOptions& o);

// The children's labs merged in `expanded` order (the order a --jobs 1 run has), each with its
// scenario as the parent selected it. `base_of[i]` is the base lab expanded lab i came from; the
// report of group k must hold exactly the expanded labs of its base labs, in order. Throws
// HarnessError naming the child when it does not.
std::vector<LabResult> merge_child_labs(const std::vector<Scenario>& expanded, const std::vector<size_t>& base_of,
                                        const std::vector<JobGroup>& groups, std::vector<RunReport> reports);

// Runs the groups as child processes of this executable (`relab run` each, its output in files of
// a temp dir) and returns their reports in group order. Ctrl-C / SIGTERM: forwarded to every
// child, each waited for, the temp dir removed, then Interrupted is thrown. A child that exits
// other than 0 or 1, dies of a signal or leaves no readable JSON stops the others and throws
// HarnessError naming it and its labs, with the tail of its stderr.
std::vector<RunReport> run_job_groups(const RunOptions& o, const std::string& relab_exe,
                                      const std::vector<JobGroup>& groups, bool show_progress);

}  // namespace relab
