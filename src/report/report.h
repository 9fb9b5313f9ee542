// `kevo report`: one self-contained HTML file (inline CSS and SVG, no script, nothing fetched)
// from one or more run databases or bench results. Charts are SVG written here: best-so-far
// speedup against candidate count per task, the speedup distribution per strategy, validity and
// compile rates, the winner's lineage, its profile diagnosis, and its code beside the baseline with
// a line diff; the LLM verifier's confusion matrix for runs that had one.
// Every figure comes from bench/metrics.h (via bench/table.h), so it matches `kevo bench table`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bench/table.h"
#include "evolve/verifier_matrix.h"

namespace kevo::report {

struct TableData {
  bench::BenchTable table;
  std::map<int64_t, std::vector<store::CandidateRow>> candidates;  // by run id
  std::map<int64_t, std::string> baseline_source;                  // by run id; empty: not found
  std::map<int64_t, evolve::VerifierMatrix> verifier;              // by run id; only runs that had one
};

// Loads every table named by the arguments (database paths, bench JSON files or folders).
Result<std::vector<TableData>> load_report_data(const std::vector<std::string>& db_or_runs);
// The HTML document.
std::string render_html(const std::vector<TableData>& data, const std::string& title = "kevo report");

}  // namespace kevo::report
