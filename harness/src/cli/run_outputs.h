// What `relab run` and `relab merge` write once the labs are done: each lab's text report on stdout,
// the --json file, the per-output files of --out-dir, the load and soak tables, and the summary on
// stderr; and the option errors both commands share.
#pragma once

#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>

#include "check/outcome.h"
#include "cli/commands.h"
#include "report/reporter.h"

namespace relab {

// A bad option or argument: exit 2 with the message.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A report file relab could not write, or not whole: exit 2, since a run whose JSON is missing or cut
// short would vanish from the CI report.
class OutputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// --lang and --timelines as the text reporter takes them; throws UsageError.
TextOptions text_options(const RunOptions& o);
// Before any server starts: --json's folder can be written, --out-dir exists (it is created).
void check_outputs_writable(const RunOptions& o);
// relab's own peak resident set, in kB.
int64_t peak_rss_kb();

// Writes and prints the finished run as o asks (sim: <output>.sim.* files); the exit status: 0 every
// lab held (or a shard's run), 1 one broke, 2 a report could not be written.
int report_run(const RunOptions& o, const TextOptions& topts, RunReport& report, bool sim);

}  // namespace relab
