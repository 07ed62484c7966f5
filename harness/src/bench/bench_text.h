// The text `relab bench` prints: the figures as a table (name, iterations, raw figures, ratio,
// target, met) followed by what each one measured, and the --compare table.
#pragma once

#include <string>
#include <vector>

#include "bench/bench_compare.h"
#include "bench/figure.h"

namespace relab {

std::string bench_table(const std::vector<BenchFigure>& figures);
std::string compare_table(const BenchComparison& c);
// "≤ 1.2×", "≥ 100000 /s", "≥ 0.5×": a target as the table shows it.
std::string target_text(const BenchFigure& f);

}  // namespace relab
