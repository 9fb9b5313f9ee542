// The JSON documents of the API (docs/SERVE.md), which the pages render too: the runs list with
// the campaign's aggregates, a page of a run's candidates (summaries, never sources), one candidate
// in full (source, prompt, answer, verdict, timing, the diff against its parent), a run's events,
// and the lineage tree.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/html.h"
#include "serve/run_cache.h"

namespace kevo::serve {

// Candidates a list page may hold at most (GET .../candidates?limit=).
inline constexpr int64_t kMaxPage = 500;

struct ListQuery {
  int64_t offset = 0, limit = 50;
  bool newest_first = true;
  std::string outcome;  // only candidates with this outcome; "" all, "fail" every outcome but pass
};

// {database, generated_at, runs: [run_brief...], campaign: [...]}: every run brought up to date
// through the cache.
Result<nlohmann::json> runs_doc(RunCache& cache, double now);
// {run, total, offset, limit, order, outcome, candidates: [summary...]}.
nlohmann::json candidates_doc(const RunData& d, const ListQuery& q);
// {run, total, last_id, events: [{id, t, kind, data}]}: events with id > after, oldest first,
// at most `limit` (the newest `limit` when tail is set).
Result<nlohmann::json> events_doc(store::RunDb& db, int64_t run_id, int64_t after, int64_t limit, bool tail = false);

// One candidate, read in full from the database (never cached).
struct CandidateDoc {
  store::CandidateRow row;
  std::string parent_label;   // "parent #12", "baseline", or "" (nothing to compare against)
  std::string parent_source;
  std::vector<report::DiffLine> diff;  // parent_source -> row.source
  nlohmann::json to_json() const;
};
// The candidate `id` of run `run` (an error when it is not that run's) and what it is compared
// against: its first parent, else the task's baseline (TASK_DIR/baseline.cu, when readable here).
Result<CandidateDoc> candidate_doc(store::RunDb& db, const store::RunRow& run, int64_t id);

}  // namespace kevo::serve
