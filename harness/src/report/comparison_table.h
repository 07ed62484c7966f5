// Comparison tables across the labs of one run: labs that name the same `compare.table` are rows
// of one table (wrong/trials, the rate and its 95% Wilson interval), after the article's pooled
// figures when a lab gives them. As text (stdout, comparison-<table>.txt), JSON, Markdown and HTML.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/outcome.h"

namespace relab {

struct ComparisonRow {
    std::string label;
    std::string lab;      // the lab's id; empty for the article's row
    std::string backend;  // "real", "sim"; empty for the article's row
    int wrong = 0;
    int trials = 0;
    double rate = 0;
    double low = 0;
    double high = 1;
};

// What the article's row names in place of a lab: its figures are the article's, their pooling relab's.
inline constexpr const char* k_article_row_source = "the article's runs, pooled by relab";

struct ComparisonTable {
    std::string name;
    std::vector<ComparisonRow> rows;  // the article's first (when given), then the labs in run order
};

// The tables of a run's labs (a mutant is never a row), each with at least two rows, in the order
// their first lab ran. A lab's wrong/trials are over its planned trials only: the trials an
// `until_wrong` adds stop at the first wrong one, which would bias the rate.
std::vector<ComparisonTable> comparison_tables(const std::vector<LabResult>& labs);

void write_comparison_table(const ComparisonTable& table, std::ostream& out);

// A lab's throughput beside the arrangement it ran beside in the same run (`beside`), as one
// English sentence for the HTML and Markdown reports: "throughput N jobs/s (median of T trial(s));
// beside it, <name> on the same workload in the same run: M jobs/s (…); this lab's is Rx it"; empty
// when the lab has no such figure. The text report words it in its own language.
std::string beside_throughput_text(const LabResult& lab);
nlohmann::json comparison_table_json(const ComparisonTable& table);

}  // namespace relab
