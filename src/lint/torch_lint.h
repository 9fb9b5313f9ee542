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

// A config on which a kernel that does not compute the op passes: its failing findings.
struct DegenerateConfig {
  std::string config, why;
};

// Lints each of `configs` on its own and returns those on which a constant (tiny_band), another
// draw's outputs (seed_constant), an ignored input (input_unused) or a NaN reference (nonfinite)
// passes; uniform_axis stays a lint warning (a broadcast slice can be the op's own shape).
Result<std::vector<DegenerateConfig>> degenerate_configs(torch::TorchBridge& bridge, const Task& task,
                                                         const std::vector<std::string>& configs, LintOptions opts);

}  // namespace kevo
