// Task-format glue for tasks whose oracle is a PyTorch reference, until the task loader knows the
// keys itself (see docs/INTEROP.md, "Wiring"):
//   oracle = "torch", torch_reference = "reference.py", torch_baseline = "torch_baseline.cu"
// and until it accepts a task without reference.cpp (oracle = "torch") and without baseline.cu
// (before `kevo translate`).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "task/task.h"

namespace kevo::interop {

// The PyTorch-specific part of a task.toml.
struct TorchTaskInfo {
  bool oracle_is_torch = false;
  std::optional<std::filesystem::path> reference;  // torch_reference, resolved against the task dir
  std::optional<std::filesystem::path> baseline;   // torch_baseline, resolved against the task dir
};

// Reads the torch keys from task.toml text (top-level `key = "value"` lines).
Result<TorchTaskInfo> torch_info_from_toml(std::string_view toml_text, const std::filesystem::path& dir);
// The text with the torch keys removed and oracle = "torch" replaced by oracle = "reference", so
// today's parse_task accepts it (for validation and for export).
std::string strip_torch_keys(std::string_view toml_text);
// Loads a task directory that may use the torch keys: parse_task on the stripped text, with no
// requirement for reference.cpp/baseline.cu when the oracle is torch. Plain tasks go through
// load_task unchanged.
Result<Task> load_task_with_torch(const std::filesystem::path& dir, TorchTaskInfo* info = nullptr);

}  // namespace kevo::interop
