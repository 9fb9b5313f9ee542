// Baselines verified once: a task's baseline checked against its reference and timed is
// recorded under a key of everything that could change that verdict: the task's files, the GPUs
// (model and driver), the CUDA toolkit, and kevo itself (the kevo and kevo-runner executables, by
// content). A later run with the same key reuses the record and says so, instead of spending the
// baseline's check (tens of seconds for a big task) again; any change to any part re-verifies.
// Records live in <cache>/baselines/<key digest>.json (one small file each).
// Thread-safety: free functions; concurrent writers of one record write the same bytes atomically.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "task/task.h"
#include "util/result.h"

namespace kevo::evolve {

struct BaselineKey {
  std::string task_sha256;  // the task directory's files, by path and content
  std::string gpus;         // "NVIDIA H100 80GB HBM3 (driver 580.95)", sorted, one per model
  std::string toolkit;      // "CUDA 13.0"
  std::string kevo;         // sha256 of the kevo and kevo-runner executables
  nlohmann::json to_json() const;
  std::string digest() const;
};

// The key for `task` on this machine; an error when a part cannot be known (no GPU listed, a
// file unreadable): then nothing is reused or recorded.
Result<BaselineKey> baseline_key(const Task& task, const std::string& toolkit);

struct BaselineRecord {
  nlohmann::json summary;  // the engine's baseline summary (outcome, time, GPU, arch, SOL)
  double verified_at = 0;  // unix seconds
};

std::optional<BaselineRecord> load_baseline_record(const BaselineKey& key, const std::filesystem::path& dir);
Status save_baseline_record(const BaselineKey& key, const nlohmann::json& summary, const std::filesystem::path& dir);

// <cache>/baselines
std::filesystem::path baseline_record_dir();

}  // namespace kevo::evolve
