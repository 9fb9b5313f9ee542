// The lints of an imported task over its PyTorch oracle's outputs on the CPU (tests of the imports).
#pragma once

#include "lint/torch_lint.h"
#include "task/task.h"

namespace kevo::interop::testing {

// The lints over the PyTorch oracle's outputs on the CPU, at the smallest configs.
inline Result<LintReport> lint_with_oracle(torch::TorchBridge& b, const Task& task) {
  LintOptions o;
  o.seeds = 2;
  o.max_configs = 2;
  o.max_elements = 1 << 20;
  return lint_torch_task(b, task, o);
}

}  // namespace kevo::interop::testing
