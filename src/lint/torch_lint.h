// The lints of a task whose oracle is PyTorch (oracle = "torch": imported KernelBench and
// robust-kbench tasks): the same filters as lint.h's, over the PyTorch reference's outputs computed
// on the CPU by the bridge (torch/bridge.h), so a config whose outputs are constant (a ReLU dead
// at that size) is found before a search trusts it. Thread-safety: one bridge, one thread.
#pragma once

#include "lint/lint.h"
#include "task/task.h"
#include "torch/bridge.h"

namespace kevo {

// With a running bridge (tests keep one for many tasks).
Result<LintReport> lint_torch_task(torch::TorchBridge& bridge, const Task& task, const LintOptions& opts);
// Starts a bridge of its own (no torch on this machine: the error says so).
Result<LintReport> lint_torch_task(const Task& task, const LintOptions& opts);

}  // namespace kevo
