#include "lint/torch_lint.h"

#include <map>

#include "lint/key_list.h"
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

namespace {

// One config's shortcuts: the failing findings of the output checks, and the inputs it ignores.
struct Shortcuts {
  std::string outputs;                                // "" when none passes
  std::map<std::string, std::string> ignored_inputs;  // key -> the finding's message
};

Shortcuts shortcuts_of(const LintReport& rep) {
  Shortcuts s;
  for (const auto& f : rep.findings) {
    if (f.severity != Severity::Fail) continue;
    if (f.check == "nonfinite" || f.check == "tiny_band" || f.check == "seed_constant")
      s.outputs += fmt::format("{}{} {}", s.outputs.empty() ? "" : "; ", f.check, f.message);
    else if (f.check == "input_unused")
      for (const auto& k : f.keys) s.ignored_inputs[k] = f.message;
  }
  return s;
}

}  // namespace

Result<ConfigVet> vet_configs(torch::TorchBridge& bridge, const Task& task, const std::vector<std::string>& configs,
                              LintOptions opts) {
  std::map<std::string, Shortcuts> by_config;
  std::map<std::string, int> ignored_on;  // input key -> configs that ignore it
  size_t degenerate = 0;
  for (const auto& name : configs) {
    opts.configs = {name};
    auto rep = lint_torch_task(bridge, task, opts);
    if (!rep) return rep.unexpected();
    Shortcuts s = shortcuts_of(*rep);
    // Outputs a constant passes make every input look ignored: that config says nothing of them.
    if (!s.outputs.empty()) {
      ++degenerate;
      s.ignored_inputs.clear();
    }
    for (const auto& [k, m] : s.ignored_inputs) ++ignored_on[k];
    by_config[name] = std::move(s);
  }
  std::vector<std::string> sound_names;  // the configs whose outputs no constant passes
  for (const auto& name : configs)
    if (by_config[name].outputs.empty()) sound_names.push_back(name);
  const int sound = static_cast<int>(sound_names.size());
  // One config alone may be degenerate by its size (a subtracted constant above every value of a
  // small matmul); two or more, all of them, say the task is.
  if (configs.size() >= 2 && degenerate == configs.size())
    return fail("degenerate on every config checked ({}): {}", fmt::join(configs, ", "), by_config[configs.front()].outputs);
  ConfigVet v;
  std::vector<std::string> never;  // inputs no sound config reads
  for (const auto& [k, n] : ignored_on)
    if (n == sound) never.push_back(k);
  if (!never.empty())
    v.notes.push_back(fmt::format("{} {} the outputs on no config checked ({}): the op ignores {}, or {} effect is "
                                  "within the tolerance; a kernel that ignores {} passes too",
                                  key_list(never), never.size() == 1 ? "changes" : "change", fmt::join(sound_names, ", "),
                                  never.size() == 1 ? "it" : "them", never.size() == 1 ? "its" : "their",
                                  never.size() == 1 ? "it" : "them"));
  for (const auto& name : configs) {
    const Shortcuts& s = by_config[name];
    std::string why = s.outputs;
    std::vector<std::string> here;
    for (const auto& [k, m] : s.ignored_inputs)
      if (ignored_on[k] < sound) here.push_back(k);
    if (!here.empty()) why += fmt::format("{}input_unused {} can be ignored here", why.empty() ? "" : "; ", key_list(here));
    if (!why.empty()) v.drop.push_back({name, why});
  }
  return v;
}

}  // namespace kevo
