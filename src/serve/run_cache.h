// What the server keeps of each run between requests, so a page of a run with 10,000 candidates
// does not read 10,000 sources: the candidates without their big texts (prompt, answer, source,
// compile record, verdict; the few figures the summaries need are read once and kept beside each,
// results/candidate_figures.h), and the run's evaluation
// jobs without their payloads. A request brings a run up to date with three small queries (the
// run's row, its totals, its unfinished jobs); new candidates are read one by one by id after the
// last one seen (candidates are written once and never changed), or all again when many arrived.
//
// Thread-safety: any thread; one run's data is used under that run's lock (with_run).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "results/candidate_figures.h"
#include "results/metrics.h"
#include "store/run_db.h"

namespace kevo::serve {

// A job of the evaluation queue without its payload.
struct JobFacts {
  int64_t id = 0, seq = 0;
  store::JobState state = store::JobState::kQueued;
  int attempts = 0;
  std::string worker;
  double created_at = 0, finished_at = 0, lease_until = 0;
  double busy_s = 0;   // the worker's evaluation seconds (from its result)
  std::string device;  // the GPU that evaluated it (from the result's verdict)
};

struct RunData {
  store::RunRow run;
  store::RunTotals totals;
  // Ordered by seq. Slim: prompt, answer, source, rationale and every JSON column are empty; what
  // the figures need of those is in `figures`.
  std::vector<store::CandidateRow> candidates;
  std::vector<results::CandidateFigures> figures;  // parallel to candidates
  std::vector<JobFacts> jobs;         // by id
  uint64_t version = 0;               // changes whenever anything above changes
  // Derived texts (charts) and bench's result, cached until the version changes.
  mutable std::map<std::string, std::string> memo;
  mutable std::optional<results::TaskResult> result;
  int64_t max_candidate_id = 0;
  int full_loads = 0;  // how often every candidate was read (for tests and the docs)
  double totals_at = 0;  // when totals (and so the candidate count) were last read

  // The candidate with this id, or null (an index built on first use, kept as rows are added).
  const store::CandidateRow* find(int64_t id) const;

 private:
  friend class RunCache;  // forgets the index when it reads every row again
  mutable std::unordered_map<int64_t, size_t> index_;
};

// How long a run's totals are trusted: reading them counts every candidate's outcome, which on a
// SQLite file of 10,000 candidates reads past every stored source (about 55 ms). The run's row and
// its jobs are read on every request.
inline constexpr double kTotalsMaxAgeS = 1.0;

class RunCache {
 public:
  // totals_max_age_s: see kTotalsMaxAgeS (0: read them on every request).
  explicit RunCache(store::RunDb& db, double totals_max_age_s = kTotalsMaxAgeS)
      : db_(db), totals_max_age_s_(totals_max_age_s) {}
  // Brings run `id` up to date and calls `fn` with it under the run's lock. An error: the run does
  // not exist or the database failed (store error message).
  Status with_run(int64_t id, const std::function<void(const RunData&)>& fn);
  store::RunDb& db() { return db_; }

 private:
  struct Entry {
    std::mutex mu;
    RunData data;
    bool loaded = false;
  };
  Status refresh(Entry& e, int64_t id);
  Status refresh_candidates(RunData& d, int64_t expected);
  Status refresh_jobs(RunData& d);

  store::RunDb& db_;
  double totals_max_age_s_;
  std::mutex mu_;
  std::map<int64_t, std::unique_ptr<Entry>> entries_;
};

// The slim copy of a candidate (see RunData::candidates).
store::CandidateRow slim(const store::CandidateRow& c);

}  // namespace kevo::serve
