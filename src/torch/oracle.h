// The PyTorch oracle for the checker: reference outputs of a task config computed by the bridge.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "task/task.h"
#include "task/tensor.h"
#include "torch/bridge.h"

namespace kevo::torch {

// The dims a task's PyTorch reference defines as top-level sizes: task.dir/torch.json's size_dims
// when present (imported tasks), else all of the task's dims.
Result<std::vector<std::string>> torch_size_dims(const Task& task);

class TorchOracle {
 public:
  // `reference`: the task's torch_reference file. The size dims (those the reference's top-level
  // assignments define) come from task.dir/torch.json when present, else all of the task's dims.
  static Result<TorchOracle> create(TorchBridge& bridge, const Task& task,
                                    const std::filesystem::path& reference);
  // Outputs for `inputs` (task order: arguments, then weights) on `device` ("cpu" or "cuda"),
  // checked against the task's output dtypes and numels and given the task's output shapes and
  // names. Reloads the reference only when the config changes.
  Result<std::vector<HostTensor>> outputs(const Config& c, const std::vector<HostTensor>& inputs,
                                          const std::string& device = "cpu");
  // The device data plane: `inputs` lie in kevo's oracle runner (IPC handles, task order) and the
  // outputs are written into `outputs` there (the task's outputs, in order), where the runner's
  // comparisons read them; the bridge checks the reference's dtypes and numels against them.
  Status outputs_into(const Config& c, const std::vector<DeviceTensor>& inputs,
                      const std::vector<DeviceTensor>& outputs, const std::string& device = "cuda");

 private:
  Status load_for(const Config& c);
  TorchOracle(TorchBridge& b, const Task& t) : bridge_(&b), task_(&t) {}
  TorchBridge* bridge_;
  const Task* task_;
  std::filesystem::path reference_;
  std::vector<std::string> size_dims_;
  std::string loaded_config_;
  bool loaded_ = false;
};

}  // namespace kevo::torch
