#include "interop/import_backward.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "interop/backward_reference.h"
#include "interop/import_staging.h"
#include "interop/import_toml.h"
#include "task/backward.h"
#include "task/dtype.h"
#include "util/enum_text.h"
#include "util/fs.h"

namespace kevo::interop {
namespace fs = std::filesystem;

// The smallest atol any imported gradient gets: kevo's f32 default (docs/TASK_FORMAT.md).
constexpr double kDefaultGradientAtol = 1e-4;

namespace {

// Printed beside each forward task `kevo import kernelbench --backward` writes: a value's text never changes.
constexpr EnumText<BackwardSkip> kBackwardSkipTexts[] = {
    {BackwardSkip::kNonFloatOutput, "non_float_output"},
    {BackwardSkip::kNoGradTarget, "no_grad_target"},
    {BackwardSkip::kDisconnected, "disconnected"},
    {BackwardSkip::kInplace, "inplace"},
    {BackwardSkip::kNotModule, "not_module"},
};

// The bridge's grad_probe verdicts (python/kevo_bridge).
constexpr EnumText<GradProbe::Verdict> kGradVerdictTexts[] = {{GradProbe::Verdict::kOk, "ok"},
                                                              {GradProbe::Verdict::kDisconnected, "disconnected"},
                                                              {GradProbe::Verdict::kInplace, "inplace"},
                                                              {GradProbe::Verdict::kUnknown, "unknown"}};

}  // namespace

std::string to_string(BackwardSkip s) { return enum_text(kBackwardSkipTexts, s, "unknown"); }

Result<GradProbe> parse_grad_probe(const torch::ojson& r) {
  GradProbe p;
  const std::string v = r.value("verdict", "");
  const auto verdict = enum_parse(kGradVerdictTexts, v);
  if (!verdict) return fail("grad_probe: unknown verdict '{}'", v);
  p.verdict = *verdict;
  p.error = r.value("error", "");
  if (r.contains("args") && r["args"].is_array())
    for (const auto& a : r["args"]) p.args.push_back(a.is_boolean() && a.get<bool>());
  if (r.contains("weights") && r["weights"].is_array())
    for (const auto& w : r["weights"])
      if (w.is_string()) p.weights.push_back(w.get<std::string>());
  return p;
}

std::optional<BackwardSkipped> static_backward_skip(const torch::Description& fwd) {
  if (fwd.style == "function")
    return BackwardSkipped{BackwardSkip::kNotModule, "a functional file (module_fn, no Model class)"};
  for (const auto& o : fwd.outputs)
    if (!is_float(o.dtype))
      return BackwardSkipped{BackwardSkip::kNonFloatOutput,
                             fmt::format("output '{}' is {}: no gradient flows into it", o.name, dtype_name(o.dtype))};
  for (const auto& a : fwd.args)
    if (!a.scalar && is_float(a.tensor.dtype)) return std::nullopt;
  for (const auto& w : fwd.weights)
    if (w.kind == "parameter" && is_float(w.dtype)) return std::nullopt;
  return BackwardSkipped{BackwardSkip::kNoGradTarget, "no floating-point tensor input and no floating-point parameter"};
}

std::optional<BackwardSkipped> probe_backward_skip(const GradProbe& p) {
  switch (p.verdict) {
    case GradProbe::Verdict::kDisconnected:
      return BackwardSkipped{BackwardSkip::kDisconnected,
                             "no output depends on a floating-point input or parameter through autograd"};
    case GradProbe::Verdict::kInplace:
      return BackwardSkipped{BackwardSkip::kInplace, "modified in place after autograd saved it: " + p.error};
    case GradProbe::Verdict::kOk:
      if (std::none_of(p.args.begin(), p.args.end(), [](bool b) { return b; }) && p.weights.empty())
        return BackwardSkipped{BackwardSkip::kDisconnected, "no output depends on an input or parameter"};
      return std::nullopt;
    case GradProbe::Verdict::kUnknown: return std::nullopt;
  }
  return std::nullopt;
}

SumsOverTerms sums_over_terms(const std::vector<std::vector<std::string>>& axes, size_t target) {
  SumsOverTerms t;
  std::set<std::string> own(axes[target].begin(), axes[target].end());
  std::set<std::vector<std::string>> seen{{}};
  auto add = [&](std::vector<std::pair<size_t, size_t>> ps) {
    std::vector<std::string> key;
    for (const auto& [i, j] : ps) key.push_back(axes[i][j]);
    std::sort(key.begin(), key.end());
    if (seen.insert(key).second) t.products.push_back(std::move(ps));
  };
  for (size_t i = 0; i < axes.size(); ++i) {
    if (i == target) continue;
    std::vector<std::pair<size_t, size_t>> ps;
    std::set<std::string> in;
    for (size_t j = 0; j < axes[i].size(); ++j)
      if (axes[i][j] != "1" && !own.count(axes[i][j]) && in.insert(axes[i][j]).second) ps.emplace_back(i, j);
    add(std::move(ps));
  }
  const auto& a = axes[target];
  std::vector<std::pair<size_t, size_t>> ps;
  for (size_t j = a.size() >= 2 ? 1 : 0; j < a.size(); ++j)
    if (a[j] != "1") ps.emplace_back(target, j);
  add(std::move(ps));
  return t;
}

std::string sums_over_text(const SumsOverTerms& t, const std::vector<std::vector<std::string>>& axes) {
  std::string e;
  for (const auto& ps : t.products) {
    std::string s;
    for (const auto& [i, j] : ps) s += (s.empty() ? "" : "*") + paren(axes[i][j]);
    e = e.empty() ? s : fmt::format("max({}, {})", e, s);
  }
  return e.empty() ? "1" : e;
}

double sums_over_value(const SumsOverTerms& t, const std::function<double(size_t, size_t)>& extent) {
  double m = 1;
  for (const auto& ps : t.products) {
    double v = 1;
    for (const auto& [i, j] : ps) v *= extent(i, j);
    m = std::max(m, v);
  }
  return m;
}

double gradient_atol(double terms) {
  double a = std::max(kDefaultGradientAtol, reduction_atol(terms));
  double scale = std::pow(10.0, std::floor(std::log10(a)) - 1);
  return std::ceil(a / scale) * scale;
}

void adopt_forward(ProblemShape& p, const ProblemShape& fwd) {
  for (auto& a : p.base.args)
    for (const auto& fa : fwd.base.args)
      if (a.name == fa.name) a.tensor.stats = fa.tensor.stats;  // saved: the forward's distribution
  for (auto& w : p.base.weights)
    for (const auto& fw : fwd.base.weights)
      if (w.name == fw.name) w.stats = fw.stats;
  p.stats_dims = fwd.stats_dims;
  // Derived dims of incoming gradients (`grad_out_d2`) take the forward's names (`out_d2`), so the
  // backward task declares every dim of its forward.
  std::set<std::string> fwd_dims(fwd.dims.begin(), fwd.dims.end());
  for (auto& d : p.dims) {
    if (d.rfind("grad_", 0) != 0 || !fwd_dims.count(d.substr(5))) continue;
    std::string to = d.substr(5);
    for (auto& cf : p.configs) {
      cf.dims[to] = cf.dims.at(d);
      cf.dims.erase(d);
    }
    for (auto& slot : p.axes)
      for (auto& a : slot)
        if (a.derived == d) a.derived = to;
    d = to;
  }
}

namespace {

// The gradients a backward task outputs: kevo names of the forward's arguments, then parameters.
struct GradTargets {
  BackwardSignature sig;
  std::vector<std::string> of;
};

GradTargets grad_targets(const ProblemShape& fwd, const GradProbe& probe) {
  GradTargets t;
  bool all = probe.verdict != GradProbe::Verdict::kOk;  // unknown: every candidate
  std::vector<bool> arg_grads;
  for (size_t i = 0; i < fwd.base.args.size(); ++i) {
    const auto& a = fwd.base.args[i];
    t.sig.args.push_back(a.name);
    bool g = !a.scalar && is_float(a.tensor.dtype) && (all || (i < probe.args.size() && probe.args[i]));
    arg_grads.push_back(g);
    if (g) t.of.push_back(a.name);
  }
  t.sig.arg_grads = arg_grads;
  for (const auto& o : fwd.base.outputs) t.sig.grad_outputs.push_back("grad_" + o.name);
  for (const auto& w : fwd.base.weights) {
    bool reached = std::find(probe.weights.begin(), probe.weights.end(), w.path) != probe.weights.end();
    if (w.kind != "parameter" || !is_float(w.dtype) || !(all || reached)) continue;
    t.sig.parameters.push_back(w.path);
    t.of.push_back(w.name);
  }
  return t;
}

// Names the gradients, writes the [backward] table (sums_over per gradient, sums_over_terms) and the
// tolerance that covers the largest sum on every config.
Status adjust_backward(ProblemShape& p, TaskHeader& h, const ProblemShape& fwd, const std::string& fwd_name,
                       const std::vector<std::string>& of) {
  if (p.base.outputs.size() != of.size())
    return fail("{}: the backward module returns {} gradients, expected {} ({})", h.source_label,
                p.base.outputs.size(), of.size(), fmt::join(of, ", "));
  for (size_t i = 0; i < of.size(); ++i) {
    std::string key = "out:" + p.base.outputs[i].name;
    p.base.outputs[i].name = "grad_" + of[i];
    for (auto& s : p.base_slots)
      if (s.key == key) s.name = "grad_" + of[i];
  }
  adopt_forward(p, fwd);
  std::vector<size_t> inputs;  // slots of the forward's tensors: saved inputs and incoming gradients
  std::vector<std::vector<std::string>> axes;
  for (size_t i = 0; i < p.base_slots.size(); ++i) {
    if (p.base_slots[i].key.rfind("out:", 0) == 0) continue;
    inputs.push_back(i);
    axes.emplace_back();
    for (const auto& a : p.axes[i]) axes.back().push_back(axis_expr(a, p.sizes));
  }
  std::vector<std::string> saved, grads, table;
  for (const auto& a : fwd.base.args)
    if (!a.scalar) saved.push_back(toml_string(a.name));
  for (const auto& w : fwd.base.weights) saved.push_back(toml_string(w.name));
  for (const auto& o : fwd.base.outputs) grads.push_back(fmt::format("grad_{} = {}", o.name, toml_string(o.name)));
  double terms = 1;
  for (const auto& t : of) {
    size_t k = 0;
    while (k < inputs.size() && p.base_slots[inputs[k]].name != t) ++k;
    if (k == inputs.size()) return fail("{}: no input of the backward task is '{}'", h.source_label, t);
    SumsOverTerms st = sums_over_terms(axes, k);
    for (const auto& cf : p.configs)
      terms = std::max(terms, sums_over_value(st, [&](size_t i, size_t j) {
                         return static_cast<double>(eval_axis(p.axes[inputs[i]][j], cf.dims));
                       }));
    table.push_back(fmt::format("  {{ output = \"grad_{}\", of = \"{}\", sums_over = {} }},\n", t, t,
                                toml_string(sums_over_text(st, axes))));
  }
  double atol = gradient_atol(terms);
  h.extra_toml = fmt::format(
      "# sums_over: the largest product of the axes another tensor has and the gradient's tensor lacks,\n"
      "# or of its own axes after the first (docs/INTEROP.md); the tolerance covers it on every config.\n"
      "[backward]\nof = {}\nsaved = [{}]\ngrad_outputs = {{ {} }}\ngradients = [\n{}]\n\n"
      "[tolerance]\nf32 = {{ atol = {:.2g}, rtol = 1e-4 }}\n",
      toml_string(fwd_name), fmt::join(saved, ", "), fmt::join(grads, ", "), fmt::join(table, ""), atol);
  if (atol > kDefaultGradientAtol)
    p.notes.push_back(fmt::format("tolerance atol {:.2g} for sums of up to {:.0f} terms", atol, terms));
  return {};
}

Result<ImportedTask> write_backward(torch::TorchBridge& b, const fs::path& file, const std::string& name,
                                    const std::string& fwd_name, const ProblemShape& fwd, const GradTargets& t,
                                    const ImportOptions& o) {
  auto source = read_file(file);
  if (!source) return source.unexpected();
  std::string ref = backward_module_source(
      *source, t.sig,
      "# ---- the backward pass (`kevo import kernelbench --backward`) ----\n"
      "# Gradients by torch.autograd through the module above, of: " + fmt::format("{}", fmt::join(t.of, ", ")) +
          ".\n# Inputs: the forward's arguments and weights, then the incoming gradient of each output.\n");
  auto staging = make_staging(o.out_dir, name, o.overwrite);
  if (!staging) return staging.unexpected();
  StagingGuard guard(*staging);
  KEVO_TRY(write_file_atomic(*staging / "reference.py", ref));
  auto p = analyze_problem(b, *staging / "reference.py", file.string(), o.seed);
  if (!p) return p.unexpected();
  TaskHeader h{name, o.category.empty() ? guess_category(fwd_name, *source) : o.category,
               fmt::format("Imported from the KernelBench problem file {}: the backward pass of {}, gradients "
                           "by torch.autograd through the module's PyTorch code.",
                           file.filename().string(), fwd_name),
               file.string(), ref, "", o.flops};
  KEVO_TRY(adjust_backward(*p, h, fwd, fwd_name, t.of));
  p->notes.push_back(fmt::format("gradients of: {}", fmt::join(t.of, ", ")));
  TaskText text = write_task_text(*p, h);
  KEVO_TRY(write_task_files(*staging, text.toml, text.sidecar));
  KEVO_TRY(publish(*staging, o.out_dir / name));
  guard.release();
  return ImportedTask{name, o.out_dir / name, p->notes, std::nullopt};
}

}  // namespace

BackwardImport import_kernelbench_backward(torch::TorchBridge& b, const fs::path& file, const std::string& fwd_name,
                                           const ProblemShape& fwd, const ImportOptions& o) {
  BackwardImport out;
  if (auto s = static_backward_skip(fwd.base)) {
    out.skipped = *s;
    return out;
  }
  std::string name = fwd_name + "_backward";
  auto probe = [&]() -> Result<GradProbe> {
    KEVO_TRY(b.load(file, {}, o.seed, true));
    auto r = b.request({{"op", "grad_probe"}});
    if (!r) return r.unexpected();
    return parse_grad_probe(*r);
  }();
  if (!probe) {
    out.task = fail("{}: backward task {} not imported: {}", file.string(), name, probe.error().message);
    return out;
  }
  if (auto s = probe_backward_skip(*probe)) {
    out.skipped = *s;
    return out;
  }
  GradTargets t = grad_targets(fwd, *probe);
  auto task = write_backward(b, file, name, fwd_name, fwd, t, o);
  if (task && probe->verdict == GradProbe::Verdict::kUnknown)
    task->notes.push_back("the forward does not run on the meta device (" + probe->error +
                          "): gradients of every floating-point input and parameter");
  out.task = std::move(task);
  return out;
}

}  // namespace kevo::interop
