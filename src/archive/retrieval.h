// Which archived entries a new task's prompts show as examples: the few most similar, by the
// task's features first (op kind, bound, dtypes, size, rank of shapes, the GPU) and then by how much
// of the kernel's vocabulary the entry shares with the task's baseline. Offline: no model, no
// network, only the rows of the run database.
//
// Never shown: an entry whose kernel failed held-out verification; an entry of the same task
// measured on one of its held-out configs; an entry measured by the marker evaluator to a run on a
// GPU (or the reverse). At most one entry per task, so one task's many kernels do not crowd out the
// rest.
//
// Scoring is two stages so that a large archive stays fast: the features of every entry (held in
// an ArchiveIndex, built once per run from the light rows) pick a shortlist, and only the
// shortlist's sources are compared (bench/campaign/retrieval_bench.cpp times both).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "archive/task_features.h"
#include "store/archive_row.h"
#include "store/run_db.h"
#include "util/result.h"

namespace kevo::archive {

struct Query {
  std::string task;
  TaskFeatures features;
  std::vector<std::string> held_out_configs;  // the task's held-out config names
  std::string gpu;
  bool fake = false;     // the run is evaluated by the marker evaluator
  std::string source;    // the task's baseline (source similarity); empty: features alone
};

// One entry's features, read once.
struct IndexedEntry {
  int64_t id = 0;
  std::string task, gpu, config;
  TaskFeatures features;
  store::HeldOut held_out = store::HeldOut::kNotChecked;
  bool fake = false;
  double speedup = 0;
};

class ArchiveIndex {
 public:
  explicit ArchiveIndex(const std::vector<store::ArchiveRow>& rows);  // light rows suffice
  // Ids of up to `n` entries that may be shown, best feature score first.
  std::vector<int64_t> shortlist(const Query& q, size_t n) const;
  size_t size() const { return entries_.size(); }
  const IndexedEntry* find(int64_t id) const;

 private:
  std::vector<IndexedEntry> entries_;
};

// Whether `e` may be shown to the query's run at all (the rules above).
bool allowed(const IndexedEntry& e, const Query& q);
// Similarity of two tasks' features (higher is closer; 0 for nothing in common).
double feature_score(const TaskFeatures& a, const TaskFeatures& b);
// Share of identifiers two sources have in common (Jaccard over their sets), 0..1.
double source_similarity(const std::string& a, const std::string& b);

struct Match {
  store::ArchiveRow entry;
  double score = 0;
};

// The `k` entries to show: the index's shortlist, its full rows read by `load`, ranked by feature
// score plus source similarity, one per task.
Result<std::vector<Match>> retrieve(const ArchiveIndex& index, const Query& q, size_t k,
                                    const std::function<Result<store::ArchiveRow>(int64_t)>& load);
// The same over a run database's archive (its light rows indexed now).
Result<std::vector<Match>> retrieve(store::RunDb& db, const Query& q, size_t k);

}  // namespace kevo::archive
