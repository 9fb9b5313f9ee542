// What a queued evaluation carries to a `kevo worker` on another host, and what comes back: the
// task's files (content-addressed blobs in the run database, so workers need no shared
// filesystem), the candidate's source, the evaluation options; back, the verdict's JSON.
// Thread-safety: pure functions, except those that read or write the store (RunDb is thread-safe).
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "check/evaluator.h"
#include "evolve/eval_pool.h"
#include "store/run_db.h"
#include "task/task.h"

namespace kevo::evolve {

// A task directory larger than this is refused (a task is a few source files, not a dataset).
inline constexpr uint64_t kMaxTaskBytes = 64ull << 20;

// The task's files as {"name", "files": [{"path", "sha256"}]}, each file stored as a blob; the
// manifest's own hash names the task's copy on a worker.
Result<nlohmann::json> upload_task(store::RunDb& db, const Task& task);
// The task rebuilt from its manifest under `root`/<manifest hash>/ (reused when already there)
// and loaded. A blob missing or not matching its hash is an error naming the file.
Result<Task> download_task(store::RunDb& db, const nlohmann::json& manifest, const std::filesystem::path& root);

nlohmann::json eval_options_json(const EvalOptions& o);
Result<EvalOptions> eval_options_from(const nlohmann::json& j);

struct JobPayload {
  EvalKind kind = EvalKind::kCandidate;
  nlohmann::json task;         // upload_task's manifest
  std::string source_sha256;   // the candidate's source blob (kCandidate)
  std::string file_name;       // e.g. "cand12.cu", for messages and the worker's copy
  EvalOptions opts;
  bool fake = false;           // the run uses the fake (marker) evaluator: only fake workers may take it
  nlohmann::json to_json() const;
  static Result<JobPayload> from_json(const nlohmann::json& j);
};

// What a worker writes as the job's result: {"verdict": ..., "busy_s", "worker"}.
struct JobResult {
  Verdict verdict;
  double busy_s = 0;
  std::string worker;
  nlohmann::json to_json() const;
  static Result<JobResult> from_json(const nlohmann::json& j);
};

}  // namespace kevo::evolve
