// The load labs side by side: one row per strategy (a lab with a generated workload), as a text
// table, as JSON, and as two SVG bar charts (throughput, and p99 latency) for the HTML report.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/outcome.h"

namespace relab {

struct LoadRow {
    std::string id;
    std::string title;
    std::string verdict;   // held / broken / skipped
    int64_t orders = 0;
    LoadStats load;        // trial 1's
    Accounting accounting; // trial 1's
    int64_t role_peak_rss_kb = 0;  // the largest role process, 0 when not measured (the simulator)
};

// Every lab of the report with a generated workload ("generate" with an arrival or job costs), in
// report order; skipped ones are left out.
std::vector<LoadRow> load_rows(const std::vector<LabResult>& labs);

void write_load_table(const std::vector<LoadRow>& rows, std::ostream& out);
nlohmann::json load_table_json(const std::vector<LoadRow>& rows);
// Self-contained <svg> elements: events/s per strategy, and p99 XADD → applied per strategy.
std::string load_throughput_svg(const std::vector<LoadRow>& rows);
std::string load_p99_svg(const std::vector<LoadRow>& rows);

}  // namespace relab
