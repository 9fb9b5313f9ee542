#include "lint/torch_lint.h"

#include "torch/oracle.h"

namespace kevo {

Result<LintReport> lint_torch_task(torch::TorchBridge& bridge, const Task& task, const LintOptions& opts) {
  auto oracle = torch::TorchOracle::create(bridge, task, task.torch_reference_path());
  if (!oracle) return oracle.unexpected();
  OutputsFn outputs = [&](const Config& c, const std::vector<HostTensor>& in)
      -> Result<std::vector<std::vector<double>>> {
    auto outs = oracle->outputs(c, in, "cpu");
    if (!outs) return outs.unexpected();
    std::vector<std::vector<double>> v;
    for (const auto& t : *outs) {
      v.emplace_back();
      v.back().reserve(static_cast<size_t>(t.numel()));
      for (int64_t i = 0; i < t.numel(); ++i) v.back().push_back(t.at(static_cast<size_t>(i)));
    }
    return v;
  };
  return lint_outputs(task, outputs, opts);
}

Result<LintReport> lint_torch_task(const Task& task, const LintOptions& opts) {
  auto bridge = torch::TorchBridge::start();
  if (!bridge) return bridge.unexpected();
  return lint_torch_task(*bridge, task, opts);
}

Result<std::vector<DegenerateConfig>> degenerate_configs(torch::TorchBridge& bridge, const Task& task,
                                                         const std::vector<std::string>& configs, LintOptions opts) {
  static const char* kShortcuts[] = {"nonfinite", "tiny_band", "seed_constant", "input_unused"};
  std::vector<DegenerateConfig> out;
  for (const auto& name : configs) {
    opts.configs = {name};
    auto rep = lint_torch_task(bridge, task, opts);
    if (!rep) return rep.unexpected();
    std::string why;
    for (const auto& f : rep->findings)
      for (const char* check : kShortcuts)
        if (f.check == check && f.severity == Severity::Fail)
          why += fmt::format("{}{} {}", why.empty() ? "" : "; ", f.check, f.message);
    if (!why.empty()) out.push_back({name, why});
  }
  return out;
}

}  // namespace kevo
