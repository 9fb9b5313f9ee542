// `kevo report`: one self-contained HTML file (inline CSS and SVG, no script, nothing fetched)
// from one or more run databases or bench results. Charts are SVG written here: best-so-far
// speedup against candidate count per task, the speedup distribution per strategy, validity and
// compile rates, the winner's lineage, its profile diagnosis, and its code beside the baseline with
// a line diff; the LLM verifier's confusion matrix for runs that had one; the agent episode a
// winner came from, turn by turn.
// Every figure comes from results/metrics.h (via results/table.h), so it matches `kevo bench table`.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "results/episode_view.h"
#include "results/table.h"
#include "results/verifier_matrix.h"

namespace kevo::report {

struct TableData {
  results::BenchTable table;
  std::map<int64_t, std::vector<store::CandidateRow>> candidates;  // by run id
  std::map<int64_t, std::string> baseline_source;                  // by run id; empty: not found
  std::map<int64_t, results::VerifierMatrix> verifier;             // by run id; only runs that had one
  std::map<int64_t, std::string> winner_profile;  // by run id: the winner's profile diagnosis, if any
  std::map<int64_t, std::vector<results::EpisodeView>> episodes;  // by run id; only runs that had some
};

// The rule-based reading of a stored verdict's profile, in one line (empty: nothing to say). The
// rules read the checker's profile type, a layer above the report, so the caller passes them in
// (evolve/task_context.h profile_advice).
using ProfileAdvisor = std::function<std::string(const std::string& verdict_json)>;

// Loads every table named by the arguments (database paths, bench JSON files or folders); without
// an advisor the winners' profiles are not read.
Result<std::vector<TableData>> load_report_data(const std::vector<std::string>& db_or_runs,
                                                const ProfileAdvisor& advise = {});
// The HTML document.
std::string render_html(const std::vector<TableData>& data, const std::string& title = "kevo report");

}  // namespace kevo::report
