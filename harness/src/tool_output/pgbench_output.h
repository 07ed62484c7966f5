// Reading pgbench's output: its summary's tps line, the idem-bench lab's PostgreSQL figure beside
// relab's own loop.
#pragma once

#include <optional>
#include <string>

namespace relab {

// The tps figure from pgbench's summary ("tps = 1234.5 (without initial connection time)");
// nullopt when the output has none.
std::optional<double> parse_pgbench_tps(const std::string& out);

}  // namespace relab
