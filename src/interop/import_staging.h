// Writing an imported task: into a staging folder next to the destination, then moved into place,
// so that a failed import leaves no half-written task behind (docs/INTEROP.md).
#pragma once

#include <filesystem>
#include <string>

#include "torch/bridge.h"
#include "util/result.h"

namespace kevo::interop {

// out_dir/.<name>.importing.<pid>, empty; an error when out_dir/<name> exists and !overwrite.
Result<std::filesystem::path> make_staging(const std::filesystem::path& out_dir, const std::string& name,
                                           bool overwrite);
// Replaces final_dir by staging.
Status publish(const std::filesystem::path& staging, const std::filesystem::path& final_dir);
// task.toml and torch.json (the bridge-side description of the reference).
Status write_task_files(const std::filesystem::path& staging, const std::string& toml, const torch::ojson& sidecar);

// Removes the staging folder unless released (an import that fails on the way).
class StagingGuard {
 public:
  explicit StagingGuard(std::filesystem::path dir) : dir_(std::move(dir)) {}
  StagingGuard(const StagingGuard&) = delete;
  StagingGuard& operator=(const StagingGuard&) = delete;
  ~StagingGuard();
  void release() { dir_.clear(); }

 private:
  std::filesystem::path dir_;
};

}  // namespace kevo::interop
