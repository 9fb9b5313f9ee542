// The lints of an imported task over its PyTorch oracle's outputs on the CPU (tests of the imports).
#pragma once

#include "interop/oracle.h"
#include "lint/lint.h"
#include "task/task.h"

namespace kevo::interop::testing {

// The lints over the PyTorch oracle's outputs on the CPU, at the smallest configs.
inline Result<LintReport> lint_with_oracle(TorchBridge& b, const Task& task) {
  auto oracle = TorchOracle::create(b, task, task.dir / "reference.py");
  if (!oracle) return oracle.unexpected();
  OutputsFn outputs = [&](const Config& c, const std::vector<HostTensor>& in)
      -> Result<std::vector<std::vector<double>>> {
    auto outs = oracle->outputs(c, in, "cpu");
    if (!outs) return outs.unexpected();
    std::vector<std::vector<double>> v;
    for (const auto& t : *outs) {
      v.emplace_back();
      for (int64_t i = 0; i < t.numel(); ++i) v.back().push_back(t.at(static_cast<size_t>(i)));
    }
    return v;
  };
  LintOptions o;
  o.seeds = 2;
  o.max_configs = 2;
  o.max_elements = 1 << 20;
  return lint_outputs(task, outputs, o);
}

}  // namespace kevo::interop::testing
