// Where reference outputs come from, behind one interface: the task's CPU reference (doubles, in the
// checker), the task's trusted baseline (in a kevo-runner of its own), or the task's PyTorch module
// (in the bridge's Python process, on the GPU through the trusted runner's lent buffers). None of
// them ever runs in the candidate's process. Thread-safety: one evaluation, one thread.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "check/compare.h"
#include "check/cpu_reference.h"
#include "run/runner_client.h"
#include "task/task.h"
#include "torch/oracle.h"

namespace kevo {

class Oracle {
 public:
  virtual ~Oracle() = default;
  // Host data: reference outputs for inputs the checker drew.
  virtual Result<std::vector<Expected>> host_outputs(const Config& c, const std::vector<HostTensor>& ins) = 0;
  // Device data: the trusted runner draws the inputs `gins` describes and leaves the reference
  // outputs in its base/out/<name>, where its comparisons read them.
  virtual Status device_outputs(const Config& c, const std::vector<proto::TensorDesc>& gins,
                                const std::vector<proto::TensorDesc>& outs) = 0;
  // Whether device_outputs works here (a trusted runner exists, and for PyTorch, a bridge on CUDA).
  virtual bool on_device() const = 0;
  // Device data, a second opinion: outputs for inputs another runner drew and lent (IPC handles,
  // task order), written into output buffers it lent (kevo eval --oracle-check's second run).
  // Only the PyTorch oracle takes lent buffers.
  virtual Status lent_outputs(const Config& c, const std::vector<torch::DeviceTensor>& ins,
                              const std::vector<torch::DeviceTensor>& outs) {
    (void)ins, (void)outs;
    return fail("this oracle takes no lent buffers (config '{}')", c.name);
  }
  // The PyTorch bridge behind it, reused to time PyTorch after the verdict; nullptr otherwise.
  virtual torch::TorchBridge* bridge() { return nullptr; }
};

std::unique_ptr<Oracle> make_cpu_oracle(const Task& task, CpuReference ref);
// trusted: a runner holding the baseline in slot "base".
std::unique_ptr<Oracle> make_baseline_oracle(const Task& task, RunnerClient& trusted, std::chrono::milliseconds timeout);
// trusted: nullptr for the host path (the bridge gets .npy files).
std::unique_ptr<Oracle> make_torch_oracle(torch::TorchBridge bridge, const Task& task, RunnerClient* trusted,
                                          std::string device, std::chrono::milliseconds timeout, Status* error);

}  // namespace kevo
