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

// What an import does with a task's configs (docs/INTEROP.md, `kevo import kernelbench` step 8).
struct ConfigVet {
  std::vector<DegenerateConfig> drop;  // a shortcut passes there and not on every config checked
  std::vector<std::string> notes;      // an input that changes the outputs on none of them (kept)
};

// Lints each of `configs` on its own. A config on which a constant (tiny_band), another draw's
// outputs (seed_constant) or a NaN reference (nonfinite) passes is dropped; when that holds on
// every one of two or more, the task is degenerate: an error. An input the outputs ignore (input_unused)
// on some configs drops those; on all of them it is the op's own (training-mode batch norm reads
// no running stats), so the configs stay and a note says a kernel may ignore it too.
// uniform_axis stays a lint warning (a broadcast slice can be the op's own shape).
Result<ConfigVet> vet_configs(torch::TorchBridge& bridge, const Task& task, const std::vector<std::string>& configs,
                              LintOptions opts);

}  // namespace kevo
