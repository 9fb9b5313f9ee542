// A task's PyTorch side timed through the bridge, for the results table: the torch_reference
// eager and under torch.compile, and the task's torch_baseline (an EvoEngineer / AI CUDA Engineer
// PyTorch extension) when it has one, all on the main config and on the very inputs kevo generated
// for its own timing. Each mode is a bridge request of its own with its own deadline, so a mode
// that fails, hangs or kills the bridge costs that mode only (the bridge is restarted for the
// next); its error is a value in the result.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "task/task.h"
#include "task/tensor.h"
#include "torch/bridge.h"
#include "torch/time_result.h"

namespace kevo::torch {

struct TorchTimingOptions {
  std::string device = "cuda";  // "cpu" times with time.perf_counter (tests, CPU-only machines)
  bool compile = true;          // also torch.compile
  bool extension = true;        // also the task's torch_baseline, when it names one
  int warmup = 3, min_reps = 10, max_reps = 1000;
  double budget_s = 4.0;        // per mode
  // Deadlines per mode, on top of budget_s: torch.compile compiles on its first call, and an
  // extension is built with nvcc on torch/extension.h (a minute or more).
  std::chrono::milliseconds eager_timeout{std::chrono::minutes(3)};
  std::chrono::milliseconds compile_timeout{std::chrono::minutes(15)};
  std::chrono::milliseconds extension_timeout{std::chrono::minutes(20)};
  std::filesystem::path build_root;  // extension builds; empty: cache_dir()/torch_extensions
  BridgeOptions bridge;              // for a bridge started here
};

// Times the task's PyTorch side on `inputs` (the main config's, in task order: arguments, then
// weights; scalars are the task's). `bridge`: an already started bridge to use (the checker's
// oracle bridge), else one is started and stopped here. The reference is loaded anew with the
// main config's sizes.
// Errors (nothing could be timed): the task has no torch_reference; no Python with torch
// (ErrorCode::kNoTorch); device "cuda" and torch sees no GPU ("no CUDA: ...", ErrorCode::kNoCuda);
// the bridge does not start; the reference does not load. Everything else is per mode.
Result<TimeResult> time_torch(const Task& task, const std::vector<HostTensor>& inputs,
                              const TorchTimingOptions& opts = {}, TorchBridge* bridge = nullptr);

// The same on inputs that lie in kevo's oracle runner (IPC handles; the fake runner's files on
// device "cpu"): used in place by the bridge, so no tensor crosses the host. A bridge restarted
// after a mode killed it opens them again; they must stay exported until this returns.
Result<TimeResult> time_torch_on_device(const Task& task, const std::vector<DeviceTensor>& inputs,
                                        const TorchTimingOptions& opts = {}, TorchBridge* bridge = nullptr);

// The same on inputs generated here for the main config from `seed` (kevo bench).
Result<TimeResult> time_torch_main(const Task& task, uint64_t seed, const TorchTimingOptions& opts = {},
                                   TorchBridge* bridge = nullptr);

// Whether an error of time_torch means this machine cannot time PyTorch at all (its code is
// kNoTorch or kNoCuda): callers skip with a note instead of reporting a failure.
bool torch_unavailable(const Error& e);

}  // namespace kevo::torch
